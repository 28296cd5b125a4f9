/*
 * module.c: torchtally._C_cuda, the Python binding of the CUDA kernels. The same methods,
 * positional arguments and exceptions as torchtally._C (csrc/API.md), for CUDA tensors: every
 * tensor must sit on the CUDA device of `out` / `state`, and the kernels run on torch's current
 * stream of that device.
 *
 * A call parses its arguments into tt_views (binding.c and tensor.c, shared with torchtally._C:
 * the same parsing, messages and exceptions, plus RuntimeError for a CUDA failure), validates
 * them with the GIL held (the check-only pass of launch_count.c / launch_moments.c makes no CUDA
 * call), asks torch for its current stream (the DLPack exchange table's current_work_stream,
 * else torch.cuda.current_stream), then runs with the GIL released. Importing this module makes no
 * CUDA call: cudart is linked statically and loads the driver on first use, so the import works
 * on a machine without one.
 */
#include <stddef.h>

#include "core/args.h"
#include "core/binding.h"
#include "core/module_def.h"
#include "cuda/launch.h"

#ifndef TT_CUDA_ARCH_LIST
#define TT_CUDA_ARCH_LIST "unknown"
#endif

typedef struct {
    tt_dlpack_cache dlpack;
    PyObject *current_stream; /* torch.cuda.current_stream, looked up on first need */
    int immediate;            /* set_immediate_checks: raise a bad batch at its own call */
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
    tt_cuda_ctx ctx = {1, st->immediate, NULL};
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
                                     a->opt_int[4], a->floats[5], a->opt_float[6], e);
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

/* ---- error checks ------------------------------------------------------------------------- */

static PyObject *py_set_immediate_checks(PyObject *m, PyObject *flag)
{
    module_state *st = get_state(m);
    const int previous = st->immediate, truth = PyObject_IsTrue(flag);
    if (truth < 0)
        return NULL;
    st->immediate = truth;
    return PyBool_FromLong(previous);
}

/* (device, data_ptr, nbytes) from the first three arguments: a CUDA device index and the span
 * of a state's memory (data_ptr 0: every state of the device). */
static int parse_state(const char *fname, PyObject *const *args, Py_ssize_t nargs,
                       Py_ssize_t expected, int *device, void **begin, size_t *bytes)
{
    if (tt_check_nargs(fname, nargs, expected, expected, NULL) < 0)
        return -1;
    const long d = PyLong_AsLong(args[0]);
    if (d == -1 && PyErr_Occurred())
        return -1;
    if (d < 0 || d > 0xffff) {
        PyErr_Format(PyExc_ValueError, "device: expected a CUDA device index, got %ld", d);
        return -1;
    }
    *device = (int)d;
    *begin = PyLong_AsVoidPtr(args[1]);
    if (*begin == NULL && PyErr_Occurred())
        return -1;
    *bytes = PyLong_AsSize_t(args[2]);
    if (*bytes == (size_t)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "nbytes: expected an int >= 0, got %R", args[2]);
        return -1;
    }
    return 0;
}

static PyObject *py_check(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    int device, wait;
    void *begin;
    size_t bytes;
    if (parse_state("check", args, nargs, 4, &device, &begin, &bytes) < 0 ||
        (wait = PyObject_IsTrue(args[3])) < 0)
        return NULL;
    tt_error err = {TT_OK, {0}};
    tt_status status;
    Py_BEGIN_ALLOW_THREADS
    status = tt_cuda_check(device, begin, bytes, wait, &err);
    Py_END_ALLOW_THREADS
    if (status != TT_OK) {
        tt_raise_status(&err);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *py_discard(PyObject *m, PyObject *const *args, Py_ssize_t nargs)
{
    int device;
    void *begin;
    size_t bytes;
    if (parse_state("discard", args, nargs, 3, &device, &begin, &bytes) < 0)
        return NULL;
    tt_cuda_discard(device, begin, bytes);
    Py_RETURN_NONE;
}

/* ---- module --------------------------------------------------------------------------------- */

static PyMethodDef module_methods[] = {
    TT_KERNELS(TT_KERNEL_METHOD)
    {"build_info", py_build_info, METH_NOARGS,
     "dict(cudart=CUDA runtime version built against, arch=target list, driver=installed driver "
     "version or 0)."},
    {"set_immediate_checks", py_set_immediate_checks, METH_O,
     "set_immediate_checks(flag) -> previous flag. True: an update waits for its own error check "
     "and raises at the call (one host synchronisation per update); False (default): a rejected "
     "batch, undone on the device, raises at the next update into the same state or at check()."},
    {"check", (PyCFunction)(void (*)(void))py_check, METH_FASTCALL,
     "check(device, data_ptr, nbytes, wait): raise the oldest rejected update into the state at "
     "[data_ptr, data_ptr + nbytes) on cuda:device (data_ptr 0: any state), waiting for its "
     "updates first when `wait`."},
    {"discard", (PyCFunction)(void (*)(void))py_discard, METH_FASTCALL,
     "discard(device, data_ptr, nbytes): forget the updates into that state (it was reset)."},
    {"_use_exchange_api", py_use_exchange_api, METH_O,
     "Turn the DLPack C exchange path (tensors and stream) on or off; returns the previous setting."},
    {NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *module)
{
    module_state *st = get_state(module);
    st->current_stream = NULL;
    st->immediate = 0;
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
