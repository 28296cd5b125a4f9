/*
 * binding.h: the Python side of a kernel call, shared by torchtally._C (cpu/module.c) and
 * torchtally._C_cuda (cuda/module.c). Both expose the nine methods of csrc/API.md with the
 * same positional arguments (METH_FASTCALL), the same argument kinds and the same messages and
 * exception types; only the kernels behind the methods differ.
 *
 * The workload is one call per metric update, often on small batches, so a call is a walk over a
 * fixed argument table: no keyword parsing, no allocation, one DLPack borrow per tensor. A
 * method is a tt_kernel_spec (its name, its argument table, and a thunk that calls the kernel
 * with the parsed arguments). A module's call function parses (tt_args_parse), runs the thunk
 * with the GIL released (tt_run_without_gil) and ends with tt_args_finish, which returns None or
 * raises the kernel's error, and releases every borrow on every path. tt_call_kernel is that
 * whole sequence, for a module whose kernels need nothing but their arguments.
 */
#ifndef TT_BINDING_H
#define TT_BINDING_H

#include "core/tensor.h"

#define TT_MAX_ARGS 8

typedef enum {
    TT_ARG_TENSOR,     /* required tensor */
    TT_ARG_OUT_TENSOR, /* required tensor the kernel writes: a read-only export is refused */
    TT_ARG_OPT_TENSOR, /* tensor or None */
    TT_ARG_OPT_INT,    /* int or None */
    TT_ARG_INT,        /* int */
    TT_ARG_FLOAT,      /* float or int */
    TT_ARG_BOOL,       /* anything with a truth value */
    TT_ARG_OPT_FLOAT,  /* float, int or None; may be left out when it ends the call (None) */
} tt_arg_kind;

typedef struct {
    const char *name; /* the argument's name, in messages */
    tt_arg_kind kind;
} tt_arg_spec;

/* A call's parsed arguments, by position. Slots of other kinds stay zeroed. */
typedef struct {
    tt_view views[TT_MAX_ARGS];
    const tt_view *tensor[TT_MAX_ARGS]; /* NULL for None */
    tt_borrow borrows[TT_MAX_ARGS];
    int64_t ints[TT_MAX_ARGS];           /* TT_ARG_INT, TT_ARG_OPT_INT, TT_ARG_BOOL (0 or 1) */
    const int64_t *opt_int[TT_MAX_ARGS]; /* NULL for None */
    double floats[TT_MAX_ARGS];
    const double *opt_float[TT_MAX_ARGS]; /* TT_ARG_OPT_FLOAT: NULL for None or left out */
    Py_ssize_t n;                         /* the borrows to release */
} tt_args;

/* Calls the kernel with the parsed arguments; `ctx` is the module's own (NULL for torchtally._C,
 * a tt_cuda_ctx for torchtally._C_cuda). No Python: it may run without the GIL. */
typedef tt_status (*tt_thunk)(const void *ctx, const tt_args *a, tt_error *err);

typedef struct {
    const char *name; /* the method's name, in messages */
    const tt_arg_spec *args;
    Py_ssize_t nargs;
    tt_thunk run;
} tt_kernel_spec;

/* Parses args[0..nargs) as spec says into *a (whatever *a held before). Returns 0, with the
 * borrows in *a for tt_args_finish or tt_args_release; or -1 with an exception set (TypeError
 * naming the method for a wrong count, else one naming the argument) and nothing to release. */
int tt_args_parse(tt_dlpack_cache *cache, const tt_kernel_spec *spec, PyObject *const *args,
                  Py_ssize_t nargs, tt_args *a);

/* Releases every borrow of a parsed *a; a pending exception stays set. Safe to call twice. */
void tt_args_release(tt_args *a);

/* spec->run(ctx, a, err) with the GIL released. */
tt_status tt_run_without_gil(const tt_kernel_spec *spec, const void *ctx, const tt_args *a,
                             tt_error *err);

/* Ends a call whose kernel returned `status`: releases the borrows of *a, then returns None for
 * TT_OK, else raises *err and returns NULL: TypeError for TT_ETYPE, MemoryError for TT_ENOMEM,
 * RuntimeError for TT_ECUDA, ValueError otherwise. An error the kernel left without a message
 * is raised as "<method>: failed without a message". */
PyObject *tt_args_finish(const tt_kernel_spec *spec, tt_args *a, tt_status status, tt_error *err);

