/*
 * host_launch.h: the emulation's launch (part of host_prelude.h, which includes it after the
 * machine, the barriers and the atomics it uses): a grid run block by block in a shuffled order,
 * each block's threads as fibers, and the entry points the fake driver calls.
 */
#ifndef TT_CUDA_EMULATION_HOST_LAUNCH_H
#define TT_CUDA_EMULATION_HOST_LAUNCH_H

/* ---- the launch ----------------------------------------------------------------------------- */

static void tt_emu_thread_main(void)
{
    tt_emu.body(tt_emu.args);
    tt_emu_make_waiting(tt_emu_self, TT_EMU_DONE);
    tt_emu.live--;
    const unsigned warp = tt_emu_self->linear / 32;
    tt_emu.warp_exited[warp]++;
    if (tt_emu.warp_arrived[warp] != 0)
        tt_emu_fail("a lane exited while its warp waits at a collective");
    tt_emu_release_barrier_if_complete();
    setcontext(&tt_emu.scheduler);
}

static int tt_emu_prepare(unsigned threads, size_t shared)
{
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    if (tt_emu.thread == NULL) {
        tt_emu.thread = (tt_emu_thread *)calloc(TT_EMU_MAX_THREADS, sizeof(tt_emu_thread));
        tt_emu.ready = (unsigned *)calloc(TT_EMU_MAX_THREADS, sizeof(unsigned));
        if (tt_emu.thread == NULL || tt_emu.ready == NULL)
            return -1;
    }
    const size_t stacks = (size_t)threads * TT_EMU_STACK;
    if (stacks > tt_emu.stacks_bytes) {
        free(tt_emu.stacks);
        tt_emu.stacks = (char *)malloc(stacks);
        tt_emu.stacks_bytes = tt_emu.stacks != NULL ? stacks : 0;
        if (tt_emu.stacks == NULL)
            return -1;
    }
    const size_t map = (shared + page - 1) / page * page + page;
    if (map > tt_emu.shared_map_bytes) {
        if (tt_emu.shared_map != NULL)
            munmap(tt_emu.shared_map, tt_emu.shared_map_bytes);
        void *m = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            tt_emu.shared_map = NULL;
            tt_emu.shared_map_bytes = 0;
            return -1;
        }
        tt_emu.shared_map = (unsigned char *)m;
        tt_emu.shared_map_bytes = map;
        mprotect(tt_emu.shared_map + map - page, page, PROT_NONE); /* an overrun faults */
    }
    /* the launch's bytes end where the guard page starts (rounded to 16 for alignment) */
    const size_t rounded = (shared + 15) / 16 * 16;
    tt_emu.shared = tt_emu.shared_map + tt_emu.shared_map_bytes - page - rounded;
    tt_emu.shared_bytes = shared;
    return 0;
}

static int tt_emu_run_block(void)
{
    const unsigned n = tt_emu.threads;
    memset(tt_emu.shared, 0xA5, tt_emu.shared_bytes); /* device shared memory starts undefined */
    tt_emu.ready_count = 0;
    tt_emu.live = n;
    memset(tt_emu.warp_arrived, 0, sizeof tt_emu.warp_arrived);
    memset(tt_emu.warp_exited, 0, sizeof tt_emu.warp_exited);
    for (unsigned i = 0; i < n; i++) {
        tt_emu_thread *t = &tt_emu.thread[i];
        memset(t, 0, sizeof *t);
        t->linear = i;
        t->index.x = i % tt_emu.block.x;
        t->index.y = i / tt_emu.block.x % tt_emu.block.y;
        t->index.z = i / (tt_emu.block.x * tt_emu.block.y);
        tt_emu_make_ready(t);
        getcontext(&t->context);
        t->context.uc_stack.ss_sp = tt_emu.stacks + (size_t)i * TT_EMU_STACK;
        t->context.uc_stack.ss_size = TT_EMU_STACK;
        t->context.uc_link = NULL;
        makecontext(&t->context, tt_emu_thread_main, 0);
    }
    tt_emu.at_barrier = 0;
    tt_emu.barrier_or = 0;
    while (!tt_emu.failed && tt_emu.live > 0) {
        if (tt_emu.ready_count == 0) {
            tt_emu_self = &tt_emu.thread[0];
            for (unsigned i = 0; i < n; i++)
                if (tt_emu.thread[i].state != TT_EMU_DONE)
                    tt_emu_self = &tt_emu.thread[i];
            tt_emu_fail("deadlock: threads wait at a barrier or a warp collective that cannot "
                        "complete");
            break;
        }
        tt_emu_self = &tt_emu.thread[tt_emu.ready[tt_emu_random() % tt_emu.ready_count]];
        swapcontext(&tt_emu.scheduler, &tt_emu_self->context);
    }
    return tt_emu.failed ? -1 : 0;
}

