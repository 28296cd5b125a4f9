/*
 * module.c: torchtally._C. Multi-phase module init (PEP 489), the method table, argument
 * parsing for METH_FASTCALL, and the one place where a kernel's status becomes a Python
 * exception. Each method is described by a kernel_spec (its argument names and kinds, and a
 * thunk that calls the kernel); call_kernel parses, releases the GIL around the kernel, and
 * releases every DLPack borrow on every path.
 */
#include <stddef.h>

#include "tensor.h"
#include "kernels/binned.h"
#include "kernels/confmat.h"
#include "kernels/moments.h"
#include "kernels/topk.h"

#define MAX_ARGS 8

typedef struct {
    tt_dlpack_cache dlpack;
} module_state;

static module_state *get_state(PyObject *module) { return PyModule_GetState(module); }

/* ---- argument parsing ----------------------------------------------------------------------- */

typedef enum {
    ARG_TENSOR,       /* required tensor */
    ARG_OPT_TENSOR,   /* tensor or None */
    ARG_OPT_INT,      /* int or None */
    ARG_INT,          /* int */
    ARG_FLOAT,        /* float or int */
    ARG_BOOL,         /* anything with a truth value */
} arg_kind;

typedef struct {
    const char *name;
    arg_kind kind;
} arg_spec;

typedef struct {
    tt_view views[MAX_ARGS];
    const tt_view *tensor[MAX_ARGS]; /* NULL for None */
    tt_borrow borrows[MAX_ARGS];
    int64_t ints[MAX_ARGS];
    const int64_t *opt_int[MAX_ARGS]; /* NULL for None */
    double floats[MAX_ARGS];
} parsed_args;

typedef tt_status (*kernel_thunk)(const parsed_args *a, tt_error *err);

typedef struct {
    const char *name;
    const arg_spec *args;
    Py_ssize_t nargs;
    kernel_thunk run;
} kernel_spec;

static int parse_int(PyObject *obj, const char *name, int64_t *out)
{
    if (!PyLong_Check(obj) || PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected an int, got %s", name, Py_TYPE(obj)->tp_name);
        return -1;
    }
    long long value = PyLong_AsLongLong(obj);
    if (value == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_ValueError, "%s: expected an int64, got %R", name, obj);
        return -1;
    }
    *out = value;
    return 0;
}

static int parse_arg(module_state *st, const arg_spec *spec, PyObject *obj, int i, parsed_args *a)
{
    switch (spec->kind) {
    case ARG_OPT_TENSOR:
        if (obj == Py_None)
            return 0;
        /* fall through */
    case ARG_TENSOR:
        if (tt_view_from_object(&st->dlpack, obj, spec->name, &a->views[i], &a->borrows[i]) < 0)
            return -1;
        a->tensor[i] = &a->views[i];
        return 0;
    case ARG_OPT_INT:
        if (obj == Py_None)
            return 0;
        if (parse_int(obj, spec->name, &a->ints[i]) < 0)
            return -1;
        a->opt_int[i] = &a->ints[i];
        return 0;
    case ARG_INT:
        return parse_int(obj, spec->name, &a->ints[i]);
    case ARG_FLOAT:
        if (!PyFloat_Check(obj) && !(PyLong_Check(obj) && !PyBool_Check(obj))) {
            PyErr_Format(PyExc_TypeError, "%s: expected a float, got %s", spec->name,
                         Py_TYPE(obj)->tp_name);
            return -1;
        }
        a->floats[i] = PyFloat_AsDouble(obj);
        return a->floats[i] == -1.0 && PyErr_Occurred() ? -1 : 0;
    case ARG_BOOL: {
        int truth = PyObject_IsTrue(obj);
        if (truth < 0)
            return -1;
        a->ints[i] = truth;
        return 0;
    }
    }
    return 0;
}

static PyObject *raise_status(const tt_error *err)
{
    PyObject *type = err->status == TT_ETYPE    ? PyExc_TypeError
                     : err->status == TT_ENOMEM ? PyExc_MemoryError
                                                : PyExc_ValueError;
    PyErr_SetString(type, err->message);
    return NULL;
}

