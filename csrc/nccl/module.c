/*
 * module.c: torchtally._nccl, a thin Python binding of the run-time loaded NCCL (loader.h)
 * for the "nccl" sync backend (python/torchtally/nccl.py). Communicators, buffers and streams
 * cross as Python ints (pointers); the caller owns their lifetimes. Calls that can block
 * (communicator creation and teardown, collective launches) release the GIL.
 *
 * Communicators come in two kinds. comm_init_rank (ncclCommInitRank) blocks until every rank
 * has joined, forever if one never does. comm_init_rank_nonblocking (ncclCommInitRankConfig with
 * blocking = 0, NCCL >= 2.14; has_nonblocking_init() says whether the library can) returns at
 * once; its setup, and the enqueue of its collectives, may still be in progress (result 7,
 * ncclInProgress, which is not an error): the caller polls comm_async_error, with a deadline of
 * its own, until it is no longer 7 (python/torchtally/sync/nccl.py: wait_until_ready).
 *
 * Errors: OSError when the library cannot be loaded or lacks a symbol (the message names the
 * path and the symbol), RuntimeError before a library is loaded, NcclError (a RuntimeError)
 * when NCCL returns an error, with NCCL's own description and the numeric result.
 */
#include "core/args.h"
#include "core/module_def.h" /* Python.h and TT_MODULE_DEF */
#include "nccl/loader.h"

#define PATH_SIZE 1024

typedef struct {
    tt_nccl_lib lib;
    char path[PATH_SIZE];
    Py_ssize_t open_comms; /* communicators made and not yet destroyed or aborted */
    PyObject *nccl_error;
} module_state;

static module_state *get_state(PyObject *module) { return PyModule_GetState(module); }

static const tt_nccl_lib *loaded(PyObject *module)
{
    module_state *st = get_state(module);
    if (st->lib.handle == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "torchtally._nccl: NCCL is not loaded; call load(path) first");
        return NULL;
    }
    return &st->lib;
}

static PyObject *nccl_fail(PyObject *module, const char *call, int result)
{
    module_state *st = get_state(module);
    const char *text = st->lib.get_error_string ? st->lib.get_error_string(result) : NULL;
    PyErr_Format(st->nccl_error, "%s failed: %s (ncclResult_t %d)", call,
                 text ? text : "unknown error", result);
    return NULL;
}

static int arg_pointer(PyObject *obj, const char *name, void **out)
{
    if (!PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected an int (a pointer), got %s", name,
                     TT_TYPE_NAME(obj));
        return -1;
    }
    *out = PyLong_AsVoidPtr(obj);
    return *out == NULL && PyErr_Occurred() ? -1 : 0;
}

static int arg_int(PyObject *obj, const char *name, long long *out)
{
    if (!PyLong_Check(obj) || PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s: expected an int, got %s", name, TT_TYPE_NAME(obj));
        return -1;
    }
    *out = PyLong_AsLongLong(obj);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* ---- loading -------------------------------------------------------------------------------- */

static PyObject *py_load(PyObject *module, PyObject *path_obj)
{
    module_state *st = get_state(module);
    const char *path = PyUnicode_Check(path_obj) ? PyUnicode_AsUTF8AndSize(path_obj, NULL) : NULL;
    if (path == NULL) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "path: expected a str, got %s", TT_TYPE_NAME(path_obj));
        return NULL;
    }
    if (strlen(path) >= PATH_SIZE) {
        PyErr_Format(PyExc_ValueError, "path: longer than %d bytes", PATH_SIZE - 1);
        return NULL;
    }
    if (st->lib.handle != NULL && strcmp(st->path, path) != 0) {
        if (st->open_comms > 0) {
            PyErr_Format(PyExc_RuntimeError,
                         "torchtally._nccl: %zd communicator(s) of '%s' are still open; destroy "
                         "them before loading '%s'",
                         st->open_comms, st->path, path);
            return NULL;
        }
        tt_nccl_close(&st->lib);
        st->path[0] = '\0';
    }
    if (st->lib.handle == NULL) {
        char message[512];
        tt_nccl_lib lib;
        if (tt_nccl_open(&lib, path, message, sizeof message) < 0) {
            PyErr_SetString(PyExc_OSError, message);
            return NULL;
        }
        st->lib = lib;
        snprintf(st->path, sizeof st->path, "%s", path);
    }
    int version = 0;
    const int rc = st->lib.get_version(&version);
    if (rc != TT_NCCL_SUCCESS)
        return nccl_fail(module, "ncclGetVersion", rc);
    return PyLong_FromLong(version);
}

