/*
 * fake_libcuda.c: a stand-in for libcuda.so.1, for running torchtally._C_cuda's driver layer on
 * a machine without a GPU (TORCHTALLY_LIBCUDA=<this library>): the driver tests, and the CUDA
 * emulation (`python -m torchtally.cuda emulate`; build.py compiles this file, shipped with the
 * package, with the system C compiler). It exports the driver functions torchtally loads,
 * with host memory for device memory, and by itself runs no kernel. What it does is set by the
 * environment:
 *
 *   FAKE_CUDA_INIT     the result of cuInit (default 0; 100 is CUDA_ERROR_NO_DEVICE)
 *   FAKE_CUDA_VERSION  cuDriverGetVersion's answer (default 13000)
 *   FAKE_CUDA_ARCH     the device's compute capability, e.g. 90 (default)
 *
 *   FAKE_CUDA_LOG      a file that gets a line per kernel launch: "name gx gy bx by shared gz bz
 *                      optin", optin being the kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES attribute
 *                      as cuFuncSetAttribute last set it (0: never set, the 48 KiB default)
 *   FAKE_CUDA_REJECT   "pos,code": the latch reports that rejection (a label read where the
 *                      real latch reads it) instead of a clean record
 *   FAKE_CUDA_CAPTURING  1: every stream says it is capturing a CUDA graph
 *
 * cuModuleLoadData accepts an ELF image (a cubin) or PTX text and refuses anything else, as the
 * driver does (CUDA_ERROR_INVALID_IMAGE); cuModuleGetFunction finds a name when it occurs in the
 * image (a cubin holds its kernels' names in its string table) and returns a handle pointing at
 * that name. A launch runs nothing but the latch, which it emulates on the host (device memory
 * is host memory here): it copies the call's error record into the report, so the host's
 * protocol around the kernels runs as on a GPU. Built with -DFAKE_OLD_DRIVER it lacks
 * cuStreamIsCapturing, as a driver too old for torchtally would.
 *
 * An emulation image (a shared library: the kernels' source built for the host, see
 * csrc/cuda/emulation/README.md) is loaded with dlopen, and then every launch runs the kernel
 * for real on the host, latch included; a launch the emulation finds broken (a deadlock, a
 * divergent warp collective) fails with CUDA_ERROR_LAUNCH_FAILED, its reason on stderr.
 *
 *   FAKE_CUDA_SMS      the device's multiprocessor count (default 132): a small one makes
 *                      small grids, whose threads stride over several elements
 *   FAKE_CUDA_SEED     the seed of the emulation's block order and thread interleavings
 *
 * Host synchronisations are counted (fake_cuda_counts, fake_cuda_reset_counts; the emulation's
 * runner asserts an update makes none in deferred mode): the synchronous copies (cuMemcpy,
 * cuMemcpyDtoH/HtoD), cuStreamSynchronize, cuEventSynchronize and cuCtxSynchronize; apart from
 * those, cuStreamWaitEvent (the device waits, not the host) and cuEventQuery (a query returns at
 * once). A planted fault for the runner's own test:
 *
 *   FAKE_CUDA_PLANT_SYNC  a kernel name: each launch of it first calls cuStreamSynchronize, as a
 *                         host path that waits for the device before launching would
 */
#define _GNU_SOURCE /* memfd_create */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>
#include <unistd.h>

/* the latch's arguments and report; build.py takes the header from the kernels' source */
#include "cuda/device_abi.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v != NULL && v[0] != '\0' ? atoi(v) : fallback;
}

typedef struct {
    const char *data;
    size_t size;
} fake_module;

/* The loaded emulation library's entry points (host_prelude.h), when one was loaded. */
static struct {
    int (*has)(const char *name);
    int (*launch)(const char *name, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                  unsigned bz, size_t shared, void **params);
    const char *(*error)(void);
} emulation;

/* An ELF shared object (not a cubin, an executable): the emulation image. Opened from a memfd,
 * as the driver takes an image from memory. */
static int load_emulation(const unsigned char *image, size_t size)
{
    uint16_t type;
    memcpy(&type, image + 0x10, 2);
    if (type != 3 /* ET_DYN */)
        return 0;
    const int fd = memfd_create("torchtally-emulation", 0);
    char path[64];
    if (fd < 0 || write(fd, image, size) != (ssize_t)size)
        return -1;
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    close(fd);
    if (lib == NULL) {
        fprintf(stderr, "fake libcuda: %s\n", dlerror());
        return -1;
    }
    *(void **)&emulation.has = dlsym(lib, "tt_emu_has");
    *(void **)&emulation.launch = dlsym(lib, "tt_emu_launch");
    *(void **)&emulation.error = dlsym(lib, "tt_emu_error");
    void (*seed)(unsigned long long) = NULL;
    *(void **)&seed = dlsym(lib, "tt_emu_seed");
    if (emulation.has == NULL || emulation.launch == NULL || emulation.error == NULL || !seed)
        return -1;
    const char *s = getenv("FAKE_CUDA_SEED");
    seed(s != NULL ? strtoull(s, NULL, 10) : 0);
    return 1;
}

