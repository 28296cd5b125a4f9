/*
 * nccl.h: NCCL, loaded at run time. Nothing links against NCCL: tt_nccl_open dlopen()s
 * libnccl.so.2 (after `import torch` on a CUDA build, the copy torch loaded is found by its
 * soname) or a given path, and resolves the entry points torchtally's sync backend calls.
 *
 * The declarations below are NCCL's C ABI as its nccl.h fixes it: every enum is int-sized,
 * ncclUniqueId is 128 bytes passed by value, communicators and CUDA streams are pointers.
 */
#ifndef TT_NCCL_H
#define TT_NCCL_H

#include <stddef.h>

#define TT_NCCL_UNIQUE_ID_BYTES 128

typedef struct {
    char internal[TT_NCCL_UNIQUE_ID_BYTES];
} tt_nccl_unique_id;

typedef void *tt_nccl_comm;

/* ncclResult_t values used here; others are passed through. */
enum { TT_NCCL_SUCCESS = 0, TT_NCCL_IN_PROGRESS = 7 };

typedef struct {
    void *handle; /* dlopen handle; NULL when nothing is loaded */
    int (*get_version)(int *version);
    int (*get_unique_id)(tt_nccl_unique_id *id);
    int (*comm_init_rank)(tt_nccl_comm *comm, int nranks, tt_nccl_unique_id id, int rank);
    int (*all_reduce)(const void *send, void *recv, size_t count, int dtype, int op,
                      tt_nccl_comm comm, void *stream);
    int (*all_gather)(const void *send, void *recv, size_t count, int dtype, tt_nccl_comm comm,
                      void *stream);
    int (*comm_abort)(tt_nccl_comm comm);
    int (*comm_destroy)(tt_nccl_comm comm);
    const char *(*get_error_string)(int result);
    /* optional (NCCL >= 2.4): NULL when the library lacks it */
    int (*comm_get_async_error)(tt_nccl_comm comm, int *result);
} tt_nccl_lib;

/* Loads `path` (a soname such as "libnccl.so.2", or a file path) into *lib, which must be
 * zeroed or closed. Returns 0, or -1 with `message` (of `size` bytes) saying what failed: the
 * library could not be opened, or it lacks a required symbol (named). *lib stays closed on
 * failure. */
int tt_nccl_open(tt_nccl_lib *lib, const char *path, char *message, size_t size);

/* dlclose()s and zeroes *lib; safe on a closed one. */
void tt_nccl_close(tt_nccl_lib *lib);

/* "2.30.3" from NCCL's version code (major*10000 + minor*100 + patch since 2.9, major*1000 +
 * minor*100 + patch before). */
void tt_nccl_version_parts(int code, int *major, int *minor, int *patch);

#endif /* TT_NCCL_H */