/* unload(): dlclose the library (refused while communicators are open). */
static PyObject *py_unload(PyObject *module, PyObject *unused)
{
    module_state *st = get_state(module);
    if (st->open_comms > 0) {
        PyErr_Format(
            PyExc_RuntimeError,
            "torchtally._nccl: %zd communicator(s) of '%s' are still open; destroy them first",
            st->open_comms, st->path);
        return NULL;
    }
    tt_nccl_close(&st->lib);
    st->path[0] = '\0';
    Py_RETURN_NONE;
}

static PyObject *py_loaded_path(PyObject *module, PyObject *unused)
{
    module_state *st = get_state(module);
    if (st->lib.handle == NULL)
        Py_RETURN_NONE;
    return PyUnicode_FromString(st->path);
}

static PyObject *py_version_parts(PyObject *module, PyObject *code_obj)
{
    long long code;
    if (arg_int(code_obj, "code", &code) < 0)
        return NULL;
    int major, minor, patch;
    tt_nccl_version_parts((int)code, &major, &minor, &patch);
    return Py_BuildValue("(iii)", major, minor, patch);
}

static PyObject *py_has_async_error(PyObject *module, PyObject *unused)
{
    const tt_nccl_lib *lib = loaded(module);
    if (lib == NULL)
        return NULL;
    return PyBool_FromLong(lib->comm_get_async_error != NULL);
}

static PyObject *py_has_nonblocking_init(PyObject *module, PyObject *unused)
{
    const tt_nccl_lib *lib = loaded(module);
    if (lib == NULL)
        return NULL;
    return PyBool_FromLong(tt_nccl_has_nonblocking_init(lib));
}

static PyObject *py_error_string(PyObject *module, PyObject *code_obj)
{
    const tt_nccl_lib *lib = loaded(module);
    long long code;
    if (lib == NULL || arg_int(code_obj, "code", &code) < 0)
        return NULL;
    const char *text = lib->get_error_string((int)code);
    return PyUnicode_FromString(text ? text : "");
}

/* ---- communicators -------------------------------------------------------------------------- */

static PyObject *py_unique_id(PyObject *module, PyObject *unused)
{
    const tt_nccl_lib *lib = loaded(module);
    if (lib == NULL)
        return NULL;
    tt_nccl_unique_id id;
    memset(&id, 0, sizeof id);
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = lib->get_unique_id(&id);
    Py_END_ALLOW_THREADS if (rc != TT_NCCL_SUCCESS) return nccl_fail(module, "ncclGetUniqueId", rc);
    return PyBytes_FromStringAndSize(id.internal, sizeof id.internal);
}

/* The arguments both comm_init_rank forms take: (nranks, unique_id: bytes, rank). */
static int parse_init(const char *name, PyObject *const *args, Py_ssize_t nargs, int *nranks,
                      tt_nccl_unique_id *id, int *rank)
{
    long long n, r;
    if (tt_check_nargs(name, nargs, 3, 3, NULL) < 0 || arg_int(args[0], "nranks", &n) < 0 ||
        arg_int(args[2], "rank", &r) < 0)
        return -1;
    if (!PyBytes_Check(args[1]) || PyBytes_Size(args[1]) != TT_NCCL_UNIQUE_ID_BYTES) {
        PyErr_Format(PyExc_ValueError, "unique_id: expected %d bytes (from unique_id()), got %R",
                     TT_NCCL_UNIQUE_ID_BYTES, args[1]);
        return -1;
    }
    if (n < 1 || n > 1 << 20 || r < 0 || r >= n) {
        PyErr_Format(PyExc_ValueError, "rank: expected 0 <= rank < nranks, got rank %lld of %lld",
                     r, n);
        return -1;
    }
    memcpy(id->internal, PyBytes_AsString(args[1]), sizeof id->internal);
    *nranks = (int)n;
    *rank = (int)r;
    return 0;
}