static int context_token;
static __thread void *current_context;

CUresult cuInit(unsigned flags) { return env_int("FAKE_CUDA_INIT", 0); }
CUresult cuDriverGetVersion(int *v)
{
    *v = env_int("FAKE_CUDA_VERSION", 13000);
    return 0;
}
CUresult cuDeviceGet(int *d, int ordinal)
{
    *d = ordinal;
    return ordinal == 0 ? 0 : 101;
}
CUresult cuDeviceGetCount(int *n)
{
    *n = 1;
    return 0;
}

CUresult cuDeviceGetAttribute(int *value, int attribute, int device)
{
    const int arch = env_int("FAKE_CUDA_ARCH", 90);
    switch (attribute) {
    case 16: *value = env_int("FAKE_CUDA_SMS", 132); return 0; /* multiprocessors */
    case 75: *value = arch / 10; return 0;                     /* compute capability major */
    case 76: *value = arch % 10; return 0;                     /* minor */
    default: *value = 0; return 0;
    }
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int device)
{
    *ctx = &context_token;
    return 0;
}
CUresult cuCtxGetCurrent(void **ctx)
{
    *ctx = current_context;
    return 0;
}
CUresult cuCtxSetCurrent(void *ctx)
{
    current_context = ctx;
    return 0;
}

static size_t elf_size(const unsigned char *p)
{
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, p + 0x28, 8);
    memcpy(&shentsize, p + 0x3A, 2);
    memcpy(&shnum, p + 0x3C, 2);
    return (size_t)(shoff + (uint64_t)shentsize * shnum);
}

CUresult cuModuleLoadData(void **module, const void *image)
{
    const char *p = image;
    size_t size;
    if (memcmp(p,
               "\x7f"
               "ELF",
               4) == 0) {
        size = elf_size(image);
        if (load_emulation(image, size) < 0)
            return 200;
    } else if (strstr(p, ".version") != NULL && strstr(p, ".target") != NULL)
        size = strlen(p);
    else
        return 200; /* CUDA_ERROR_INVALID_IMAGE */
    fake_module *m = malloc(sizeof *m);
    m->data = malloc(size);
    memcpy((char *)m->data, p, size);
    m->size = size;
    *module = m;
    return 0;
}

CUresult cuModuleGetFunction(void **f, void *module, const char *name)
{
    const fake_module *m = module;
    const size_t n = strlen(name);
    for (size_t i = 0; i + n <= m->size; i++) {
        if (memcmp(m->data + i, name, n) == 0 && (i + n == m->size || m->data[i + n] == '\0')) {
            *f = (void *)(m->data + i);
            return 0;
        }
    }
    return 500; /* CUDA_ERROR_NOT_FOUND */
}

CUresult cuModuleUnload(void *module)
{
    fake_module *m = module;
    free((void *)m->data);
    free(m);
    return 0;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, void *f, int threads, size_t shared)
{
    *n = 4;
    return 0;
}

/* The latch on the host: the record into the report, or FAKE_CUDA_REJECT's rejection. */
static void latch(const tt_latch_args *a)
{
    tt_cuda_report r;
    memset(&r, 0, sizeof r);
    r.key = a->rec->key;
    r.thr_key = a->rec->thr_key;
    const char *reject = getenv("FAKE_CUDA_REJECT");
    long long pos;
    int code;
    if (reject != NULL && sscanf(reject, "%lld,%d", &pos, &code) == 2) {
        r.key = TT_CUDA_KEY(pos, code);
        const tt_dview *v = &a->by_code[code % 5];
        if (v->data != NULL && v->dtype == TT_I64) {
            const int64_t row = pos / a->columns, col = pos - row * a->columns;
            r.label = *(const int64_t *)(v->data + row * v->rstep + col * v->cstep);
        }
    }
    *a->report = r;
}

/* ---- host synchronisations, counted --------------------------------------------------------- */

/* [0] host synchronisations, [1] cuStreamWaitEvent (a device-side wait), [2] cuEventQuery */
static long long counts[3];

void fake_cuda_reset_counts(void) { memset(counts, 0, sizeof counts); }
void fake_cuda_counts(long long out[3]) { memcpy(out, counts, sizeof counts); }

