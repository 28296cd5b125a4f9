/*
 * driver.h: the CUDA driver API, loaded at run time with dlopen("libcuda.so.1"): the functions
 * torchtally's kernels need, with their types and constants as the driver's ABI defines them
 * (tests/csrc checks the constants against cuda.h where one is installed). Nothing CUDA is
 * needed to build, and torchtally._C_cuda imports, on a machine without a driver: the driver is
 * loaded at the first call that needs it, and a missing one is an error with its reason
 * (tt_cu_missing), never a crash.
 *
 * TORCHTALLY_LIBCUDA=/path names another library to load instead (a driver in an unusual
 * place, or the tests' fake driver).
 */
#ifndef TT_CUDA_DRIVER_H
#define TT_CUDA_DRIVER_H

#include <stddef.h>

typedef int tt_cu_result; /* CUresult */
typedef int tt_cu_device;
typedef struct tt_cu_context_st *tt_cu_context;
typedef struct tt_cu_module_st *tt_cu_module;
typedef struct tt_cu_function_st *tt_cu_function;
typedef struct tt_cu_stream_st *tt_cu_stream;
typedef struct tt_cu_event_st *tt_cu_event;
typedef unsigned long long tt_cu_deviceptr;

/* CUresult values */
#define TT_CU_SUCCESS 0
#define TT_CU_ERROR_OUT_OF_MEMORY 2
#define TT_CU_ERROR_NO_DEVICE 100
#define TT_CU_ERROR_NOT_FOUND 500
#define TT_CU_ERROR_NOT_READY 600
#define TT_CU_ERROR_STREAM_CAPTURE_UNSUPPORTED 900
/* Not the driver's: the driver library itself could not be loaded (tt_cu_missing says why). */
#define TT_CU_NO_DRIVER (-1)

/* CUdevice_attribute, CUfunction_attribute, flags */
#define TT_CU_ATTR_MULTIPROCESSOR_COUNT 16
#define TT_CU_ATTR_COMPUTE_CAPABILITY_MAJOR 75
#define TT_CU_ATTR_COMPUTE_CAPABILITY_MINOR 76
#define TT_CU_EVENT_DISABLE_TIMING 0x2
#define TT_CU_MEMHOSTALLOC_PORTABLE 0x01
#define TT_CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define TT_CU_STREAM_CAPTURE_STATUS_NONE 0

typedef struct {
    tt_cu_result (*init)(unsigned flags);
    tt_cu_result (*driver_get_version)(int *version);
    tt_cu_result (*device_get)(tt_cu_device *device, int ordinal);
    tt_cu_result (*device_get_count)(int *count);
    tt_cu_result (*device_get_attribute)(int *value, int attribute, tt_cu_device device);
    tt_cu_result (*primary_ctx_retain)(tt_cu_context *ctx, tt_cu_device device);
    tt_cu_result (*ctx_get_current)(tt_cu_context *ctx);
    tt_cu_result (*ctx_set_current)(tt_cu_context ctx);
    tt_cu_result (*module_load_data)(tt_cu_module *module, const void *image);
    tt_cu_result (*module_get_function)(tt_cu_function *f, tt_cu_module module, const char *name);
    tt_cu_result (*module_unload)(tt_cu_module module);
    tt_cu_result (*occupancy_max_blocks)(int *blocks, tt_cu_function f, int threads, size_t shared);
    tt_cu_result (*launch_kernel)(tt_cu_function f, unsigned gx, unsigned gy, unsigned gz,
                                  unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                  tt_cu_stream stream, void **params, void **extra);
    tt_cu_result (*mem_alloc)(tt_cu_deviceptr *p, size_t bytes);
    tt_cu_result (*mem_free)(tt_cu_deviceptr p);
    tt_cu_result (*memset_d8_async)(tt_cu_deviceptr p, unsigned char value, size_t n,
                                    tt_cu_stream stream);
    tt_cu_result (*mem_host_alloc)(void **p, size_t bytes, unsigned flags);
    tt_cu_result (*mem_host_get_device_pointer)(tt_cu_deviceptr *p, void *host, unsigned flags);
    tt_cu_result (*mem_free_host)(void *p);
    tt_cu_result (*event_create)(tt_cu_event *e, unsigned flags);
    tt_cu_result (*event_record)(tt_cu_event e, tt_cu_stream stream);
    tt_cu_result (*event_query)(tt_cu_event e);
    tt_cu_result (*event_synchronize)(tt_cu_event e);
    tt_cu_result (*stream_wait_event)(tt_cu_stream stream, tt_cu_event e, unsigned flags);
    tt_cu_result (*stream_is_capturing)(tt_cu_stream stream, int *status);
    tt_cu_result (*get_error_name)(tt_cu_result r, const char **name);
    tt_cu_result (*get_error_string)(tt_cu_result r, const char **text);
} tt_cu_api;

/* The driver, loaded and initialised (cuInit) on first call; NULL when it cannot be. */
const tt_cu_api *tt_cu(void);

/* Why tt_cu() returned NULL ("" when it did not). */
const char *tt_cu_missing(void);

/* "CUDA_ERROR_X (text)" for a result, also for TT_CU_NO_DRIVER. */
void tt_cu_describe(tt_cu_result r, char *buf, size_t size);

#endif /* TT_CUDA_DRIVER_H */