static PyObject *call_kernel(PyObject *module, const kernel_spec *spec, PyObject *const *args,
                             Py_ssize_t nargs)
{
    if (nargs != spec->nargs) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd positional arguments (%s, ...), got %zd",
                     spec->name, spec->nargs, spec->args[0].name, nargs);
        return NULL;
    }
    module_state *st = get_state(module);
    parsed_args a;
    memset(&a, 0, sizeof a);
    PyObject *result = NULL;
    for (Py_ssize_t i = 0; i < nargs; i++)
        if (parse_arg(st, &spec->args[i], args[i], (int)i, &a) < 0)
            goto done;

    tt_error err = {TT_OK, {0}};
    tt_status status;
    Py_BEGIN_ALLOW_THREADS
    status = spec->run(&a, &err);
    Py_END_ALLOW_THREADS
    if (status != TT_OK) {
        if (err.status == TT_OK) /* a kernel must fill err; never raise without a message */
            tt_fail(&err, status, spec->name, "failed without a message");
        raise_status(&err);
        goto done;
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    for (Py_ssize_t i = 0; i < nargs; i++)
        tt_borrow_release(&a.borrows[i]);
    return result;
}

/* ---- the kernels ---------------------------------------------------------------------------- */

#define LABEL_ARGS(first)                                                                      \
    {first, ARG_TENSOR}, {"preds", ARG_TENSOR}, {"target", ARG_TENSOR},                        \
        {"mask", ARG_OPT_TENSOR}, {"ignore_index", ARG_OPT_INT}

static const arg_spec confmat_args[] = {LABEL_ARGS("out")};
static const arg_spec threshold_args[] = {LABEL_ARGS("out"), {"threshold", ARG_FLOAT}};
static const arg_spec binned_args[] = {LABEL_ARGS("out"), {"thresholds", ARG_TENSOR},
                                       {"uniform", ARG_BOOL}};
static const arg_spec topk_args[] = {LABEL_ARGS("out"), {"k", ARG_INT}};
static const arg_spec moments_args[] = {{"state", ARG_TENSOR}, {"x", ARG_TENSOR},
                                        {"weights", ARG_OPT_TENSOR}};
static const arg_spec comoments_args[] = {{"state", ARG_TENSOR}, {"x", ARG_TENSOR},
                                          {"y", ARG_TENSOR}};
static const arg_spec merge_args[] = {{"state", ARG_TENSOR}, {"other", ARG_TENSOR}};

static tt_status run_confmat_labels(const parsed_args *a, tt_error *err)
{
    return tt_confmat_labels(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4], err);
}
static tt_status run_confmat_scores(const parsed_args *a, tt_error *err)
{
    return tt_confmat_scores(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4], err);
}
static tt_status run_confmat_threshold(const parsed_args *a, tt_error *err)
{
    return tt_confmat_threshold(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3],
                                a->opt_int[4], a->floats[5], err);
}
static tt_status run_binned(const parsed_args *a, tt_error *err)
{
    return tt_binned_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4],
                            a->tensor[5], (int)a->ints[6], err);
}
static tt_status run_topk(const parsed_args *a, tt_error *err)
{
    return tt_topk_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4],
                          a->ints[5], err);
}
static tt_status run_moments(const parsed_args *a, tt_error *err)
{
    return tt_moments_update(a->tensor[0], a->tensor[1], a->tensor[2], err);
}
static tt_status run_moments_merge(const parsed_args *a, tt_error *err)
{
    return tt_moments_merge(a->tensor[0], a->tensor[1], err);
}
static tt_status run_comoments(const parsed_args *a, tt_error *err)
{
    return tt_comoments_update(a->tensor[0], a->tensor[1], a->tensor[2], err);
}
static tt_status run_comoments_merge(const parsed_args *a, tt_error *err)
{
    return tt_comoments_merge(a->tensor[0], a->tensor[1], err);
}

