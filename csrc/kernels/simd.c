/*
 * simd.c: the kernels' instruction-set level, detected once and lowered only by tests.
 */
#include "kernels/simd.h"

static int current = -1; /* -1: not detected yet */
static int forced = 0;   /* a test set the level: every path of it runs, slow or not */

tt_simd tt_simd_max(void)
{
#if defined(TT_HAVE_AVX2_TARGET)
    __builtin_cpu_init(); /* idempotent; needed when called before libgcc's constructor ran */
    if (__builtin_cpu_supports("avx2"))
        return TT_SIMD_AVX2;
#endif
#if defined(__SSE2__)
    return TT_SIMD_SSE2;
#else
    return TT_SIMD_SCALAR;
#endif
}

tt_simd tt_simd_level(void)
{
    int level = current;
    if (level < 0) /* two threads may both detect: they find the same answer */
        current = level = (int)tt_simd_max();
    return (tt_simd)level;
}

int tt_simd_set(int level)
{
    const int previous = (int)tt_simd_level();
    if (level < 0 || level > (int)tt_simd_max())
        return -1;
    current = level;
    forced = 1;
    return previous;
}

int tt_simd_gather_is_fast(void)
{
#if defined(TT_HAVE_AVX2_TARGET)
    if (forced)
        return 1;
    __builtin_cpu_init();
    /* AMD's Zen cores microcode vgatherdps: a gather of eight floats costs more than eight
     * scalar loads there, and the SSE2 path that inserts lane by lane is faster. */
    return !__builtin_cpu_is("amd");
#else
    return 0;
#endif
}
