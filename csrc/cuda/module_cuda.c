/*
 * module_cuda.c: torchtally._C_cuda, the Python binding of the CUDA kernels. The same methods,
 * positional arguments and exceptions as torchtally._C (csrc/API.md), for CUDA tensors: every
 * tensor must sit on the CUDA device of `out` / `state`, and the kernels run on torch's current
 * stream of that device.
 *
 * A call parses its arguments into tt_views (tensor.c, shared with torchtally._C), validates
 * them with the GIL held (launch.c's check-only pass makes no CUDA call), asks torch for its
 * current stream (the DLPack exchange table's current_work_stream, else
 * torch.cuda.current_stream), then runs with the GIL released. Importing this module makes no
 * CUDA call: cudart is linked statically and loads the driver on first use, so the import works
 * on a machine without one.
 */
#include <stddef.h>

#include "../tensor.h"
#include "launch.h"

#define MAX_ARGS 8

#ifndef TT_CUDA_ARCH_LIST
#define TT_CUDA_ARCH_LIST "unknown"
#endif

typedef struct {
    tt_dlpack_cache dlpack;
    PyObject *current_stream; /* torch.cuda.current_stream, looked up on first need */
} module_state;

static module_state *get_state(PyObject *module) { return PyModule_GetState(module); }

/* ---- argument parsing (the kinds torchtally._C takes) ---------------------------------------- */

typedef enum { ARG_TENSOR, ARG_OPT_TENSOR, ARG_OPT_INT, ARG_INT, ARG_FLOAT, ARG_BOOL } arg_kind;

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

typedef tt_status (*kernel_thunk)(const tt_cuda_ctx *ctx, const parsed_args *a, tt_error *err);

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
    const long long value = PyLong_AsLongLong(obj);
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
        const int truth = PyObject_IsTrue(obj);
        if (truth < 0)
            return -1;
        a->ints[i] = truth;
        return 0;
    }
    }
    return 0;
}

static void raise_status(const tt_error *err)
{
    PyObject *type = err->status == TT_ETYPE    ? PyExc_TypeError
                     : err->status == TT_ENOMEM ? PyExc_MemoryError
                     : err->status == TT_ECUDA  ? PyExc_RuntimeError
                                                : PyExc_ValueError;
    PyErr_SetString(type, err->message);
}

/* ---- torch's current stream ----------------------------------------------------------------- */

static int current_stream(module_state *st, PyObject *out, int device, cudaStream_t *stream)
{
    const tt_DLPackExchangeAPI *api = st->dlpack.api;
    if (st->dlpack.use_exchange && api != NULL && st->dlpack.api_type == Py_TYPE(out) &&
        api->current_work_stream != NULL) {
        void *handle = NULL;
        if (api->current_work_stream(TT_DL_CUDA, device, &handle) == 0) {
            *stream = (cudaStream_t)handle;
            return 0;
        }
        PyErr_Clear(); /* ask torch.cuda instead */
    }
    PyObject *s = NULL, *handle = NULL;
    if (st->current_stream == NULL) {
        PyObject *torch_cuda = PyImport_ImportModule("torch.cuda");
        if (torch_cuda != NULL) {
            st->current_stream = PyObject_GetAttrString(torch_cuda, "current_stream");
            Py_DECREF(torch_cuda);
        }
    }
    if (st->current_stream != NULL)
        s = PyObject_CallFunction(st->current_stream, "i", device);
    if (s != NULL)
        handle = PyObject_GetAttrString(s, "cuda_stream");
    void *pointer = handle != NULL ? PyLong_AsVoidPtr(handle) : NULL;
    Py_XDECREF(s);
    Py_XDECREF(handle);
    if (PyErr_Occurred()) {
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        PyErr_Format(PyExc_RuntimeError,
                     "torchtally._C_cuda: could not get torch's current CUDA stream on cuda:%d: %S",
                     device, value != NULL ? value : Py_None);
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(traceback);
        return -1;
    }
    *stream = (cudaStream_t)pointer;
    return 0;
}

