/*
 * loader.c: run-time loading of NCCL (see loader.h). Serves the "nccl" sync backend
 * (python/torchtally/nccl.py), which calls a handful of entry points once per sync; nothing
 * here is on a hot path. Plain C, no Python.
 */
#define _GNU_SOURCE
#include "nccl/loader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* The 2.14 layout NCCL's C ABI fixes (LP64): blocking at byte 16, 24 bytes in all. */
_Static_assert(offsetof(tt_nccl_config_v21400, blocking) == 16,
               "ncclConfig_v21400: blocking at byte 16");
_Static_assert(sizeof(tt_nccl_config_v21400) == 24, "ncclConfig_v21400: 24 bytes");

/* The entry points, where each goes in tt_nccl_lib, and whether the library may lack it (the
 * slot then stays NULL). Every slot is a function pointer, filled from dlsym's void * by memcpy:
 * POSIX guarantees that conversion, C does not. */
typedef struct {
    const char *name;
    size_t offset;
    int optional;
} entry_point;

#define SLOT(field) offsetof(tt_nccl_lib, field)

static const entry_point entry_points[] = {
    {"ncclGetVersion", SLOT(get_version), 0},
    {"ncclGetUniqueId", SLOT(get_unique_id), 0},
    {"ncclCommInitRank", SLOT(comm_init_rank), 0},
    {"ncclAllReduce", SLOT(all_reduce), 0},
    {"ncclAllGather", SLOT(all_gather), 0},
    {"ncclCommAbort", SLOT(comm_abort), 0},
    {"ncclCommDestroy", SLOT(comm_destroy), 0},
    {"ncclGetErrorString", SLOT(get_error_string), 0},
    {"ncclCommGetAsyncError", SLOT(comm_get_async_error), 1},   /* NCCL >= 2.4 */
    {"ncclCommInitRankConfig", SLOT(comm_init_rank_config), 1}, /* NCCL >= 2.14 */
};

_Static_assert(sizeof(void *) == sizeof(((tt_nccl_lib *)0)->get_version),
               "entry points are filled from dlsym's void *");

int tt_nccl_open(tt_nccl_lib *lib, const char *path, char *message, size_t size)
{
    memset(lib, 0, sizeof *lib);
    dlerror();
    lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib->handle == NULL) {
        const char *why = dlerror();
        snprintf(message, size, "could not load NCCL from '%s': %s", path,
                 why ? why : "unknown error");
        return -1;
    }
    for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; i++) {
        const entry_point *e = &entry_points[i];
        dlerror();
        void *symbol = dlsym(lib->handle, e->name);
        if (symbol == NULL && !e->optional) {
            snprintf(message, size, "'%s' is not a usable NCCL: it has no symbol %s", path,
                     e->name);
            tt_nccl_close(lib);
            return -1;
        }
        memcpy((char *)lib + e->offset, (const void *)&symbol,
               sizeof symbol); /* NULL for a missing optional one */
    }
    return 0;
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