/* comm_init_rank(nranks, unique_id: bytes, rank) -> communicator; on the current CUDA device.
 * ncclCommInitRank: blocks until every rank has joined (forever if one never does). */
static PyObject *py_comm_init_rank(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const tt_nccl_lib *lib = loaded(module);
    int nranks, rank;
    tt_nccl_unique_id id;
    if (lib == NULL || parse_init("comm_init_rank", args, nargs, &nranks, &id, &rank) < 0)
        return NULL;
    tt_nccl_comm comm = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = lib->comm_init_rank(&comm, nranks, id, rank);
    Py_END_ALLOW_THREADS if (rc != TT_NCCL_SUCCESS) return nccl_fail(module, "ncclCommInitRank",
                                                                     rc);
    get_state(module)->open_comms++;
    return PyLong_FromVoidPtr(comm);
}

/* comm_init_rank_nonblocking(nranks, unique_id, rank) -> (communicator, result): a non-blocking
 * communicator (ncclCommInitRankConfig, blocking = 0) that returns at once. result 0: ready;
 * 7 (ncclInProgress): setup goes on in the background, poll comm_async_error until it is not 7
 * (or comm_abort it). On an immediate error a communicator NCCL left behind is aborted. */
static PyObject *py_comm_init_rank_nonblocking(PyObject *module, PyObject *const *args,
                                               Py_ssize_t nargs)
{
    const tt_nccl_lib *lib = loaded(module);
    int nranks, rank;
    tt_nccl_unique_id id;
    if (lib == NULL ||
        parse_init("comm_init_rank_nonblocking", args, nargs, &nranks, &id, &rank) < 0)
        return NULL;
    if (!tt_nccl_has_nonblocking_init(lib)) {
        PyErr_Format(PyExc_RuntimeError,
                     "torchtally._nccl: '%s' cannot make non-blocking communicators (it lacks "
                     "ncclCommInitRankConfig or ncclCommGetAsyncError: NCCL < 2.14); use "
                     "comm_init_rank",
                     get_state(module)->path);
        return NULL;
    }
    tt_nccl_config_v21400 config;
    tt_nccl_config_init(&config, 0);
    tt_nccl_comm comm = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = lib->comm_init_rank_config(&comm, nranks, id, rank, &config);
    if (rc != TT_NCCL_SUCCESS && rc != TT_NCCL_IN_PROGRESS && comm != NULL)
        lib->comm_abort(comm);
    Py_END_ALLOW_THREADS if (rc != TT_NCCL_SUCCESS && rc != TT_NCCL_IN_PROGRESS) return nccl_fail(
        module, "ncclCommInitRankConfig", rc);
    get_state(module)->open_comms++;
    PyObject *comm_obj = PyLong_FromVoidPtr(comm);
    if (comm_obj == NULL)
        return NULL;
    return Py_BuildValue("(Ni)", comm_obj, rc);
}

/* The arguments all_reduce and all_gather share: (comm, send, recv, count, dtype, ..., stream),
 * the stream last (None: NCCL's default stream). Returns 0, or -1 with an exception set. */
typedef struct {
    void *comm, *send, *recv, *stream;
    long long count, dtype;
} collective_args;