/* ---- the call ------------------------------------------------------------------------------- */

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
    tt_cuda_ctx ctx = {1, NULL};
    tt_status status = spec->run(&ctx, &a, &err); /* validation only, with the GIL */
    if (status == TT_OK) {
        if (current_stream(st, args[0], (int)a.tensor[0]->device_id, &ctx.stream) < 0)
            goto done;
        ctx.check_only = 0;
        Py_BEGIN_ALLOW_THREADS
        status = spec->run(&ctx, &a, &err);
        Py_END_ALLOW_THREADS
    }
    if (status != TT_OK) {
        if (err.status == TT_OK)
            tt_fail(&err, status, spec->name, "failed without a message");
        raise_status(&err);
        goto done;
    }
    result = Py_NewRef(Py_None);
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

typedef const tt_cuda_ctx *C;
typedef const parsed_args *A;

static tt_status run_confmat_labels(C c, A a, tt_error *e)
{
    return tt_cuda_confmat_labels(c, a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4], e);
}
static tt_status run_confmat_scores(C c, A a, tt_error *e)
{
    return tt_cuda_confmat_scores(c, a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4], e);
}
static tt_status run_confmat_threshold(C c, A a, tt_error *e)
{
    return tt_cuda_confmat_threshold(c, a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3],
                                     a->opt_int[4], a->floats[5], e);
}
static tt_status run_binned(C c, A a, tt_error *e)
{
    return tt_cuda_binned_update(c, a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3],
                                 a->opt_int[4], a->tensor[5], (int)a->ints[6], e);
}
static tt_status run_topk(C c, A a, tt_error *e)
{
    return tt_cuda_topk_update(c, a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4],
                               a->ints[5], e);
}
static tt_status run_moments(C c, A a, tt_error *e)
{
    return tt_cuda_moments_update(c, a->tensor[0], a->tensor[1], a->tensor[2], e);
}
static tt_status run_moments_merge(C c, A a, tt_error *e)
{
    return tt_cuda_moments_merge(c, a->tensor[0], a->tensor[1], e);
}
static tt_status run_comoments(C c, A a, tt_error *e)
{
    return tt_cuda_comoments_update(c, a->tensor[0], a->tensor[1], a->tensor[2], e);
}
static tt_status run_comoments_merge(C c, A a, tt_error *e)
{
    return tt_cuda_comoments_merge(c, a->tensor[0], a->tensor[1], e);
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

static PyObject *py_build_info(PyObject *m, PyObject *unused)
{
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) /* 0 when no driver is installed */
        driver = 0;
    return Py_BuildValue("{s:i,s:s,s:i}", "cudart", (int)CUDART_VERSION, "arch",
                         TT_CUDA_ARCH_LIST, "driver", driver);
}

static PyObject *py_use_exchange_api(PyObject *m, PyObject *flag)
{
    module_state *st = get_state(m);
    const int previous = st->dlpack.use_exchange;
    const int truth = PyObject_IsTrue(flag);
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
    {"build_info", py_build_info, METH_NOARGS,
     "dict(cudart=CUDA runtime version built against, arch=target list, driver=installed driver "
     "version or 0)."},
    {"_use_exchange_api", py_use_exchange_api, METH_O,
     "Turn the DLPack C exchange path (tensors and stream) on or off; returns the previous setting."},
    {NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *module)
{
    module_state *st = get_state(module);
    st->current_stream = NULL;
    return tt_dlpack_cache_init(&st->dlpack);
}

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    module_state *st = get_state(module);
    if (st != NULL) {
        Py_VISIT(st->dlpack.api_type);
        Py_VISIT(st->current_stream);
    }
    return 0;
}

static int module_clear(PyObject *module)
{
    module_state *st = get_state(module);
    if (st != NULL) {
        tt_dlpack_cache_clear(&st->dlpack);
        Py_CLEAR(st->current_stream);
    }
    return 0;
}

static void module_free(void *module) { module_clear((PyObject *)module); }

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "torchtally._C_cuda",
    .m_doc = "torchtally's CUDA kernels; the contract is csrc/API.md (CUDA tensors).",
    .m_size = sizeof(module_state),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__C_cuda(void) { return PyModuleDef_Init(&module_def); }
