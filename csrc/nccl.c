/*
 * nccl.c: run-time loading of NCCL (see nccl.h). Serves the "nccl" sync backend
 * (python/torchtally/nccl.py), which calls a handful of entry points once per sync; nothing
 * here is on a hot path. Plain C, no Python.
 */
#define _GNU_SOURCE
#include "nccl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* The 2.14 layout NCCL's C ABI fixes (LP64): blocking at byte 16, 24 bytes in all. */
_Static_assert(offsetof(tt_nccl_config_v21400, blocking) == 16,
               "ncclConfig_v21400: blocking at byte 16");
_Static_assert(sizeof(tt_nccl_config_v21400) == 24, "ncclConfig_v21400: 24 bytes");

/* dlsym into a function pointer: POSIX guarantees the conversion, C does not; go through memcpy. */
static int resolve(void *handle, const char *name, void *slot, size_t slot_size)
{
    dlerror();
    void *symbol = dlsym(handle, name);
    if (symbol == NULL)
        return -1;
    memcpy(slot, &symbol, slot_size);
    return 0;
}

#define OPTIONAL(field, name)                                                                   \
    do {                                                                                        \
        if (resolve(lib->handle, name, &lib->field, sizeof lib->field) < 0)                     \
            lib->field = NULL;                                                                  \
    } while (0)

#define REQUIRED(field, name)                                                                   \
    do {                                                                                        \
        if (resolve(lib->handle, name, &lib->field, sizeof lib->field) < 0) {                   \
            missing = name;                                                                     \
            goto fail;                                                                          \
        }                                                                                       \
    } while (0)

int tt_nccl_open(tt_nccl_lib *lib, const char *path, char *message, size_t size)
{
    memset(lib, 0, sizeof *lib);
    const char *missing = NULL;
    dlerror();
    lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib->handle == NULL) {
        const char *why = dlerror();
        snprintf(message, size, "could not load NCCL from '%s': %s", path, why ? why : "unknown error");
        return -1;
    }
    REQUIRED(get_version, "ncclGetVersion");
    REQUIRED(get_unique_id, "ncclGetUniqueId");
    REQUIRED(comm_init_rank, "ncclCommInitRank");
    REQUIRED(all_reduce, "ncclAllReduce");
    REQUIRED(all_gather, "ncclAllGather");
    REQUIRED(comm_abort, "ncclCommAbort");
    REQUIRED(comm_destroy, "ncclCommDestroy");
    REQUIRED(get_error_string, "ncclGetErrorString");
    OPTIONAL(comm_get_async_error, "ncclCommGetAsyncError");
    OPTIONAL(comm_init_rank_config, "ncclCommInitRankConfig");
    return 0;
fail:
    snprintf(message, size, "'%s' is not a usable NCCL: it has no symbol %s", path, missing);
    tt_nccl_close(lib);
    return -1;
}

int tt_nccl_has_nonblocking_init(const tt_nccl_lib *lib)
{
    return lib->handle != NULL && lib->comm_init_rank_config != NULL &&
           lib->comm_get_async_error != NULL;
}

void tt_nccl_config_init(tt_nccl_config_v21400 *config, int blocking)
{
    memset(config, 0, sizeof *config); /* the tail padding too: NCCL copies all `size` bytes */
    config->size = sizeof *config;
    config->magic = TT_NCCL_CONFIG_MAGIC;
    config->version = TT_NCCL_CONFIG_VERSION;
    config->blocking = blocking;
}

void tt_nccl_close(tt_nccl_lib *lib)
{
    if (lib->handle != NULL)
        dlclose(lib->handle);
    memset(lib, 0, sizeof *lib);
}

void tt_nccl_version_parts(int code, int *major, int *minor, int *patch)
{
    if (code >= 20900) {
        *major = code / 10000;
        *minor = code / 100 % 100;
    } else {
        *major = code / 1000;
        *minor = code / 100 % 10;
    }
    *patch = code % 100;
}