static int parse_collective(const char *name, PyObject *const *args, Py_ssize_t nargs,
                            Py_ssize_t expected, collective_args *c)
{
    if (tt_check_nargs(name, nargs, expected, expected, NULL) < 0 ||
        arg_pointer(args[0], "comm", &c->comm) < 0 || arg_pointer(args[1], "send", &c->send) < 0 ||
        arg_pointer(args[2], "recv", &c->recv) < 0 || arg_int(args[3], "count", &c->count) < 0 ||
        arg_int(args[4], "dtype", &c->dtype) < 0)
        return -1;
    PyObject *stream = args[expected - 1];
    c->stream = NULL;
    if (stream != Py_None && arg_pointer(stream, "stream", &c->stream) < 0)
        return -1;
    if (c->count < 0) {
        PyErr_Format(PyExc_ValueError, "count: expected >= 0, got %lld", c->count);
        return -1;
    }
    return 0;
}

/* A collective's result: 0 (enqueued), or 7 (ncclInProgress: a non-blocking communicator is
 * still enqueueing; poll comm_async_error until it is not 7 before the next NCCL call or before
 * ordering work after the stream); anything else raises NcclError. */
static PyObject *collective_result(PyObject *module, const char *call, int rc)
{
    if (rc != TT_NCCL_SUCCESS && rc != TT_NCCL_IN_PROGRESS)
        return nccl_fail(module, call, rc);
    return PyLong_FromLong(rc);
}

/* all_reduce(comm, send, recv, count, dtype, op, stream) -> 0 or 7: ncclDataType_t / ncclRedOp_t
 * codes. */
static PyObject *py_all_reduce(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const tt_nccl_lib *lib = loaded(module);
    collective_args c;
    long long op;
    if (lib == NULL || parse_collective("all_reduce", args, nargs, 7, &c) < 0 ||
        arg_int(args[5], "op", &op) < 0)
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc =
        lib->all_reduce(c.send, c.recv, (size_t)c.count, (int)c.dtype, (int)op, c.comm, c.stream);
    Py_END_ALLOW_THREADS return collective_result(module, "ncclAllReduce", rc);
}

/* all_gather(comm, send, recv, count, dtype, stream) -> 0 or 7: `count` elements per rank. */
static PyObject *py_all_gather(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const tt_nccl_lib *lib = loaded(module);
    collective_args c;
    if (lib == NULL || parse_collective("all_gather", args, nargs, 6, &c) < 0)
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc =
        lib->all_gather(c.send, c.recv, (size_t)c.count, (int)c.dtype, c.comm, c.stream);
    Py_END_ALLOW_THREADS return collective_result(module, "ncclAllGather", rc);
}

/* comm_async_error(comm) -> ncclResult_t of the communicator's background work (0 = fine,
 * 7 = in progress), or None when this NCCL cannot tell. */
static PyObject *py_comm_async_error(PyObject *module, PyObject *comm_obj)
{
    const tt_nccl_lib *lib = loaded(module);
    void *comm;
    if (lib == NULL || arg_pointer(comm_obj, "comm", &comm) < 0)
        return NULL;
    if (lib->comm_get_async_error == NULL)
        Py_RETURN_NONE;
    int result = 0;
    const int rc = lib->comm_get_async_error(comm, &result);
    if (rc != TT_NCCL_SUCCESS)
        return nccl_fail(module, "ncclCommGetAsyncError", rc);
    return PyLong_FromLong(result);
}

static PyObject *end_comm(PyObject *module, PyObject *comm_obj, int abort)
{
    const tt_nccl_lib *lib = loaded(module);
    void *comm;
    if (lib == NULL || arg_pointer(comm_obj, "comm", &comm) < 0)
        return NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS rc = abort ? lib->comm_abort(comm) : lib->comm_destroy(comm);
    Py_END_ALLOW_THREADS module_state *st = get_state(module);
    if (st->open_comms > 0)
        st->open_comms--; /* gone either way: NCCL frees the communicator even on error */
    if (rc != TT_NCCL_SUCCESS)
        return nccl_fail(module, abort ? "ncclCommAbort" : "ncclCommDestroy", rc);
    Py_RETURN_NONE;
}