/* Runs body(args) over grid x block threads with `shared` bytes of dynamic shared memory;
 * 0, or -1 with the reason in tt_emu.error. */
static int tt_emu_run(void (*body)(const void *), const void *args, dim3 grid, dim3 block,
                      size_t shared)
{
    const unsigned long long threads = (unsigned long long)block.x * block.y * block.z;
    tt_emu.failed = 0;
    tt_emu.error[0] = '\0';
    if (threads == 0 || threads > TT_EMU_MAX_THREADS || grid.x == 0 || grid.y == 0 || grid.z == 0) {
        snprintf(tt_emu.error, sizeof tt_emu.error, "a launch of %llu threads per block", threads);
        return -1;
    }
    if (tt_emu_prepare((unsigned)threads, shared) != 0) {
        snprintf(tt_emu.error, sizeof tt_emu.error, "out of memory");
        return -1;
    }
    tt_emu.grid = grid;
    tt_emu.block = block;
    tt_emu.threads = (unsigned)threads;
    tt_emu.body = body;
    tt_emu.args = args;
    const unsigned long long blocks = (unsigned long long)grid.x * grid.y * grid.z;
    unsigned long long *order = (unsigned long long *)malloc(blocks * sizeof *order);
    if (order == NULL)
        return -1;
    for (unsigned long long b = 0; b < blocks; b++)
        order[b] = b;
    for (unsigned long long b = blocks; b > 1; b--) { /* Fisher-Yates: blocks in any order */
        const unsigned long long j = tt_emu_random() % b, keep = order[b - 1];
        order[b - 1] = order[j];
        order[j] = keep;
    }
    int status = 0;
    for (unsigned long long b = 0; b < blocks && status == 0; b++) {
        tt_emu.block_index.x = (unsigned)(order[b] % grid.x);
        tt_emu.block_index.y = (unsigned)(order[b] / grid.x % grid.y);
        tt_emu.block_index.z = (unsigned)(order[b] / ((unsigned long long)grid.x * grid.y));
        status = tt_emu_run_block();
    }
    free(order);
    return status;
}

/* The body of kernel K: its one argument struct, read from where `args` points. */
template <typename F>
struct tt_emu_argument_of;
template <typename A>
struct tt_emu_argument_of<void (*)(A)> {
    typedef A type;
};

template <auto K>
static void tt_emu_body(const void *args)
{
    K(*(const typename tt_emu_argument_of<decltype(K)>::type *)args);
}

/* emulate_launch(kernel, grid, block, shared, args): kernel<<<grid, block, shared>>>(args),
 * run to completion; 0 or -1 (tt_emu.error says why). */
#define emulate_launch(kernel, grid, block, shared, args)                                          \
    tt_emu_run(tt_emu_body<kernel>, &(args), (grid), (block), (shared))

/* The table of kernels a driver looks up by name: TT_EMU_KERNEL(name) per kernel, after the
 * kernels' source (emulation.py appends it from kernel_table.h's names). */
typedef struct {
    const char *name;
    void (*body)(const void *);
} tt_emu_kernel;
#define TT_EMU_KERNEL(name) {#name, tt_emu_body<name>},
extern const tt_emu_kernel tt_emu_kernels[]; /* ends with {NULL, NULL} */

#define TT_EMU_EXPORT extern "C" __attribute__((visibility("default")))

static const tt_emu_kernel *tt_emu_find(const char *name)
{
    for (const tt_emu_kernel *k = tt_emu_kernels; k->name != NULL; k++)
        if (strcmp(k->name, name) == 0)
            return k;
    return NULL;
}

/* The driver's side (a libcuda stand-in that loads this library): whether a kernel exists, the
 * seed of the shuffles, a launch as cuLaunchKernel's arguments (params[0] points at the
 * kernel's argument struct) and the reason the last one failed. */
TT_EMU_EXPORT int tt_emu_has(const char *name) { return tt_emu_find(name) != NULL; }
TT_EMU_EXPORT void tt_emu_seed(unsigned long long seed) { tt_emu.rng = seed; }
TT_EMU_EXPORT const char *tt_emu_error(void) { return tt_emu.error; }
TT_EMU_EXPORT int tt_emu_launch(const char *name, unsigned gx, unsigned gy, unsigned gz,
                                unsigned bx, unsigned by, unsigned bz, size_t shared, void **params)
{
    const tt_emu_kernel *k = tt_emu_find(name);
    if (k == NULL) {
        snprintf(tt_emu.error, sizeof tt_emu.error, "no kernel %s", name);
        return -1;
    }
    const dim3 grid = {gx, gy, gz}, block = {bx, by, bz};
    return tt_emu_run(k->body, params[0], grid, block, shared);
}

#endif /* TT_CUDA_EMULATION_HOST_LAUNCH_H */
