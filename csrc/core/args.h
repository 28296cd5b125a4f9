/*
 * args.h: the positional-argument count check of every METH_FASTCALL function of torchtally's
 * three extensions (the kernel methods of binding.c, torchtally._C_cuda's check / discard,
 * torchtally._nccl's calls), so that a wrong count reads the same everywhere. Header-only, so
 * that torchtally._nccl links nothing of the others.
 */
#ifndef TT_ARGS_H
#define TT_ARGS_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

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

#endif /* TT_ARGS_H */