static PyObject *py_comm_abort(PyObject *module, PyObject *comm)
{
    return end_comm(module, comm, 1);
}

static PyObject *py_comm_destroy(PyObject *module, PyObject *comm)
{
    return end_comm(module, comm, 0);
}

/* ---- module --------------------------------------------------------------------------------- */

#define FASTCALL(name, doc) {#name, (PyCFunction)(void (*)(void))py_##name, METH_FASTCALL, doc}

static PyMethodDef module_methods[] = {
    {"load", py_load, METH_O,
     "load(path) -> NCCL version code. dlopen()s `path` (a soname or a file) and resolves the "
     "entry points; loading the same path again is a no-op."},
    {"unload", py_unload, METH_NOARGS,
     "dlclose the library (refused while communicators are open)."},
    {"loaded_path", py_loaded_path, METH_NOARGS, "The path NCCL was loaded from, or None."},
    {"version_parts", py_version_parts, METH_O, "(major, minor, patch) of a version code."},
    {"has_async_error", py_has_async_error, METH_NOARGS,
     "Whether the loaded NCCL has ncclCommGetAsyncError."},
    {"has_nonblocking_init", py_has_nonblocking_init, METH_NOARGS,
     "Whether the loaded NCCL can make non-blocking communicators (ncclCommInitRankConfig and "
     "ncclCommGetAsyncError: NCCL >= 2.14)."},
    {"error_string", py_error_string, METH_O, "ncclGetErrorString(code)."},
    {"unique_id", py_unique_id, METH_NOARGS, "ncclGetUniqueId() as 128 bytes."},
    FASTCALL(comm_init_rank,
             "comm_init_rank(nranks, unique_id, rank) -> communicator (int); blocks until every "
             "rank joined."),
    FASTCALL(comm_init_rank_nonblocking,
             "comm_init_rank_nonblocking(nranks, unique_id, rank) -> (communicator, result): "
             "returns at once; result 7 (ncclInProgress): poll comm_async_error."),
    FASTCALL(all_reduce, "all_reduce(comm, send, recv, count, dtype, op, stream) -> 0, or 7 "
                         "(ncclInProgress: still enqueueing)."),
    FASTCALL(all_gather, "all_gather(comm, send, recv, count, dtype, stream) -> 0, or 7 "
                         "(ncclInProgress: still enqueueing)."),
    {"comm_async_error", py_comm_async_error, METH_O,
     "ncclCommGetAsyncError(comm) -> result code, or None when unavailable."},
    {"comm_abort", py_comm_abort, METH_O, "ncclCommAbort(comm)."},
    {"comm_destroy", py_comm_destroy, METH_O, "ncclCommDestroy(comm)."},
    {NULL, NULL, 0, NULL},
};

static int module_exec(PyObject *module)
{
    module_state *st = get_state(module);
    memset(&st->lib, 0, sizeof st->lib);
    st->path[0] = '\0';
    st->open_comms = 0;
    st->nccl_error = PyErr_NewExceptionWithDoc(
        "torchtally._nccl.NcclError", "An NCCL call returned an error.", PyExc_RuntimeError, NULL);
    if (st->nccl_error == NULL)
        return -1;
    return PyModule_AddObjectRef(module, "NcclError", st->nccl_error);
}

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    module_state *st = get_state(module);
    if (st != NULL)
        Py_VISIT(st->nccl_error);
    return 0;
}

static int module_clear(PyObject *module)
{
    module_state *st = get_state(module);
    if (st != NULL)
        Py_CLEAR(st->nccl_error);
    return 0; /* the library stays loaded: a communicator may outlive the module object */
}

TT_MODULE_DEF("torchtally._nccl", "Run-time loaded NCCL for torchtally's nccl sync backend.",
              module_state);

PyMODINIT_FUNC PyInit__nccl(void) { return PyModuleDef_Init(&module_def); }
