/*
 * loader.h: NCCL, loaded at run time. Nothing links against NCCL: tt_nccl_open dlopen()s
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

/* ncclResult_t values used here; others are passed through. ncclInProgress is not an error: a
 * non-blocking communicator's setup or enqueue is still running (poll ncclCommGetAsyncError). */
enum { TT_NCCL_SUCCESS = 0, TT_NCCL_IN_PROGRESS = 7 };

/* NCCL_VERSION(x, y, z): x*1000 + y*100 + z up to 2.8, x*10000 + y*100 + z from 2.9 on. */
#define TT_NCCL_VERSION(x, y, z)                                                                   \
    (((x) <= 2 && (y) <= 8) ? (x) * 1000 + (y) * 100 + (z) : (x) * 10000 + (y) * 100 + (z))

/* ncclConfig_t exactly as NCCL 2.14 declared it (ncclConfig_v21400), the first release with
 * ncclCommInitRankConfig and the only field torchtally sets, `blocking`. Later releases only
 * append fields, and NCCL reads a config as a versioned prefix: it copies min(size, its own
 * sizeof(ncclConfig_t)) bytes over its own NCCL_CONFIG_INITIALIZER, refuses a wrong `magic`, and
 * resets every field newer than `version` to its default (a 2.14 config's bytes 20..23 are tail
 * padding here and cgaClusterSize from 2.17 on, which NCCL then resets because version < 2.17).
 * So this 2.14-sized struct, with version 2.14.0, is valid for every NCCL >= 2.14. (NCCL's
 * "unset" sentinels, NCCL_CONFIG_UNDEF_INT = INT_MIN and NCCL_CONFIG_UNDEF_PTR = NULL, are not
 * needed: `blocking` is the one field and it is always set.) */
#define TT_NCCL_CONFIG_MAGIC 0xcafebeefu
#define TT_NCCL_CONFIG_VERSION TT_NCCL_VERSION(2, 14, 0) /* 21400 */

typedef struct {
    size_t size;          /* sizeof this struct: 24 on LP64 (4 bytes of tail padding) */
    unsigned int magic;   /* TT_NCCL_CONFIG_MAGIC */
    unsigned int version; /* the NCCL version whose layout this is: TT_NCCL_CONFIG_VERSION */
    int blocking;         /* 0: init and collectives may return ncclInProgress */
} tt_nccl_config_v21400;

/* A config as NCCL_CONFIG_INITIALIZER of 2.14 makes it (padding zeroed), with `blocking`. */
void tt_nccl_config_init(tt_nccl_config_v21400 *config, int blocking);

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
    /* optional (NCCL >= 2.14): NULL when the library lacks it */
    int (*comm_init_rank_config)(tt_nccl_comm *comm, int nranks, tt_nccl_unique_id id, int rank,
                                 tt_nccl_config_v21400 *config);
} tt_nccl_lib;

/* Loads `path` (a soname such as "libnccl.so.2", or a file path) into *lib, which must be
 * zeroed or closed. Returns 0, or -1 with `message` (of `size` bytes) saying what failed: the
 * library could not be opened, or it lacks a required symbol (named). *lib stays closed on
 * failure. */
int tt_nccl_open(tt_nccl_lib *lib, const char *path, char *message, size_t size);

/* Whether communicators can be made non-blocking: ncclCommInitRankConfig to make one and
 * ncclCommGetAsyncError to see when it is ready. */
int tt_nccl_has_nonblocking_init(const tt_nccl_lib *lib);

/* dlclose()s and zeroes *lib; safe on a closed one. */
void tt_nccl_close(tt_nccl_lib *lib);

/* "2.30.3" from NCCL's version code (major*10000 + minor*100 + patch since 2.9, major*1000 +
 * minor*100 + patch before). */
void tt_nccl_version_parts(int code, int *major, int *minor, int *patch);

#endif /* TT_NCCL_H */
