/*
 * tensor.c: DLPack capsule or exchange table -> validated tt_view. See tensor.h for the two
 * paths and the ownership rules. Every failure sets a Python exception that names the argument
 * and leaves nothing to release.
 */
#include "core/tensor.h"
#include "core/args.h"

int tt_dlpack_cache_init(tt_dlpack_cache *cache)
{
    memset(cache, 0, sizeof *cache);
    cache->use_exchange = 1;
    cache->str_dlpack = PyUnicode_InternFromString("__dlpack__");
    cache->str_exchange = PyUnicode_InternFromString("__dlpack_c_exchange_api__");
    cache->no_args = PyTuple_New(0);
    cache->kwargs_max_version = Py_BuildValue("{s:(ii)}", "max_version", 1, 0);
    if (!cache->str_dlpack || !cache->str_exchange || !cache->no_args || !cache->kwargs_max_version)
        return -1;
    return 0;
}

void tt_dlpack_cache_clear(tt_dlpack_cache *cache)
{
    Py_CLEAR(cache->str_dlpack);
    Py_CLEAR(cache->str_exchange);
    Py_CLEAR(cache->no_args);
    Py_CLEAR(cache->kwargs_max_version);
    Py_CLEAR(cache->api_type);
    cache->api = NULL;
}

void tt_borrow_release(tt_borrow *borrow)
{
    /* A producer's deleter may run Python code (a ctypes callback, say): keep a pending
     * exception out of its way and put it back afterwards. */
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    if (borrow->versioned != NULL && borrow->versioned->deleter != NULL)
        borrow->versioned->deleter(borrow->versioned);
    if (borrow->legacy != NULL && borrow->legacy->deleter != NULL)
        borrow->legacy->deleter(borrow->legacy);
    borrow->versioned = NULL;
    borrow->legacy = NULL;
    PyErr_Restore(type, value, traceback);
}

static int dtype_from_dlpack(tt_DLDataType dt, tt_dtype *out)
{
    if (dt.lanes != 1)
        return -1;
    switch (dt.code) {
    case TT_DL_BOOL: *out = TT_BOOL; return dt.bits == 8 ? 0 : -1;
    case TT_DL_UINT: *out = TT_U8; return dt.bits == 8 ? 0 : -1;
    case TT_DL_INT:
        switch (dt.bits) {
        case 8: *out = TT_I8; return 0;
        case 16: *out = TT_I16; return 0;
        case 32: *out = TT_I32; return 0;
        case 64: *out = TT_I64; return 0;
        default: return -1;
        }
    case TT_DL_FLOAT:
        switch (dt.bits) {
        case 16: *out = TT_F16; return 0;
        case 32: *out = TT_F32; return 0;
        case 64: *out = TT_F64; return 0;
        default: return -1;
        }
    case TT_DL_BFLOAT: *out = TT_BF16; return dt.bits == 16 ? 0 : -1;
    default: return -1;
    }
}

/* DLTensor -> tt_view; -1 with an exception set. */
static int view_from_dltensor(const tt_DLTensor *t, const char *arg, tt_view *view)
{
    if (dtype_from_dlpack(t->dtype, &view->dtype) < 0) {
        PyErr_Format(PyExc_TypeError,
                     "%s: unsupported dtype (DLPack code %d, %d bits, %d lanes); expected bool, "
                     "uint8, int8-int64, float16, bfloat16, float32 or float64",
                     arg, (int)t->dtype.code, (int)t->dtype.bits, (int)t->dtype.lanes);
        return -1;
    }
    if (t->ndim < 0 || t->ndim > TT_MAX_NDIM) {
        PyErr_Format(PyExc_ValueError, "%s: expected at most %d dimensions, got %d", arg,
                     TT_MAX_NDIM, (int)t->ndim);
        return -1;
    }
    view->ndim = t->ndim;
    view->device_type = t->device.device_type;
    view->device_id = t->device.device_id;
    view->data = (char *)t->data + t->byte_offset;
    int64_t compact = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] < 0) {
            PyErr_Format(PyExc_ValueError, "%s: negative size in dimension %d", arg, d);
            return -1;
        }
        view->shape[d] = t->shape[d];
        view->stride[d] = t->strides != NULL ? t->strides[d] : compact;
        compact *= t->shape[d];
    }
    return 0;
}

/* The exchange table for type(obj), cached for the last type seen; NULL if it has none. */
static const tt_DLPackExchangeAPI *exchange_api_for(tt_dlpack_cache *cache, PyObject *obj)
{
    PyTypeObject *type = Py_TYPE(obj);
    if (type == cache->api_type)
        return cache->api;
    PyObject *capsule = PyObject_GetAttr((PyObject *)type, cache->str_exchange);
    const tt_DLPackExchangeAPI *api = NULL;
    if (capsule == NULL) {
        PyErr_Clear();
    } else {
        if (PyCapsule_IsValid(capsule, "dlpack_exchange_api"))
            api = PyCapsule_GetPointer(capsule, "dlpack_exchange_api");
        Py_DECREF(capsule);
        if (api != NULL &&
            (api->header.version.major != 1 || api->dltensor_from_py_object_no_sync == NULL))
            api = NULL; /* a future major version, or no borrowing entry point */
    }
    Py_INCREF(type);
    PyTypeObject *previous = cache->api_type;
    cache->api_type = type;
    Py_XDECREF(previous);
    cache->api = api;
    return api;
}

