/*
 * module.c: torchtally._C, the Python binding of the C kernels (csrc/kernels/). The module
 * (PEP 489 multi-phase init, state holding the DLPack cache), a thunk per kernel method, and
 * the introspection the tests use (DLPack struct layout, what is read from a tensor). Argument
 * parsing, the GIL release around the kernel, status -> exception and the release of every
 * DLPack borrow are binding.c's, shared with torchtally._C_cuda; the methods and their
 * arguments are listed once, in binding.h (TT_KERNELS).
 */
#include <stddef.h>

#include "core/binding.h"
#include "core/module_def.h"
#include "cpu/host_kernels.h"
#include "kernels/binned.h"
#include "kernels/confmat.h"
#include "kernels/moments.h"
#include "kernels/simd.h"
#include "kernels/topk.h"

typedef struct {
    tt_dlpack_cache dlpack;
} module_state;

static module_state *get_state(PyObject *module) { return PyModule_GetState(module); }

/* ---- the kernels: a thunk per method of TT_KERNELS (binding.h) ------------------------------ */

static tt_status run_confmat_labels(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_confmat_labels(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4],
                             err);
}
static tt_status run_confmat_scores(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_confmat_scores(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4],
                             err);
}
static tt_status run_confmat_threshold(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_confmat_threshold(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3],
                                a->opt_int[4], a->floats[5], a->opt_float[6], err);
}
static tt_status run_binned_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_binned_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4],
                            a->tensor[5], (int)a->ints[6], err);
}
static tt_status run_topk_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_topk_update(a->tensor[0], a->tensor[1], a->tensor[2], a->tensor[3], a->opt_int[4],
                          a->ints[5], err);
}
static tt_status run_moments_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_moments_update(a->tensor[0], a->tensor[1], a->tensor[2], err);
}
static tt_status run_moments_merge(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_moments_merge(a->tensor[0], a->tensor[1], err);
}
static tt_status run_comoments_update(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_comoments_update(a->tensor[0], a->tensor[1], a->tensor[2], err);
}
static tt_status run_comoments_merge(const void *ctx, const tt_args *a, tt_error *err)
{
    return tt_comoments_merge(a->tensor[0], a->tensor[1], err);
}

/* The CPU kernels need nothing but their arguments: the whole call is binding.c's. */
static PyObject *call_kernel(PyObject *module, const tt_kernel_spec *spec, PyObject *const *args,
                             Py_ssize_t nargs)
{
    return tt_call_kernel(&get_state(module)->dlpack, spec, NULL, args, nargs);
}

TT_KERNELS(TT_DEFINE_KERNEL)

/* ---- CPU-only methods (host_kernels.h) ------------------------------------------------------ */

TT_CPU_KERNELS(TT_DEFINE_KERNEL)

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
    int rc = LAYOUT(tt_DLPackVersion, "DLPackVersion") |
             FIELD(tt_DLPackVersion, "DLPackVersion", major) |
             FIELD(tt_DLPackVersion, "DLPackVersion", minor) | LAYOUT(tt_DLDevice, "DLDevice") |
             FIELD(tt_DLDevice, "DLDevice", device_type) |
             FIELD(tt_DLDevice, "DLDevice", device_id) | LAYOUT(tt_DLDataType, "DLDataType") |
             FIELD(tt_DLDataType, "DLDataType", code) | FIELD(tt_DLDataType, "DLDataType", bits) |
             FIELD(tt_DLDataType, "DLDataType", lanes) | LAYOUT(tt_DLTensor, "DLTensor") |
             FIELD(tt_DLTensor, "DLTensor", data) | FIELD(tt_DLTensor, "DLTensor", device) |
             FIELD(tt_DLTensor, "DLTensor", ndim) | FIELD(tt_DLTensor, "DLTensor", dtype) |
             FIELD(tt_DLTensor, "DLTensor", shape) | FIELD(tt_DLTensor, "DLTensor", strides) |
             FIELD(tt_DLTensor, "DLTensor", byte_offset) |
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
        PyTuple_SetItem(t, i, v);
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
        PyErr_Format(PyExc_ValueError, "tensor: expected at most %d dimensions, got %d",
                     TT_MAX_NDIM, (int)t.ndim);
        goto done;
    }
    for (int d = 0; d < t.ndim; d++) /* NULL strides (compact row-major) are reported as such */
        strides[d] = t.strides ? t.strides[d] : 0;
    shape = int_tuple(t.shape, t.ndim);
    stride_tuple = t.strides ? int_tuple(strides, t.ndim) : Py_NewRef(Py_None);
    if (shape && stride_tuple)
        info =
            Py_BuildValue("{s:i,s:i,s:i,s:i,s:i,s:i,s:O,s:O,s:K,s:K,s:s,s:O}", "device_type",
                          (int)t.device.device_type, "device_id", (int)t.device.device_id, "code",
                          (int)t.dtype.code, "bits", (int)t.dtype.bits, "lanes", (int)t.dtype.lanes,
                          "ndim", (int)t.ndim, "shape", shape, "strides", stride_tuple,
                          "byte_offset", (unsigned long long)t.byte_offset, "data_ptr",
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
    return tt_use_exchange_api(&get_state(m)->dlpack, flag);
}

/* Test-only: the kernels' SIMD level (kernels/simd.h), to run each path on the same inputs. */
static PyObject *py_simd_level(PyObject *m, PyObject *unused)
{
    return Py_BuildValue("(ii)", (int)tt_simd_level(), (int)tt_simd_max());
}

static PyObject *py_set_simd_level(PyObject *m, PyObject *arg)
{
    const long level = PyLong_AsLong(arg);
    if (level == -1 && PyErr_Occurred())
        return NULL;
    const int previous = level >= 0 && level <= 2 ? tt_simd_set((int)level) : -1;
    if (previous < 0)
        return PyErr_Format(PyExc_ValueError,
                            "level: expected 0 (scalar) to %d (the widest this CPU runs), got %ld",
                            (int)tt_simd_max(), level);
    return PyLong_FromLong(previous);
}

/* ---- module --------------------------------------------------------------------------------- */

static PyMethodDef module_methods[] = {
    TT_KERNELS(TT_KERNEL_METHOD) TT_CPU_KERNELS(TT_KERNEL_METHOD){
        "dlpack_layout", py_dlpack_layout, METH_NOARGS, "Sizes and offsets of the DLPack structs."},
    {"dlpack_info", py_dlpack_info, METH_O, "What the C core reads from a tensor."},
    {"_use_exchange_api", py_use_exchange_api, METH_O,
     "Turn the DLPack C exchange path on or off; returns the previous setting."},
    {"_simd_level", py_simd_level, METH_NOARGS,
     "Test-only: (level in use, widest level available); 0 scalar, 1 SSE2, 2 AVX2."},
    {"_set_simd_level", py_set_simd_level, METH_O,
     "Test-only: run the kernels at this SIMD level; returns the previous one."},
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

TT_MODULE_DEF("torchtally._C", "torchtally's C kernels; the contract is csrc/API.md.",
              module_state);

PyMODINIT_FUNC PyInit__C(void) { return PyModuleDef_Init(&module_def); }
