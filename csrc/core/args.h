/*
 * args.h: the positional-argument count check of every METH_FASTCALL function of torchtally's
 * three extensions (the kernel methods of binding.c, torchtally._C_cuda's check / discard,
 * torchtally._nccl's calls), so that a wrong count reads the same everywhere, and the type name
 * their messages give for a wrong argument. Header-only, so that torchtally._nccl links nothing
 * of the others.
 *
 * The extensions are built against CPython's limited API of Python 3.10 (setup.py defines
 * Py_LIMITED_API), so that one abi3 wheel serves every Python from 3.10 on: no struct access
 * (Py_TYPE(o)->tp_name: TT_TYPE_NAME below), no PyTuple_SET_ITEM / PyBytes_AS_STRING macros, no
 * vectorcall (PyObject_Vectorcall* enter the stable ABI in 3.12).
 */
#ifndef TT_ARGS_H
#define TT_ARGS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* Raises the TypeError of tt_check_nargs; returns -1. (Inline only so that a file that includes
 * this header without calling it gets no unused-function warning.) */
static inline int tt_nargs_error(const char *fname, Py_ssize_t nargs, Py_ssize_t least,
                                 Py_ssize_t most, const char *first)
{
    char takes[64];
    if (least == most)
        PyOS_snprintf(takes, sizeof takes, "%zd", most);
    else
        PyOS_snprintf(takes, sizeof takes, "%zd to %zd", least, most);
    if (first != NULL)
        PyErr_Format(PyExc_TypeError, "%s() takes %s positional arguments (%s, ...), got %zd",
                     fname, takes, first, nargs);
    else
        PyErr_Format(PyExc_TypeError, "%s() takes %s positional arguments, got %zd", fname, takes,
                     nargs);
    return -1;
}

/* 0 when least <= nargs <= most; else -1 with a TypeError "<fname>() takes <least> [to <most>]
 * positional arguments [(<first>, ...)], got <nargs>" (`first`, the first argument's name, may
 * be NULL). */
static inline int tt_check_nargs(const char *fname, Py_ssize_t nargs, Py_ssize_t least,
                                 Py_ssize_t most, const char *first)
{
    if (nargs >= least && nargs <= most)
        return 0;
    return tt_nargs_error(fname, nargs, least, most, first);
}

/* type(obj)'s name as CPython's own messages give it (its tp_name, which the limited API hides):
 * "module.Name" for a type defined in C outside builtins ("numpy.ndarray"), the bare name for a
 * builtin ("int") or a class statement's type ("Tensor"). Written into buf (cut to size); returns
 * buf. Never fails: a type without a readable __name__ reads "?", and no exception is left. Call it
 * before setting the error it goes into. */
static inline const char *tt_type_name(PyObject *obj, char *buf, size_t size)
{
    PyTypeObject *type = Py_TYPE(obj);
    PyObject *name = PyObject_GetAttrString((PyObject *)type, "__name__");
    PyObject *module = NULL;
    if (name != NULL && !(PyType_GetFlags(type) & Py_TPFLAGS_HEAPTYPE))
        module = PyObject_GetAttrString((PyObject *)type, "__module__");
    const char *name_text = name != NULL ? PyUnicode_AsUTF8AndSize(name, NULL) : NULL;
    const char *module_text = module != NULL ? PyUnicode_AsUTF8AndSize(module, NULL) : NULL;
    if (name_text == NULL)
        PyOS_snprintf(buf, size, "?");
    else if (module_text == NULL || strcmp(module_text, "builtins") == 0)
        PyOS_snprintf(buf, size, "%s", name_text);
    else
        PyOS_snprintf(buf, size, "%s.%s", module_text, name_text);
    Py_XDECREF(module);
    Py_XDECREF(name);
    PyErr_Clear(); /* a failed lookup above; the name read "?" */
    return buf;
}

/* tt_type_name(obj) in a buffer that lives until the end of the enclosing block: for one message
 * ("got %s", TT_TYPE_NAME(obj)). */
#define TT_TYPE_NAME(obj) tt_type_name((obj), (char[128]){0}, 128)

#endif /* TT_ARGS_H */
