/*
 * binding.c: a kernel method's call from Python, for torchtally._C and torchtally._C_cuda (see
 * binding.h): METH_FASTCALL arguments -> tt_args, the kernel without the GIL, and the one place
 * where a kernel's status becomes a Python exception. Every DLPack borrow a call takes is
 * released before it returns, on every path.
 */
#include "core/binding.h"
#include "core/args.h"

static int parse_int(PyObject *obj, const char *name, int64_t *out)
{
    if (!PyLong_Check(obj) || PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected an int, got %s", name, TT_TYPE_NAME(obj));
        return -1;
    }
    const long long value = PyLong_AsLongLong(obj);
    if (value == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_ValueError, "%s: expected an int64, got %R", name, obj);
        return -1;
    }
    *out = value;
    return 0;
}

static int parse_arg(tt_dlpack_cache *cache, const tt_arg_spec *spec, PyObject *obj, int i,
                     tt_args *a)
{
    switch (spec->kind) {
    case TT_ARG_OPT_TENSOR:
        if (obj == Py_None)
            return 0;
        /* fall through */
    case TT_ARG_TENSOR:
    case TT_ARG_OUT_TENSOR:
        if (tt_view_from_object(cache, obj, spec->name, &a->views[i], &a->borrows[i]) < 0)
            return -1;
        a->tensor[i] = &a->views[i];
        if (spec->kind == TT_ARG_OUT_TENSOR && a->borrows[i].read_only) {
            PyErr_Format(PyExc_ValueError,
                         "%s: expected a writable tensor, got a read-only DLPack export",
                         spec->name);
            return -1; /* the caller releases the borrows parsed so far, this one included */
        }
        return 0;
    case TT_ARG_OPT_INT:
        if (obj == Py_None)
            return 0;
        if (parse_int(obj, spec->name, &a->ints[i]) < 0)
            return -1;
        a->opt_int[i] = &a->ints[i];
        return 0;
    case TT_ARG_INT: return parse_int(obj, spec->name, &a->ints[i]);
    case TT_ARG_OPT_FLOAT:
        if (obj == Py_None)
            return 0;
        a->opt_float[i] = &a->floats[i];
        /* fall through */
    case TT_ARG_FLOAT:
        if (!PyFloat_Check(obj) && !(PyLong_Check(obj) && !PyBool_Check(obj))) {
            PyErr_Format(PyExc_TypeError, "%s: expected a float%s, got %s", spec->name,
                         spec->kind == TT_ARG_OPT_FLOAT ? " or None" : "", TT_TYPE_NAME(obj));
            return -1;
        }
        a->floats[i] = PyFloat_AsDouble(obj);
        return a->floats[i] == -1.0 && PyErr_Occurred() ? -1 : 0;
    case TT_ARG_BOOL: {
        const int truth = PyObject_IsTrue(obj);
        if (truth < 0)
            return -1;
        a->ints[i] = truth;
        return 0;
    }
    }
    return 0;
}

/* The bodies of the exported functions below are file-static (and args_parse `inline`), so that
 * tt_call_kernel, the whole call of torchtally._C, has them inlined: an exported function of a
 * shared object is called through the PLT, even from its own file. */

static void args_release(tt_args *a)
{
    for (Py_ssize_t i = 0; i < a->n; i++)
        tt_borrow_release(&a->borrows[i]);
}

static inline int args_parse(tt_dlpack_cache *cache, const tt_kernel_spec *spec,
                             PyObject *const *args, Py_ssize_t nargs, tt_args *a)
{
    Py_ssize_t least = spec->nargs; /* trailing optional floats may be left out */
    while (least > 0 && spec->args[least - 1].kind == TT_ARG_OPT_FLOAT)
        least--;
    if (tt_check_nargs(spec->name, nargs, least, spec->nargs, spec->args[0].name) < 0)
        return -1;
    memset(a, 0, sizeof *a);
    a->n = nargs; /* the borrows are in the first nargs slots; the rest stay zeroed (None) */
    for (Py_ssize_t i = 0; i < nargs; i++) {
        if (parse_arg(cache, &spec->args[i], args[i], (int)i, a) < 0) {
            args_release(a);
            return -1;
        }
    }
    return 0;
}

static tt_status run_without_gil(const tt_kernel_spec *spec, const void *ctx, const tt_args *a,
                                 tt_error *err)
{
    tt_status status;
    Py_BEGIN_ALLOW_THREADS status = spec->run(ctx, a, err);
    Py_END_ALLOW_THREADS return status;
}

void tt_raise_status(const tt_error *err)
{
    PyObject *type = err->status == TT_ETYPE    ? PyExc_TypeError
                     : err->status == TT_ENOMEM ? PyExc_MemoryError
                     : err->status == TT_ECUDA  ? PyExc_RuntimeError
                                                : PyExc_ValueError;
    PyErr_SetString(type, err->message);
}

static PyObject *args_finish(const tt_kernel_spec *spec, tt_args *a, tt_status status,
                             tt_error *err)
{
    PyObject *result = NULL;
    if (status == TT_OK) {
        result = Py_NewRef(Py_None);
    } else {
        if (err->status == TT_OK) /* a kernel must fill err; never raise without a message */
            tt_fail_message(err, status, spec->name, "failed without a message");
        tt_raise_status(err);
    }
    args_release(a);
    return result;
}

PyObject *tt_call_kernel(tt_dlpack_cache *cache, const tt_kernel_spec *spec, const void *ctx,
                         PyObject *const *args, Py_ssize_t nargs)
{
    tt_args a;
    if (args_parse(cache, spec, args, nargs, &a) < 0)
        return NULL;
    tt_error err = {TT_OK, {0}};
    const tt_status status = run_without_gil(spec, ctx, &a, &err);
    return args_finish(spec, &a, status, &err);
}

int tt_args_parse(tt_dlpack_cache *cache, const tt_kernel_spec *spec, PyObject *const *args,
                  Py_ssize_t nargs, tt_args *a)
{
    return args_parse(cache, spec, args, nargs, a);
}

void tt_args_release(tt_args *a) { args_release(a); }

tt_status tt_run_without_gil(const tt_kernel_spec *spec, const void *ctx, const tt_args *a,
                             tt_error *err)
{
    return run_without_gil(spec, ctx, a, err);
}

PyObject *tt_args_finish(const tt_kernel_spec *spec, tt_args *a, tt_status status, tt_error *err)
{
    return args_finish(spec, a, status, err);
}

PyObject *tt_use_exchange_api(tt_dlpack_cache *cache, PyObject *flag)
{
    const int previous = cache->use_exchange;
    const int truth = PyObject_IsTrue(flag);
    if (truth < 0)
        return NULL;
    cache->use_exchange = truth;
    return PyBool_FromLong(previous);
}