#define SPEC(fname, arg_table, thunk)                                                          \
    static const kernel_spec fname##_spec = {#fname, arg_table,                                \
                                             sizeof arg_table / sizeof arg_table[0], thunk};   \
    static PyObject *py_##fname(PyObject *m, PyObject *const *args, Py_ssize_t nargs)          \
    {                                                                                          \
        return call_kernel(m, &fname##_spec, args, nargs);                                     \
    }

SPEC(confmat_labels, confmat_args, run_confmat_labels)
SPEC(confmat_scores, confmat_args, run_confmat_scores)
SPEC(confmat_threshold, threshold_args, run_confmat_threshold)
SPEC(binned_update, binned_args, run_binned)
SPEC(topk_update, topk_args, run_topk)
SPEC(moments_update, moments_args, run_moments)
SPEC(moments_merge, merge_args, run_moments_merge)
SPEC(comoments_update, comoments_args, run_comoments)
SPEC(comoments_merge, merge_args, run_comoments_merge)

/* ---- introspection -------------------------------------------------------------------------- */

static int put_size(PyObject *dict, const char *key, size_t value)
{
    PyObject *v = PyLong_FromSize_t(value);
    int rc = v ? PyDict_SetItemString(dict, key, v) : -1;
    Py_XDECREF(v);
    return rc;
}

#define LAYOUT(type, name) put_size(d, name, sizeof(type))
#define FIELD(type, name, field) put_size(d, name "." #field, offsetof(type, field))

static PyObject *py_dlpack_layout(PyObject *m, PyObject *unused)
{
    PyObject *d = PyDict_New();
    if (d == NULL)
        return NULL;
    int rc = LAYOUT(tt_DLPackVersion, "DLPackVersion") | FIELD(tt_DLPackVersion, "DLPackVersion", major) |
             FIELD(tt_DLPackVersion, "DLPackVersion", minor) | LAYOUT(tt_DLDevice, "DLDevice") |
             FIELD(tt_DLDevice, "DLDevice", device_type) | FIELD(tt_DLDevice, "DLDevice", device_id) |
             LAYOUT(tt_DLDataType, "DLDataType") | FIELD(tt_DLDataType, "DLDataType", code) |
             FIELD(tt_DLDataType, "DLDataType", bits) | FIELD(tt_DLDataType, "DLDataType", lanes) |
             LAYOUT(tt_DLTensor, "DLTensor") | FIELD(tt_DLTensor, "DLTensor", data) |
             FIELD(tt_DLTensor, "DLTensor", device) | FIELD(tt_DLTensor, "DLTensor", ndim) |
             FIELD(tt_DLTensor, "DLTensor", dtype) | FIELD(tt_DLTensor, "DLTensor", shape) |
             FIELD(tt_DLTensor, "DLTensor", strides) | FIELD(tt_DLTensor, "DLTensor", byte_offset) |
             LAYOUT(tt_DLManagedTensor, "DLManagedTensor") |
             FIELD(tt_DLManagedTensor, "DLManagedTensor", dl_tensor) |
             FIELD(tt_DLManagedTensor, "DLManagedTensor", manager_ctx) |
             FIELD(tt_DLManagedTensor, "DLManagedTensor", deleter) |
             LAYOUT(tt_DLManagedTensorVersioned, "DLManagedTensorVersioned") |
             FIELD(tt_DLManagedTensorVersioned, "DLManagedTensorVersioned", version) |
             FIELD(tt_DLManagedTensorVersioned, "DLManagedTensorVersioned", manager_ctx) |
             FIELD(tt_DLManagedTensorVersioned, "DLManagedTensorVersioned", deleter) |
             FIELD(tt_DLManagedTensorVersioned, "DLManagedTensorVersioned", flags) |
             FIELD(tt_DLManagedTensorVersioned, "DLManagedTensorVersioned", dl_tensor);
    if (rc != 0) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *int_tuple(const int64_t *values, int n)
{
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t != NULL && i < n; i++) {
        PyObject *v = PyLong_FromLongLong(values[i]);
        if (v == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SET_ITEM(t, i, v);
    }
    return t;
}

static PyObject *py_dlpack_info(PyObject *m, PyObject *tensor)
{
    module_state *st = get_state(m);
    tt_DLTensor t;
    tt_borrow borrow;
    if (tt_dltensor_from_object(&st->dlpack, tensor, "tensor", &t, &borrow) < 0)
        return NULL;
    static const char *const paths[] = {"exchange", "versioned", "legacy"};
    int64_t strides[TT_MAX_NDIM];
    PyObject *info = NULL, *shape = NULL, *stride_tuple = NULL;
    if (t.ndim < 0 || t.ndim > TT_MAX_NDIM) {
        PyErr_Format(PyExc_ValueError, "tensor: expected at most %d dimensions, got %d", TT_MAX_NDIM,
                     (int)t.ndim);
        goto done;
    }
    for (int d = 0; d < t.ndim; d++) /* NULL strides (compact row-major) are reported as such */
        strides[d] = t.strides ? t.strides[d] : 0;
    shape = int_tuple(t.shape, t.ndim);
    stride_tuple = t.strides ? int_tuple(strides, t.ndim) : Py_NewRef(Py_None);
    if (shape && stride_tuple)
        info = Py_BuildValue("{s:i,s:i,s:i,s:i,s:i,s:i,s:O,s:O,s:K,s:K,s:s,s:O}",
                             "device_type", (int)t.device.device_type,
                             "device_id", (int)t.device.device_id, "code", (int)t.dtype.code,
                             "bits", (int)t.dtype.bits, "lanes", (int)t.dtype.lanes, "ndim",
                             (int)t.ndim, "shape", shape, "strides", stride_tuple, "byte_offset",
                             (unsigned long long)t.byte_offset, "data_ptr",
                             (unsigned long long)(uintptr_t)t.data, "path", paths[borrow.path],
                             "versioned", borrow.path == TT_PATH_LEGACY ? Py_False : Py_True);
done:
    Py_XDECREF(shape);
    Py_XDECREF(stride_tuple);
    tt_borrow_release(&borrow);
    return info;
}

static PyObject *py_use_exchange_api(PyObject *m, PyObject *flag)
{
    module_state *st = get_state(m);
    int previous = st->dlpack.use_exchange;
    int truth = PyObject_IsTrue(flag);
    if (truth < 0)
        return NULL;
    st->dlpack.use_exchange = truth;
    return PyBool_FromLong(previous);
}

/* ---- module --------------------------------------------------------------------------------- */

#define KERNEL(name, doc) {#name, (PyCFunction)(void (*)(void))py_##name, METH_FASTCALL, doc}

static PyMethodDef module_methods[] = {
    KERNEL(confmat_labels, "confmat_labels(out, preds, target, mask, ignore_index)"),
    KERNEL(confmat_scores, "confmat_scores(out, preds, target, mask, ignore_index)"),
    KERNEL(confmat_threshold, "confmat_threshold(out, preds, target, mask, ignore_index, threshold)"),
    KERNEL(binned_update, "binned_update(out, preds, target, mask, ignore_index, thresholds, uniform)"),
    KERNEL(topk_update, "topk_update(out, preds, target, mask, ignore_index, k)"),
    KERNEL(moments_update, "moments_update(state, x, weights)"),
    KERNEL(moments_merge, "moments_merge(state, other)"),
    KERNEL(comoments_update, "comoments_update(state, x, y)"),
    KERNEL(comoments_merge, "comoments_merge(state, other)"),
    {"dlpack_layout", py_dlpack_layout, METH_NOARGS, "Sizes and offsets of the DLPack structs."},
    {"dlpack_info", py_dlpack_info, METH_O, "What the C core reads from a tensor."},
    {"_use_exchange_api", py_use_exchange_api, METH_O,
     "Turn the DLPack C exchange path on or off; returns the previous setting."},
    {NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *module)
{
    return tt_dlpack_cache_init(&get_state(module)->dlpack);
}

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    module_state *st = get_state(module);
    if (st != NULL)
        Py_VISIT(st->dlpack.api_type);
    return 0;
}

static int module_clear(PyObject *module)
{
    module_state *st = get_state(module);
    if (st != NULL)
        tt_dlpack_cache_clear(&st->dlpack);
    return 0;
}

static void module_free(void *module) { module_clear((PyObject *)module); }

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "torchtally._C",
    .m_doc = "torchtally's C kernels; the contract is csrc/API.md.",
    .m_size = sizeof(module_state),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__C(void) { return PyModuleDef_Init(&module_def); }
