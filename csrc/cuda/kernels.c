/*
 * kernels.c: each device's loaded kernels (kernels.h): its primary context, retained once and
 * kept for the life of the process as torch keeps it, the module and a function per kernel of
 * kernel_table.h, and the SM count the grid sizing reads.
 */
#include "cuda/kernels.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define TT_KERNEL_NAME(id, name) #name,
const char *const tt_kernel_names[TT_N_KERNELS] = {TT_KERNEL_TABLE(TT_KERNEL_NAME)};
#undef TT_KERNEL_NAME

typedef struct {
    tt_cu_context ctx; /* the primary context, retained on first use */
    tt_cu_module module;
    tt_cu_function functions[TT_N_KERNELS];
    int loaded, sm_count;
} device_kernels;

static device_kernels devices[TT_MAX_DEVICES];
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;

tt_status tt_cuda_fail(tt_error *err, tt_cu_result r, const char *what)
{
    char why[512];
    tt_cu_describe(r, why, sizeof why);
    return tt_fail(err, r == TT_CU_ERROR_OUT_OF_MEMORY ? TT_ENOMEM : TT_ECUDA, "CUDA",
                   "%s failed: %s", what, why);
}

static tt_status device_check(int device, tt_error *err)
{
    if (device < 0 || device >= TT_MAX_DEVICES)
        return tt_fail(err, TT_EVALUE, "out", "CUDA device %d is beyond the %d devices supported",
                       device, TT_MAX_DEVICES);
    return tt_cu() != NULL ? TT_OK : tt_cuda_fail(err, TT_CU_NO_DRIVER, "loading the driver");
}

/* The primary context of `device`, retained on first use (under devices_lock). */
static tt_status primary_context(int device, tt_cu_context *ctx, tt_error *err)
{
    tt_status status = device_check(device, err);
    if (status != TT_OK)
        return status;
    pthread_mutex_lock(&devices_lock);
    device_kernels *d = &devices[device];
    if (d->ctx == NULL) {
        const tt_cu_api *cu = tt_cu();
        tt_cu_device handle;
        tt_cu_result r = cu->device_get(&handle, device);
        if (r == TT_CU_SUCCESS)
            r = cu->primary_ctx_retain(&d->ctx, handle);
        if (r == TT_CU_SUCCESS &&
            cu->device_get_attribute(&d->sm_count, TT_CU_ATTR_MULTIPROCESSOR_COUNT, handle) !=
                TT_CU_SUCCESS)
            d->sm_count = 0;
        if (r != TT_CU_SUCCESS) {
            d->ctx = NULL;
            status = tt_cuda_fail(err, r, "getting the device's primary context");
        }
    }
    *ctx = d->ctx;
    pthread_mutex_unlock(&devices_lock);
    return status;
}

tt_status tt_device_enter(int device, tt_cu_context *previous, int *switched, tt_error *err)
{
    *previous = NULL;
    *switched = 0;
    tt_cu_context target;
    tt_status status = primary_context(device, &target, err);
    if (status != TT_OK)
        return status;
    const tt_cu_api *cu = tt_cu();
    tt_cu_result r = cu->ctx_get_current(previous);
    if (r == TT_CU_SUCCESS && *previous != target) {
        r = cu->ctx_set_current(target);
        *switched = r == TT_CU_SUCCESS;
    }
    return r == TT_CU_SUCCESS ? TT_OK : tt_cuda_fail(err, r, "making the device's context current");
}

void tt_device_leave(tt_cu_context previous, int switched)
{
    if (switched)
        tt_cu()->ctx_set_current(previous);
}

/* Every kernel of kernel_table.h in `module`, into functions[]. */
static tt_status find_functions(tt_cu_module module, tt_cu_function *functions, tt_error *err)
{
    for (int k = 0; k < TT_N_KERNELS; k++) {
        const tt_cu_result r =
            tt_cu()->module_get_function(&functions[k], module, tt_kernel_names[k]);
        if (r != TT_CU_SUCCESS) {
            char what[160];
            snprintf(what, sizeof what, "finding kernel %s in the compiled module",
                     tt_kernel_names[k]);
            return tt_cuda_fail(err, r, what);
        }
    }
    return TT_OK;
}

