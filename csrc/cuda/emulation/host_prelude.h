/*
 * host_prelude.h: the CUDA execution model on the host, so that the kernels' own source (the
 * text NVRTC compiles, the .cu files of csrc/cuda) runs as C++ under g++ when TT_EMULATION is defined
 * (common.cuh then includes this instead of device_prelude.cuh). Used by the emulation tests
 * and `python -m torchtally.cuda emulate`; never part of a device build. README.md beside it.
 *
 * A launch runs its grid one block at a time, blocks in a shuffled order. A block's threads are
 * fibers (ucontext) on the calling OS thread: each runs until it reaches a barrier, a warp
 * collective or (at random) an atomic, then the scheduler picks the next runnable thread at
 * random, so any interleaving a kernel must tolerate can happen and a kernel relying on one
 * order fails under some seed. __syncthreads releases when every live thread of the block has
 * arrived; a warp collective when the 32 lanes have, and a lane that exits while its warp waits
 * at a collective (or a collective every thread waits on that cannot complete) fails the
 * launch instead of hanging. `__shared__` variables are statics (blocks never overlap), dynamic
 * shared memory is a buffer of the launch's size, poisoned before each block and followed by
 * an unmapped page. Atomics are real atomics. Device memory is host memory.
 */
#ifndef TT_CUDA_EMULATION_HOST_PRELUDE_H
#define TT_CUDA_EMULATION_HOST_PRELUDE_H

#ifndef __cplusplus
#error "the emulation compiles the CUDA sources as C++"
#endif

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

/* ---- the CUDA language, as far as the kernels use it --------------------------------------- */

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(threads)
#define __shared__ static /* one copy for the block: blocks run one at a time */
#define TT_DYNAMIC_SHARED(type, name) type *const name = (type *)tt_emu_dynamic_shared()

struct dim3 {
    unsigned x, y, z;
};
struct alignas(16) uint4 {
    unsigned x, y, z, w;
};

static inline float __int_as_float(int i)
{
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}