/* Replaces the producer's exception (torch's carries a C++ backtrace) with a ValueError that
 * names the argument and keeps the first line of the producer's message. */
static void raise_export_error(const char *arg)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *text = value ? PyObject_Str(value) : NULL;
    const char *message = text ? PyUnicode_AsUTF8AndSize(text, NULL) : NULL;
    PyErr_Clear();
    if (message == NULL)
        message = "unknown reason";
    const char *newline = strchr(message, '\n');
    PyObject *first_line = PyUnicode_FromStringAndSize(
        message, newline ? (Py_ssize_t)(newline - message) : (Py_ssize_t)strlen(message));
    if (first_line != NULL)
        PyErr_Format(PyExc_ValueError, "%s: could not read the tensor through DLPack: %U", arg,
                     first_line);
    Py_XDECREF(first_line);
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
}

/* Calls obj.__dlpack__(max_version=(1, 0)), falling back to obj.__dlpack__() for producers that
 * predate the keyword. (A bound method and a keyword dict, not vectorcall: the limited API has
 * PyObject_VectorcallMethod only from Python 3.12; this path serves producers without the
 * exchange table.) */
static PyObject *call_dlpack(tt_dlpack_cache *cache, PyObject *obj, const char *arg)
{
    PyObject *method = PyObject_GetAttr(obj, cache->str_dlpack);
    PyObject *capsule = NULL;
    if (method != NULL) {
        capsule = PyObject_Call(method, cache->no_args, cache->kwargs_max_version);
        if (capsule == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_Clear();
            capsule = PyObject_CallNoArgs(method);
        }
        Py_DECREF(method);
    }
    if (capsule == NULL)
        raise_export_error(arg);
    return capsule;
}

/* Takes ownership of the capsule's managed tensor (renaming the capsule) and returns its
 * DLTensor, or NULL with an exception set. */
static const tt_DLTensor *dltensor_from_capsule(PyObject *capsule, const char *arg,
                                                tt_borrow *borrow)
{
    if (PyCapsule_IsValid(capsule, "dltensor_versioned")) {
        tt_DLManagedTensorVersioned *m = PyCapsule_GetPointer(capsule, "dltensor_versioned");
        if (PyCapsule_SetName(capsule, "used_dltensor_versioned") < 0)
            return NULL;
        borrow->versioned = m; /* ours now: released by tt_borrow_release on every path */
        borrow->path = TT_PATH_VERSIONED;
        borrow->read_only = (m->flags & TT_DL_FLAG_READ_ONLY) != 0;
        if (m->version.major != 1) {
            PyErr_Format(PyExc_TypeError, "%s: unsupported DLPack version %u.%u (expected 1.x)",
                         arg, m->version.major, m->version.minor);
            return NULL;
        }
        return &m->dl_tensor;
    }
    if (PyCapsule_IsValid(capsule, "dltensor")) {
        tt_DLManagedTensor *m = PyCapsule_GetPointer(capsule, "dltensor");
        if (PyCapsule_SetName(capsule, "used_dltensor") < 0)
            return NULL;
        borrow->legacy = m;
        borrow->path = TT_PATH_LEGACY;
        return &m->dl_tensor;
    }
    PyErr_Format(PyExc_TypeError, "%s: __dlpack__ returned %R, not an unused DLPack capsule", arg,
                 capsule);
    return NULL;
}

int tt_dltensor_from_object(tt_dlpack_cache *cache, PyObject *obj, const char *arg,
                            tt_DLTensor *out, tt_borrow *borrow)
{
    memset(borrow, 0, sizeof *borrow);
    const tt_DLPackExchangeAPI *api = cache->use_exchange ? exchange_api_for(cache, obj) : NULL;
    if (api != NULL) {
        memset(out, 0, sizeof *out);
        if (api->dltensor_from_py_object_no_sync(obj, out) != 0) {
            raise_export_error(arg);
            return -1;
        }
        borrow->path = TT_PATH_EXCHANGE;
        return 0;
    }
    if (!PyObject_HasAttr(obj, cache->str_dlpack)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a tensor (an object with __dlpack__), got %s",
                     arg, TT_TYPE_NAME(obj));
        return -1;
    }
    PyObject *capsule = call_dlpack(cache, obj, arg);
    if (capsule == NULL)
        return -1;
    const tt_DLTensor *t = dltensor_from_capsule(capsule, arg, borrow);
    Py_DECREF(capsule);
    if (t == NULL) {
        tt_borrow_release(borrow);
        return -1;
    }
    *out = *t; /* the struct is copied; shape/strides stay valid until the borrow is released */
    return 0;
}

int tt_view_from_object(tt_dlpack_cache *cache, PyObject *obj, const char *arg, tt_view *view,
                        tt_borrow *borrow)
{
    tt_DLTensor t;
    if (tt_dltensor_from_object(cache, obj, arg, &t, borrow) < 0)
        return -1;
    if (view_from_dltensor(&t, arg, view) < 0) {
        tt_borrow_release(borrow);
        return -1;
    }
    return 0;
}