CUresult cuStreamSynchronize(void *s)
{
    counts[0]++;
    return 0;
}
CUresult cuCtxSynchronize(void)
{
    counts[0]++;
    return 0;
}
CUresult cuEventSynchronize(void *e)
{
    counts[0]++;
    return 0;
}
CUresult cuEventQuery(void *e)
{
    counts[2]++;
    return 0;
}
CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags)
{
    counts[1]++;
    return 0;
}
/* synchronous copies: device memory is host memory here */
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
    counts[0]++;
    memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
    return 0;
}
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t bytes)
{
    return cuMemcpy((CUdeviceptr)(uintptr_t)dst, src, bytes);
}
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t bytes)
{
    return cuMemcpy(dst, (CUdeviceptr)(uintptr_t)src, bytes);
}

/* ---- per-kernel attributes: the dynamic shared memory opt-in ------------------------------- */

#define MAX_OPTINS 256
#define CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES 8
static struct {
    const void *f;
    int bytes;
} optins[MAX_OPTINS];
static int n_optins;

CUresult cuFuncSetAttribute(void *f, int attribute, int value)
{
    if (attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        return 0;
    for (int i = 0; i < n_optins; i++) {
        if (optins[i].f == f) {
            optins[i].bytes = value;
            return 0;
        }
    }
    if (n_optins == MAX_OPTINS)
        return 1; /* CUDA_ERROR_INVALID_VALUE */
    optins[n_optins].f = f;
    optins[n_optins++].bytes = value;
    return 0;
}

static int optin_of(const void *f)
{
    for (int i = 0; i < n_optins; i++)
        if (optins[i].f == f)
            return optins[i].bytes;
    return 0;
}

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void *stream, void **params, void **extra)
{
    const char *name = f; /* cuModuleGetFunction's handle is the name in the image */
    const char *path = getenv("FAKE_CUDA_LOG");
    if (path != NULL && path[0] != '\0') {
        FILE *log = fopen(path, "a");
        if (log != NULL) {
            fprintf(log, "%s %u %u %u %u %u %u %u %d\n", name, gx, gy, bx, by, shared, gz, bz,
                    optin_of(f));
            fclose(log);
        }
    }
    const char *plant = getenv("FAKE_CUDA_PLANT_SYNC");
    if (plant != NULL && strcmp(plant, name) == 0)
        cuStreamSynchronize(stream);
    if (emulation.launch != NULL && getenv("FAKE_CUDA_REJECT") == NULL) {
        if (emulation.launch(name, gx, gy, gz, bx, by, bz, shared, params) != 0) {
            fprintf(stderr, "fake libcuda: %s: %s\n", name, emulation.error());
            return 719; /* CUDA_ERROR_LAUNCH_FAILED */
        }
        return 0;
    }
    if (strcmp(name, "tt_latch") == 0)
        latch((const tt_latch_args *)params[0]);
    return 0;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
    *p = (CUdeviceptr)(uintptr_t)malloc(bytes);
    return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p)
{
    free((void *)(uintptr_t)p);
    return 0;
}
CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, void *s)
{
    memset((void *)(uintptr_t)p, v, n);
    return 0;
}
CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned flags)
{
    *p = calloc(1, bytes);
    return 0;
}
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *host, unsigned flags)
{
    *d = (CUdeviceptr)(uintptr_t)host;
    return 0;
}
CUresult cuMemFreeHost(void *p)
{
    free(p);
    return 0;
}
CUresult cuEventCreate(void **e, unsigned flags)
{
    *e = malloc(1);
    return 0;
}
CUresult cuEventRecord(void *e, void *s) { return 0; }
#ifndef FAKE_OLD_DRIVER
CUresult cuStreamIsCapturing(void *s, int *status)
{
    *status = env_int("FAKE_CUDA_CAPTURING", 0);
    return 0;
}
#endif

CUresult cuGetErrorName(CUresult r, const char **name)
{
    switch (r) {
    case 100: *name = "CUDA_ERROR_NO_DEVICE"; return 0;
    case 200: *name = "CUDA_ERROR_INVALID_IMAGE"; return 0;
    case 500: *name = "CUDA_ERROR_NOT_FOUND"; return 0;
    case 719: *name = "CUDA_ERROR_LAUNCH_FAILED"; return 0;
    default: *name = NULL; return 1;
    }
}

CUresult cuGetErrorString(CUresult r, const char **text)
{
    switch (r) {
    case 100: *text = "no CUDA-capable device is detected"; return 0;
    case 200: *text = "device kernel image is invalid"; return 0;
    case 500: *text = "named symbol not found"; return 0;
    case 719: *text = "unspecified launch failure"; return 0;
    default: *text = NULL; return 1;
    }
}
