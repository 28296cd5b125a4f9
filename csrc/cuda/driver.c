/*
 * driver.c: loads the CUDA driver (driver.h) once per process: dlopen, every symbol by the name
 * the driver exports for its current ABI (the _v2 ones where cuda.h maps the plain name to a
 * _v2), then cuInit. A missing library, symbol or a failing cuInit leaves tt_cu() NULL with the
 * reason in tt_cu_missing().
 */
#include "cuda/driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tt_cu_api api;
static const tt_cu_api *loaded;
static char missing[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

typedef struct {
    const char *symbol;
    size_t offset;
} entry;

#define ENTRY(field, symbol) {symbol, offsetof(tt_cu_api, field)}
static const entry entries[] = {
    ENTRY(init, "cuInit"),
    ENTRY(driver_get_version, "cuDriverGetVersion"),
    ENTRY(device_get, "cuDeviceGet"),
    ENTRY(device_get_count, "cuDeviceGetCount"),
    ENTRY(device_get_attribute, "cuDeviceGetAttribute"),
    ENTRY(primary_ctx_retain, "cuDevicePrimaryCtxRetain"),
    ENTRY(ctx_get_current, "cuCtxGetCurrent"),
    ENTRY(ctx_set_current, "cuCtxSetCurrent"),
    ENTRY(module_load_data, "cuModuleLoadData"),
    ENTRY(module_get_function, "cuModuleGetFunction"),
    ENTRY(module_unload, "cuModuleUnload"),
    ENTRY(occupancy_max_blocks, "cuOccupancyMaxActiveBlocksPerMultiprocessor"),
    ENTRY(launch_kernel, "cuLaunchKernel"),
    ENTRY(mem_alloc, "cuMemAlloc_v2"),
    ENTRY(mem_free, "cuMemFree_v2"),
    ENTRY(memset_d8_async, "cuMemsetD8Async"),
    ENTRY(mem_host_alloc, "cuMemHostAlloc"),
    ENTRY(mem_host_get_device_pointer, "cuMemHostGetDevicePointer_v2"),
    ENTRY(mem_free_host, "cuMemFreeHost"),
    ENTRY(event_create, "cuEventCreate"),
    ENTRY(event_record, "cuEventRecord"),
    ENTRY(event_query, "cuEventQuery"),
    ENTRY(event_synchronize, "cuEventSynchronize"),
    ENTRY(stream_wait_event, "cuStreamWaitEvent"),
    ENTRY(stream_is_capturing, "cuStreamIsCapturing"),
    ENTRY(get_error_name, "cuGetErrorName"),
    ENTRY(get_error_string, "cuGetErrorString"),
};
#undef ENTRY

static void describe(const tt_cu_api *cu, tt_cu_result r, char *buf, size_t size)
{
    const char *name = NULL, *text = NULL;
    if (cu != NULL && cu->get_error_name(r, &name) == TT_CU_SUCCESS && name != NULL) {
        if (cu->get_error_string(r, &text) != TT_CU_SUCCESS)
            text = NULL;
        snprintf(buf, size, "%s (%s)", name, text != NULL ? text : "no description");
    } else {
        snprintf(buf, size, "CUDA error %d", (int)r);
    }
}

static void load(void)
{
    const char *path = getenv("TORCHTALLY_LIBCUDA");
    if (path == NULL || path[0] == '\0')
        path = "libcuda.so.1";
    /* the user's own setting, by design: a driver elsewhere, or the tests' fake */
    void *lib =
        dlopen(path, RTLD_NOW | RTLD_LOCAL); // NOLINT(clang-analyzer-optin.taint.GenericTaint)
    if (lib == NULL) {
        const char *why = dlerror();
        snprintf(missing, sizeof missing, "no CUDA driver: dlopen(\"%s\") failed: %s", path,
                 why != NULL ? why : "unknown error");
        return;
    }
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
        void *f = dlsym(lib, entries[i].symbol);
        if (f == NULL) {
            snprintf(missing, sizeof missing,
                     "the CUDA driver %s has no %s: it is older than torchtally supports", path,
                     entries[i].symbol);
            return; /* the library stays loaded: unloading a driver is never worth the risk */
        }
        memcpy((char *)&api + entries[i].offset, (const void *)&f, sizeof f);
    }
    const tt_cu_result r = api.init(0);
    if (r != TT_CU_SUCCESS) {
        char why[160];
        describe(&api, r, why, sizeof why);
        snprintf(missing, sizeof missing, "the CUDA driver %s did not initialise: cuInit: %s", path,
                 why);
        return;
    }
    loaded = &api;
}

const tt_cu_api *tt_cu(void)
{
    pthread_once(&once, load);
    return loaded;
}

const char *tt_cu_missing(void)
{
    pthread_once(&once, load);
    return missing;
}

void tt_cu_describe(tt_cu_result r, char *buf, size_t size)
{
    if (r == TT_CU_NO_DRIVER)
        snprintf(buf, size, "%s", tt_cu_missing());
    else
        describe(tt_cu(), r, buf, size);
}
