/*
 * module_cuda.c: torchtally._C_cuda, the Python binding of the CUDA kernels. The same methods,
 * positional arguments and exceptions as torchtally._C (csrc/API.md), for CUDA tensors: every
 * tensor must sit on the CUDA device of `out` / `state`, and the kernels run on torch's current
 * stream of that device.
 *
 * A call parses its arguments into tt_views (binding.c and tensor.c, shared with torchtally._C:
 * the same parsing, messages and exceptions, plus RuntimeError for a CUDA failure), validates
 * them with the GIL held (launch.c's check-only pass makes no CUDA call), asks torch for its
 * current stream (the DLPack exchange table's current_work_stream, else
 * torch.cuda.current_stream), then runs with the GIL released. Importing this module makes no
 * CUDA call: cudart is linked statically and loads the driver on first use, so the import works
 * on a machine without one.
 */
#include <stddef.h>

#include "../binding.h"
#include "../module_def.h"
#include "launch.h"

#ifndef TT_CUDA_ARCH_LIST
#define TT_CUDA_ARCH_LIST "unknown"
#endif

typedef struct {
    tt_dlpack_cache dlpack;
    PyObject *current_stream; /* torch.cuda.current_stream, looked up on first need */
} module_state;

static module_state *get_state(PyObject *module) { return PyModule_GetState(module); }

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

/* Validation (check-only, with the GIL), torch's current stream, then the kernels without the
 * GIL; binding.c parses, raises and releases. */
static PyObject *call_kernel(PyObject *module, const tt_kernel_spec *spec, PyObject *const *args,
                             Py_ssize_t nargs)
{
    module_state *st = get_state(module);
    tt_args a;
    if (tt_args_parse(&st->dlpack, spec, args, nargs, &a) < 0)
        return NULL;
    tt_error err = {TT_OK, {0}};
    tt_cuda_ctx ctx = {1, NULL};
    tt_status status = spec->run(&ctx, &a, &err); /* validation only, with the GIL */
    if (status == TT_OK) {
        if (current_stream(st, args[0], (int)a.tensor[0]->device_id, &ctx.stream) < 0) {
            tt_args_release(&a);
            return NULL;
        }
        ctx.check_only = 0;
        status = tt_run_without_gil(spec, &ctx, &a, &err);
    }
    return tt_args_finish(spec, &a, status, &err);
}

/* ---- the kernels: a thunk per method of TT_KERNELS (binding.h) ------------------------------ */

static tt_status run_confmat_labels(const void *c, const tt_args *a, tt_error *e)
{
    return tt_cuda_confmat_labels(c, a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4], e);
}
static tt_status run_confmat_scores(const void *c, const tt_args *a, tt_error *e)
{
    return tt_cuda_confmat_scores(c, a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4], e);
}
static tt_status run_confmat_threshold(const void *c, const tt_args *a, tt_error *e)
{
    return tt_cuda_confmat_threshold(c, a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3],
                                     a->opt_int[4], a->floats[5], e);
}
static tt_status run_binned_update(const void *c, const tt_args *a, tt_error *e)
{
    return tt_cuda_binned_update(c, a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3],
                                 a->opt_int[4], a->tensor[5], (int)a->ints[6], e);
}
static tt_status run_topk_update(const void *c, const tt_args *a, tt_error *e)
{
    return tt_cuda_topk_update(c, a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4],
                               a->ints[5], e);
}
static tt_status run_moments_update(const void *c, const tt_args *a, tt_error *e)
{
    return tt_cuda_moments_update(c, a->tensor[0], a->tensor[1], a->tensor[2], e);
}
static tt_status run_moments_merge(const void *c, const tt_args *a, tt_error *e)
{
    return tt_cuda_moments_merge(c, a->tensor[0], a->tensor[1], e);
}
static tt_status run_comoments_update(const void *c, const tt_args *a, tt_error *e)
{
    return tt_cuda_comoments_update(c, a->tensor[0], a->tensor[1], a->tensor[2], e);
}
static tt_status run_comoments_merge(const void *c, const tt_args *a, tt_error *e)
{
    return tt_cuda_comoments_merge(c, a->tensor[0], a->tensor[1], e);
}

TT_KERNELS(TT_DEFINE_KERNEL)

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
    return tt_use_exchange_api(&get_state(m)->dlpack, flag);
}

/* ---- module --------------------------------------------------------------------------------- */

static PyMethodDef module_methods[] = {
    TT_KERNELS(TT_KERNEL_METHOD)
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

TT_MODULE_DEF("torchtally._C_cuda",
              "torchtally's CUDA kernels; the contract is csrc/API.md (CUDA tensors).", module_state);

PyMODINIT_FUNC PyInit__C_cuda(void) { return PyModuleDef_Init(&module_def); }
