/*
 * tensor.h: Python tensors -> tt_view, through DLPack. Two paths:
 *  - the C exchange table (`type(t).__dlpack_c_exchange_api__`, torch >= 2.10): fills a
 *    DLTensor that borrows the tensor's memory, with no Python call and nothing to release;
 *  - `t.__dlpack__(max_version=(1, 0))` (or `t.__dlpack__()` for older producers): a capsule
 *    holding a DLManagedTensorVersioned / DLManagedTensor; the capsule is renamed to its
 *    "used_" name and the deleter is called exactly once by tt_borrow_release.
 * Both keep the producing Python object alive only through the caller's reference.
 */
#ifndef TT_TENSOR_H
#define TT_TENSOR_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "core/dlpack_abi.h"
#include "core/view.h"

typedef enum { TT_PATH_EXCHANGE, TT_PATH_VERSIONED, TT_PATH_LEGACY } tt_dlpack_path;

/* Per-module cache: interned names and the exchange table of the last tensor type seen. */
typedef struct {
    PyObject *str_dlpack;         /* "__dlpack__" */
    PyObject *str_exchange;       /* "__dlpack_c_exchange_api__" */
    PyObject *no_args;            /* () */
    PyObject *kwargs_max_version; /* {"max_version": (1, 0)} */
    /* borrowed: the type api was looked up on (types are immortal enough: we hold a ref) */
    PyTypeObject *api_type;
    const tt_DLPackExchangeAPI *api;
    int use_exchange; /* tests and benchmarks switch the fast path off */
} tt_dlpack_cache;

/* What must be released after the kernel ran. Zero-initialise before use. */
typedef struct {
    tt_DLManagedTensor *legacy;
    tt_DLManagedTensorVersioned *versioned;
    tt_dlpack_path path;
    int read_only; /* the producer marked the export read-only (versioned capsules only) */
} tt_borrow;

int tt_dlpack_cache_init(tt_dlpack_cache *cache);
void tt_dlpack_cache_clear(tt_dlpack_cache *cache);

/* The raw DLTensor of `obj` (for introspection); same rules as tt_view_from_object. */
int tt_dltensor_from_object(tt_dlpack_cache *cache, PyObject *obj, const char *arg,
                            tt_DLTensor *out, tt_borrow *borrow);

/* Reads `obj` into *view. Returns 0, or -1 with a Python exception naming `arg` set (and
 * nothing left to release). */
int tt_view_from_object(tt_dlpack_cache *cache, PyObject *obj, const char *arg, tt_view *view,
                        tt_borrow *borrow);

/* Calls the producer's deleter, if any; safe on a zeroed or already released borrow. */
void tt_borrow_release(tt_borrow *borrow);

#endif /* TT_TENSOR_H */