/* The module is loaded outside devices_lock (a PTX image can take the driver seconds to
 * finish, and every call on every device reads the table under that lock), then published. */
tt_status tt_kernels_load(int device, const void *image, tt_error *err)
{
    if (tt_kernels_loaded(device))
        return tt_fail(err, TT_EVALUE, "device", "the kernels of cuda:%d are loaded already",
                       device);
    tt_cu_context previous;
    int switched;
    tt_status status = tt_device_enter(device, &previous, &switched, err);
    if (status != TT_OK)
        return status;
    const tt_cu_api *cu = tt_cu();
    tt_cu_module module = NULL;
    tt_cu_function functions[TT_N_KERNELS];
    const tt_cu_result r = cu->module_load_data(&module, image);
    if (r != TT_CU_SUCCESS)
        status = tt_cuda_fail(err, r, "loading the compiled kernels (cuModuleLoadData)");
    else
        status = find_functions(module, functions, err);
    if (status == TT_OK) {
        pthread_mutex_lock(&devices_lock);
        device_kernels *d = &devices[device];
        if (d->loaded) { /* another thread loaded it meanwhile: keep theirs */
            status = tt_fail(err, TT_EVALUE, "device", "the kernels of cuda:%d are loaded already",
                             device);
        } else {
            d->module = module;
            memcpy((void *)d->functions, (const void *)functions, sizeof functions);
            d->loaded = 1;
            module = NULL; /* published */
        }
        pthread_mutex_unlock(&devices_lock);
    }
    if (module != NULL)
        cu->module_unload(module); /* a failed or duplicate load leaves nothing behind */
    tt_device_leave(previous, switched);
    return status;
}

int tt_kernels_loaded(int device)
{
    if (device < 0 || device >= TT_MAX_DEVICES)
        return 0;
    pthread_mutex_lock(&devices_lock);
    const int loaded = devices[device].loaded;
    pthread_mutex_unlock(&devices_lock);
    return loaded;
}

/* A loaded device's function; the table is written once, under the lock, before `loaded`. */
static tt_cu_function function_of(int device, tt_kernel_id k)
{
    return devices[device].functions[k];
}

tt_cu_result tt_launch(const tt_cuda_queue *q, tt_kernel_id k, unsigned gx, unsigned gy,
                       unsigned bx, unsigned by, size_t shared, void *args)
{
    void *params[1] = {args};
    return tt_cu()->launch_kernel(function_of(q->device, k), gx, gy, 1, bx, by, 1, (unsigned)shared,
                                  q->stream, params, NULL);
}

int tt_sm_count(int device)
{
    const int count = device >= 0 && device < TT_MAX_DEVICES ? devices[device].sm_count : 0;
    return count > 0 ? count : 32;
}

unsigned tt_grid(int device, int64_t work, int64_t per_block, int blocks_per_sm)
{
    int64_t g = (work + per_block - 1) / per_block;
    const int64_t cap = (int64_t)tt_sm_count(device) * blocks_per_sm;
    if (g > cap)
        g = cap;
    const int64_t floor = work / ((int64_t)1 << 31) + 1;
    if (g < floor)
        g = floor;
    if (g > 0x7fffffff)
        g = 0x7fffffff;
    return (unsigned)(g < 1 ? 1 : g);
}

unsigned tt_grid_for(int device, tt_kernel_id k, int64_t work, int64_t per_block, size_t shared)
{
    int per_sm = 0;
    if (tt_cu()->occupancy_max_blocks(&per_sm, function_of(device, k), TT_THREADS, shared) !=
            TT_CU_SUCCESS ||
        per_sm < 1)
        per_sm = 1;
    return tt_grid(device, work, per_block, per_sm);
}
