/*
 * simd.h: which vector instruction set the kernels use. The level starts at the widest one that
 * both this build and the running CPU have (AVX2 is compiled per function and checked at run
 * time, so one x86-64 binary runs everywhere); tests lower it to run every path on the same
 * inputs and compare them bit for bit (torchtally._C._set_simd_level).
 */
#ifndef TT_SIMD_H
#define TT_SIMD_H

typedef enum {
    TT_SIMD_SCALAR = 0, /* plain C loops only */
    TT_SIMD_SSE2 = 1,   /* every x86-64 */
    TT_SIMD_AVX2 = 2,   /* checked with __builtin_cpu_supports */
} tt_simd;

/* The level in use. */
tt_simd tt_simd_level(void);

/* The widest level this build and CPU support. */
tt_simd tt_simd_max(void);

/* Sets the level (0 <= level <= tt_simd_max(), else nothing changes); returns the previous one,
 * or -1 when `level` is out of range. For tests: not meant to change while kernels run. */
int tt_simd_set(int level);

/* Whether AVX2 gathers beat lane-by-lane loads on this CPU (not on AMD's Zen cores); always 1
 * once a test has set the level, so that every path of that level runs. */
int tt_simd_gather_is_fast(void);

/* gcc / clang on x86-64: AVX2 functions can be compiled into an SSE2 build. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TT_HAVE_AVX2_TARGET 1
#endif

#endif /* TT_SIMD_H */