/* IEEE binary16 to float, exactly (what cvt.f32.f16 does). */
static inline float tt_emu_half_to_float(unsigned short h)
{
    const unsigned sign = (unsigned)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    unsigned bits;
    if (exp == 0x1f)
        bits = sign | 0x7f800000u | (man << 13);
    else if (exp != 0)
        bits = sign | ((exp + 112) << 23) | (man << 13);
    else if (man == 0)
        bits = sign;
    else { /* subnormal: man * 2^-24, exact in float */
        const float f = (float)man * 5.9604644775390625e-08f;
        memcpy(&bits, &f, sizeof bits);
        bits |= sign;
    }
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

template <typename T>
static inline T __ldcs(const T *p)
{
    return *p;
}

/* ---- the machine ---------------------------------------------------------------------------- */

enum { TT_EMU_MAX_THREADS = 1024, TT_EMU_STACK = 64 * 1024 };
enum { TT_EMU_READY, TT_EMU_AT_BARRIER, TT_EMU_AT_WARP, TT_EMU_DONE };
enum { TT_EMU_SHFL_DOWN, TT_EMU_SHFL_XOR, TT_EMU_ANY };

typedef struct {
    ucontext_t context;
    dim3 index;
    unsigned linear, ready_slot;
    int state;
    unsigned long long value, result; /* what it brings to a collective, what it takes away */
    int kind, offset;
} tt_emu_thread;

typedef struct {
    dim3 grid, block, block_index;
    unsigned threads;
    tt_emu_thread *thread; /* [threads] */
    char *stacks;
    size_t stacks_bytes;
    ucontext_t scheduler;
    unsigned long long rng;
    unsigned *ready, ready_count; /* the runnable threads, in no order */
    unsigned live;                /* threads that have not exited */
    unsigned at_barrier;
    int barrier_or;
    unsigned char warp_arrived[TT_EMU_MAX_THREADS / 32], warp_exited[TT_EMU_MAX_THREADS / 32];
    unsigned char *shared, *shared_map; /* the dynamic shared memory, before a guard page */
    size_t shared_bytes, shared_map_bytes;
    void (*body)(const void *);
    const void *args;
    int failed;
    char error[256];
} tt_emu_machine;

static tt_emu_machine tt_emu;
static tt_emu_thread *tt_emu_self;

#define threadIdx (tt_emu_self->index)
#define blockIdx (tt_emu.block_index)
#define blockDim (tt_emu.block)
#define gridDim (tt_emu.grid)

static unsigned long long tt_emu_random(void)
{ /* splitmix64: seeded, the same interleavings for the same seed */
    unsigned long long z = (tt_emu.rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void tt_emu_fail(const char *what)
{
    if (!tt_emu.failed)
        snprintf(tt_emu.error, sizeof tt_emu.error, "block (%u, %u) thread (%u, %u): %s",
                 tt_emu.block_index.x, tt_emu.block_index.y, tt_emu_self->index.x,
                 tt_emu_self->index.y, what);
    tt_emu.failed = 1;
}

/* Back to the scheduler; returns when this thread is picked again. */
static void tt_emu_yield(void) { swapcontext(&tt_emu_self->context, &tt_emu.scheduler); }

/* Into and out of the runnable set, in O(1). */
static void tt_emu_make_ready(tt_emu_thread *t)
{
    t->state = TT_EMU_READY;
    t->ready_slot = tt_emu.ready_count;
    tt_emu.ready[tt_emu.ready_count++] = t->linear;
}

static void tt_emu_make_waiting(tt_emu_thread *t, int state)
{
    const unsigned last = tt_emu.ready[--tt_emu.ready_count];
    tt_emu.ready[t->ready_slot] = last;
    tt_emu.thread[last].ready_slot = t->ready_slot;
    t->state = state;
}

/* A point where another thread may run first: before an atomic or a fence. */
static void tt_emu_maybe_yield(void)
{
    if ((tt_emu_random() & 3) == 0)
        tt_emu_yield();
}

static void *tt_emu_dynamic_shared(void) { return tt_emu.shared; }

/* ---- barriers and warp collectives ---------------------------------------------------------- */

static void tt_emu_release_barrier_if_complete(void)
{
    if (tt_emu.at_barrier == 0 || tt_emu.at_barrier != tt_emu.live)
        return;
    for (unsigned i = 0; i < tt_emu.threads; i++)
        if (tt_emu.thread[i].state == TT_EMU_AT_BARRIER) {
            tt_emu_make_ready(&tt_emu.thread[i]);
            tt_emu.thread[i].result = (unsigned long long)tt_emu.barrier_or;
        }
    tt_emu.at_barrier = 0;
    tt_emu.barrier_or = 0;
}

static int tt_emu_syncthreads_with(int predicate)
{
    tt_emu_make_waiting(tt_emu_self, TT_EMU_AT_BARRIER);
    tt_emu.at_barrier++;
    tt_emu.barrier_or |= predicate != 0;
    tt_emu_release_barrier_if_complete();
    tt_emu_yield();
    return (int)tt_emu_self->result;
}

static inline void __syncthreads(void) { (void)tt_emu_syncthreads_with(0); }
static inline int __syncthreads_or(int predicate) { return tt_emu_syncthreads_with(predicate); }
static inline void __threadfence(void)
{
    tt_emu_maybe_yield();
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* The lanes of this thread's warp: [first, first + count). */
static unsigned tt_emu_warp_first(void) { return tt_emu_self->linear & ~31u; }
static unsigned tt_emu_warp_count(void)
{
    const unsigned first = tt_emu_warp_first();
    return tt_emu.threads - first < 32 ? tt_emu.threads - first : 32;
}

static unsigned long long tt_emu_warp_collective(unsigned mask, int kind, int offset,
                                                 unsigned long long value)
{
    const unsigned first = tt_emu_warp_first(), count = tt_emu_warp_count();
    if (mask != 0xffffffffu || count != 32) {
        tt_emu_fail("a warp collective whose mask is not a full warp of existing lanes");
        tt_emu_yield();
    }
    tt_emu_make_waiting(tt_emu_self, TT_EMU_AT_WARP);
    tt_emu_self->kind = kind;
    tt_emu_self->offset = offset;
    tt_emu_self->value = value;
    tt_emu_thread *lanes = tt_emu.thread + first;
    if (tt_emu.warp_exited[first / 32])
        tt_emu_fail("a warp collective with a lane that has exited");
    if (++tt_emu.warp_arrived[first / 32] == 32) { /* the last lane in: every lane's result */
        tt_emu.warp_arrived[first / 32] = 0;
        unsigned long long any = 0;
        for (unsigned l = 0; l < 32; l++) {
            if (lanes[l].kind != kind || lanes[l].offset != offset)
                tt_emu_fail("lanes of a warp meet at different collectives");
            any |= lanes[l].value != 0;
        }
        for (unsigned l = 0; l < 32; l++) {
            const unsigned src =
                kind == TT_EMU_SHFL_DOWN ? l + (unsigned)offset : l ^ (unsigned)offset;
            lanes[l].result = kind == TT_EMU_ANY ? any
                              : src < 32         ? lanes[src].value
                                                 : lanes[l].value;
            tt_emu_make_ready(&lanes[l]);
        }
    }
    tt_emu_yield();
    return tt_emu_self->result;
}

template <typename T>
static inline unsigned long long tt_emu_bits(T v)
{
    static_assert(sizeof(T) <= 8, "a shuffled value is at most 8 bytes");
    unsigned long long b = 0;
    memcpy(&b, &v, sizeof v);
    return b;
}

template <typename T>
static inline T tt_emu_from_bits(unsigned long long b)
{
    T v;
    memcpy(&v, &b, sizeof v);
    return v;
}

template <typename T>
static inline T __shfl_down_sync(unsigned mask, T v, int delta)
{
    return tt_emu_from_bits<T>(
        tt_emu_warp_collective(mask, TT_EMU_SHFL_DOWN, delta, tt_emu_bits(v)));
}

template <typename T>
static inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask)
{
    return tt_emu_from_bits<T>(
        tt_emu_warp_collective(mask, TT_EMU_SHFL_XOR, lane_mask, tt_emu_bits(v)));
}

static inline int __any_sync(unsigned mask, int predicate)
{
    return (int)tt_emu_warp_collective(mask, TT_EMU_ANY, 0, predicate != 0);
}

/* ---- atomics: really atomic, with a chance for another thread to go first ------------------ */

template <typename T>
static inline T atomicAdd(T *p, T v)
{
    tt_emu_maybe_yield();
    return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

template <typename T>
static inline T atomicOr(T *p, T v)
{
    tt_emu_maybe_yield();
    return __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
}

template <typename T>
static inline T atomicMin(T *p, T v)
{
    tt_emu_maybe_yield();
    T seen = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (v < seen &&
           !__atomic_compare_exchange_n(p, &seen, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
    return seen;
}

#include "cuda/emulation/host_launch.h"

#endif /* TT_CUDA_EMULATION_HOST_PRELUDE_H */
