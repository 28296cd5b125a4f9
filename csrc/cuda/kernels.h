/*
 * kernels.h: the compiled kernels of each device and how the host launches them, over the
 * driver API (driver.h). A device's module is the image NVRTC (or nvcc) made for it, loaded into
 * torch's context for that device, the device's primary context, by tt_kernels_load; until then
 * no kernel of that device can be launched, and a call says so instead of running.
 */
#ifndef TT_CUDA_KERNELS_H
#define TT_CUDA_KERNELS_H

#include <stdint.h>

#include "core/view.h"
#include "cuda/device_abi.h"
#include "cuda/driver.h"
#include "cuda/kernel_table.h"

#define TT_MAX_DEVICES 64

/* Where a call's kernels go: the device, and torch's current stream on it. */
typedef struct {
    int device;
    tt_cu_stream stream;
} tt_cuda_queue;

/* Records a failed driver call `what` (TT_ENOMEM for an allocation, else TT_ECUDA); returns it. */
tt_status tt_cuda_fail(tt_error *err, tt_cu_result r, const char *what);

/* Loads `image` (a cubin or PTX, NUL-terminated for PTX) as `device`'s kernels and looks up
 * every kernel of kernel_table.h in it; a device's kernels are loaded once (a second load of
 * the same device is an error: its functions may be in use). */
tt_status tt_kernels_load(int device, const void *image, tt_error *err);

/* Whether `device`'s kernels are loaded. */
int tt_kernels_loaded(int device);

/* Makes `device`'s primary context current on this thread (*previous: the one to restore,
 * *switched: whether it changed). */
tt_status tt_device_enter(int device, tt_cu_context *previous, int *switched, tt_error *err);
void tt_device_leave(tt_cu_context previous, int switched);

/* Enqueues kernel `k` of the queue's device: grid (gx, gy), block (bx, by), `shared` bytes of
 * dynamic shared memory, and its one argument struct `args` (device_abi.h). */
tt_cu_result tt_launch(const tt_cuda_queue *q, tt_kernel_id k, unsigned gx, unsigned gy,
                       unsigned bx, unsigned by, size_t shared, void *args);

/* Sizing. tt_grid: blocks for `work` items at `per_block` items per block, at most
 * `blocks_per_sm` per SM, and at least enough that no block counts 2^31 items. Grid-stride
 * kernels take one full wave: a grid a little larger than what fits on the GPU at once would
 * leave a second, nearly empty wave holding a full share of the work. tt_grid_for: the same
 * with blocks_per_sm = how many blocks of kernel `k` (TT_THREADS threads, `shared` bytes) fit
 * on one SM at once. */
int tt_sm_count(int device);
unsigned tt_grid(int device, int64_t work, int64_t per_block, int blocks_per_sm);
unsigned tt_grid_for(int device, tt_kernel_id k, int64_t work, int64_t per_block, size_t shared);

/* The C names of the kernels, in tt_kernel_id order. */
extern const char *const tt_kernel_names[TT_N_KERNELS];

#endif /* TT_CUDA_KERNELS_H */