/* The whole call: parse, run spec->run(ctx, ...) without the GIL, finish. */
PyObject *tt_call_kernel(tt_dlpack_cache *cache, const tt_kernel_spec *spec, const void *ctx,
                         PyObject *const *args, Py_ssize_t nargs);

/* _use_exchange_api(flag): switches the DLPack C exchange path of `cache` on or off (tests and
 * benchmarks). Returns the previous setting as a bool, or NULL with an exception set when
 * `flag` has no truth value (the setting then stays). */
/* Sets the Python exception of a failed status: TypeError, MemoryError, RuntimeError for a CUDA
 * failure, else ValueError, with err->message. */
void tt_raise_status(const tt_error *err);

PyObject *tt_use_exchange_api(tt_dlpack_cache *cache, PyObject *flag);

/* ---- the methods of csrc/API.md ---------------------------------------------------------- */

/* X(name, signature, argument specs...) for every kernel method. A module defines
 * run_<name> (a tt_thunk) for each, and call_kernel(module, spec, args, nargs); then
 * TT_KERNELS(TT_DEFINE_KERNEL) defines the methods' specs and py_<name> functions, and
 * TT_KERNELS(TT_KERNEL_METHOD) lists them in its PyMethodDef table. */
#define TT_LABEL_ARGS                                                                              \
    {"out", TT_ARG_OUT_TENSOR}, {"preds", TT_ARG_TENSOR}, {"target", TT_ARG_TENSOR},               \
        {"mask", TT_ARG_OPT_TENSOR},                                                               \
    {                                                                                              \
        "ignore_index", TT_ARG_OPT_INT                                                             \
    }

#define TT_KERNELS(X)                                                                              \
    X(confmat_labels, "confmat_labels(out, preds, target, mask, ignore_index)", TT_LABEL_ARGS)     \
    X(confmat_scores, "confmat_scores(out, preds, target, mask, ignore_index)", TT_LABEL_ARGS)     \
    X(confmat_threshold,                                                                           \
      "confmat_threshold(out, preds, target, mask, ignore_index, threshold, "                      \
      "logit_threshold=None)",                                                                     \
      TT_LABEL_ARGS, {"threshold", TT_ARG_FLOAT}, {"logit_threshold", TT_ARG_OPT_FLOAT})           \
    X(binned_update, "binned_update(out, preds, target, mask, ignore_index, thresholds, uniform)", \
      TT_LABEL_ARGS, {"thresholds", TT_ARG_TENSOR}, {"uniform", TT_ARG_BOOL})                      \
    X(topk_update, "topk_update(out, preds, target, mask, ignore_index, k)", TT_LABEL_ARGS,        \
      {"k", TT_ARG_INT})                                                                           \
    X(moments_update, "moments_update(state, x, weights)", {"state", TT_ARG_OUT_TENSOR},           \
      {"x", TT_ARG_TENSOR}, {"weights", TT_ARG_OPT_TENSOR})                                        \
    X(moments_merge, "moments_merge(state, other)", {"state", TT_ARG_OUT_TENSOR},                  \
      {"other", TT_ARG_TENSOR})                                                                    \
    X(comoments_update, "comoments_update(state, x, y)", {"state", TT_ARG_OUT_TENSOR},             \
      {"x", TT_ARG_TENSOR}, {"y", TT_ARG_TENSOR})                                                  \
    X(comoments_merge, "comoments_merge(state, other)", {"state", TT_ARG_OUT_TENSOR},              \
      {"other", TT_ARG_TENSOR})

#define TT_DEFINE_KERNEL(name, signature, ...)                                                     \
    static const tt_arg_spec name##_args[] = {__VA_ARGS__};                                        \
    _Static_assert(sizeof name##_args / sizeof name##_args[0] <= TT_MAX_ARGS,                      \
                   #name ": more than TT_MAX_ARGS arguments");                                     \
    static const tt_kernel_spec name##_spec = {                                                    \
        #name, name##_args, sizeof name##_args / sizeof name##_args[0], run_##name};               \
    static PyObject *py_##name(PyObject *module, PyObject *const *args, Py_ssize_t nargs)          \
    {                                                                                              \
        return call_kernel(module, &name##_spec, args, nargs);                                     \
    }

#define TT_KERNEL_METHOD(name, signature, ...)                                                     \
    {#name, (PyCFunction)(void (*)(void))py_##name, METH_FASTCALL, signature},

#endif /* TT_BINDING_H */
