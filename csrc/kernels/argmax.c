/*
 * argmax.c: the argmax of each row of [n, C] scores (argmax.h), the prediction of
 * confmat_scores. The workload is a validation batch of N from tens to millions rows and C from
 * 2 to thousands classes; the scan is compute-bound, so its per-row chain is what matters.
 *
 * A row's running maximum is a chain of dependent compare-selects, so one row at a time runs at
 * the latency of that chain. ROWS_AT_ONCE rows are scanned together, column by column, so the
 * chains overlap (and the compiler can put the rows in vector lanes). A group that holds a NaN
 * is rescanned row by row to find the first NaN row. float32 first runs a vector scan (SSE2, or
 * AVX2 where the CPU has it and its gathers are fast) over as many leading rows as it can; the
 * typed scalar scan, one per dtype from a table, finishes the rest.
 */
#include "kernels/argmax.h"
#include "kernels/simd.h"

#define ROWS_AT_ONCE 8

/* A typed scan: dst[i] for rows first <= i < n of the n rows at `base`; returns the first row
 * holding a NaN (the rows before it filled), or -1. */
typedef int64_t (*argmax_scan)(const char *base, int64_t first, int64_t n, int64_t classes,
                               int64_t row_step, int64_t col_step, int64_t *dst);

/* Defines name##_row: the argmax of the row at `row`, or -1 when it holds a NaN. */
#define DEFINE_ARGMAX_ROW(name, acc, load)                                                         \
    static int64_t name##_row(const char *row, int64_t classes, int64_t col_step)                  \
    {                                                                                              \
        acc best = load(row);                                                                      \
        int64_t best_j = 0;                                                                        \
        int nan = best != best;                                                                    \
        for (int64_t j = 1; j < classes; j++) {                                                    \
            const acc v = load(row + j * col_step);                                                \
            const int greater = v > best;                                                          \
            nan |= v != v;                                                                         \
            best = greater ? v : best;                                                             \
            best_j = greater ? j : best_j;                                                         \
        }                                                                                          \
        return nan ? -1 : best_j;                                                                  \
    }

/* Defines name##_group: the argmaxes of the ROWS_AT_ONCE rows at `group` into dst, scanned
 * together column by column (in locals until the end: the compiler cannot tell that dst
 * aliases no score); returns nonzero when one of the rows holds a NaN. */
#define DEFINE_ARGMAX_GROUP(name, acc, load)                                                       \
    static int name##_group(const char *group, int64_t classes, int64_t row_step,                  \
                            int64_t col_step, int64_t *dst)                                        \
    {                                                                                              \
        acc best[ROWS_AT_ONCE];                                                                    \
        int64_t best_j[ROWS_AT_ONCE];                                                              \
        int nan = 0;                                                                               \
        for (int r = 0; r < ROWS_AT_ONCE; r++) {                                                   \
            best[r] = load(group + r * row_step);                                                  \
            best_j[r] = 0;                                                                         \
            nan |= best[r] != best[r];                                                             \
        }                                                                                          \
        for (int64_t j = 1; j < classes; j++) {                                                    \
            const char *column = group + j * col_step;                                             \
            for (int r = 0; r < ROWS_AT_ONCE; r++) {                                               \
                const acc v = load(column + r * row_step);                                         \
                const int greater = v > best[r];                                                   \
                nan |= v != v;                                                                     \
                best[r] = greater ? v : best[r];                                                   \
                best_j[r] = greater ? j : best_j[r];                                               \
            }                                                                                      \
        }                                                                                          \
        for (int r = 0; r < ROWS_AT_ONCE; r++)                                                     \
            dst[r] = best_j[r];                                                                    \
        return nan;                                                                                \
    }

/* Defines `name`, an argmax_scan: groups of rows, then the rows left one by one. A group that
 * holds a NaN is rescanned row by row: its first NaN row ends the scan. */
#define DEFINE_ARGMAX_SCAN(name)                                                                   \
    static int64_t name(const char *base, int64_t first, int64_t n, int64_t classes,               \
                        int64_t row_step, int64_t col_step, int64_t *dst)                          \
    {                                                                                              \
        int64_t i = first;                                                                         \
        for (; i + ROWS_AT_ONCE <= n; i += ROWS_AT_ONCE) {                                         \
            if (!name##_group(base + i * row_step, classes, row_step, col_step, dst + i))          \
                continue;                                                                          \
            for (int64_t k = i; k < i + ROWS_AT_ONCE; k++) {                                       \
                const int64_t j = name##_row(base + k * row_step, classes, col_step);              \
                if (j < 0)                                                                         \
                    return k;                                                                      \
                dst[k] = j;                                                                        \
            }                                                                                      \
        }                                                                                          \
        for (; i < n; i++) {                                                                       \
            const int64_t j = name##_row(base + i * row_step, classes, col_step);                  \
            if (j < 0)                                                                             \
                return i;                                                                          \
            dst[i] = j;                                                                            \
        }                                                                                          \
        return -1;                                                                                 \
    }

/* The three for one dtype: scores read by `load` (tt_f16_at, ...), compared as `acc`. */
#define DEFINE_ARGMAX(name, acc, load)                                                             \
    DEFINE_ARGMAX_ROW(name, acc, load)                                                             \
    DEFINE_ARGMAX_GROUP(name, acc, load)                                                           \
    DEFINE_ARGMAX_SCAN(name)

DEFINE_ARGMAX(argmax_f16, float, tt_f16_at)
DEFINE_ARGMAX(argmax_bf16, float, tt_bf16_at)
DEFINE_ARGMAX(argmax_f32, float, tt_f32_at)
DEFINE_ARGMAX(argmax_f64, double, tt_f64_at)

/* The scalar scan of each score dtype (NULL: not a score dtype; validated before). */
static const argmax_scan scalar_scans[TT_NDTYPES] = {
    [TT_F16] = argmax_f16,
    [TT_BF16] = argmax_bf16,
    [TT_F32] = argmax_f32,
    [TT_F64] = argmax_f64,
};

#if defined(__SSE2__)
#include <emmintrin.h>

/* float32 on SSE2 (every x86-64): four rows in the four lanes of a vector, so one compare and
 * two selects serve four rows. Returns how many leading rows it filled; it stops before a group
 * of four that holds a NaN, and before the last n % 4 rows, which the scalar scan finishes. */
static int64_t argmax_rows_f32_sse2(const char *base, int64_t n, int64_t classes, int64_t row_step,
                                    int64_t col_step, int64_t *dst)
{
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const char *r0 = base + i * row_step, *r1 = r0 + row_step, *r2 = r1 + row_step,
                   *r3 = r2 + row_step;
#define COLUMN(at)                                                                                 \
    _mm_set_ps(*(const float *)(r3 + (at)), *(const float *)(r2 + (at)),                           \
               *(const float *)(r1 + (at)), *(const float *)(r0 + (at)))
        __m128 best = COLUMN(0);
        __m128i best_j = _mm_setzero_si128();
        __m128 nan = _mm_cmpunord_ps(best, best);
        for (int64_t j = 1; j < classes; j++) {
            const __m128 v = COLUMN(j * col_step);
            const __m128 greater = _mm_cmpgt_ps(v, best);
            const __m128i take = _mm_castps_si128(greater);
            nan = _mm_or_ps(nan, _mm_cmpunord_ps(v, v));
            best = _mm_or_ps(_mm_and_ps(greater, v), _mm_andnot_ps(greater, best));
            best_j = _mm_or_si128(_mm_and_si128(take, _mm_set1_epi32((int32_t)j)),
                                  _mm_andnot_si128(take, best_j));
        }
#undef COLUMN
        if (_mm_movemask_ps(nan))
            return i;
        int32_t lanes[4];
        _mm_storeu_si128((__m128i *)lanes, best_j);
        for (int r = 0; r < 4; r++)
            dst[i + r] = lanes[r];
    }
    return i;
}
#endif

#if defined(TT_HAVE_AVX2_TARGET)
#include <immintrin.h>

/* float32 on AVX2 (checked at run time): eight rows in the eight lanes, each column fetched by
 * one gather instead of lane-by-lane inserts. The same contract as the SSE2 scan: it stops
 * before a group of sixteen rows that holds a NaN and before the last n % 16 rows. The gather
 * offsets are int32: the caller checks that 15 * row_step fits. */
__attribute__((target("avx2"))) static int64_t argmax_rows_f32_avx2(const char *base, int64_t n,
                                                                    int64_t classes,
                                                                    int64_t row_step,
                                                                    int64_t col_step, int64_t *dst)
{
    const __m256i rows = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                            _mm256_set1_epi32((int32_t)row_step));
    const int64_t half = 8 * row_step; /* the second group of eight */
    int64_t i = 0;
    /* two groups of eight per pass: their compare-blend chains are independent and overlap */
    for (; i + 16 <= n; i += 16) {
        const char *group = base + i * row_step;
        __m256 best0 = _mm256_i32gather_ps((const float *)group, rows, 1);
        __m256 best1 = _mm256_i32gather_ps((const float *)(group + half), rows, 1);
        __m256i best_j0 = _mm256_setzero_si256(), best_j1 = _mm256_setzero_si256();
        __m256 nan = _mm256_or_ps(_mm256_cmp_ps(best0, best0, _CMP_UNORD_Q),
                                  _mm256_cmp_ps(best1, best1, _CMP_UNORD_Q));
        for (int64_t j = 1; j < classes; j++) {
            const char *column = group + j * col_step;
            const __m256 v0 = _mm256_i32gather_ps((const float *)column, rows, 1);
            const __m256 v1 = _mm256_i32gather_ps((const float *)(column + half), rows, 1);
            const __m256i jj = _mm256_set1_epi32((int32_t)j);
            const __m256 greater0 = _mm256_cmp_ps(v0, best0, _CMP_GT_OQ);
            const __m256 greater1 = _mm256_cmp_ps(v1, best1, _CMP_GT_OQ);
            nan = _mm256_or_ps(nan, _mm256_cmp_ps(v0, v1, _CMP_UNORD_Q)); /* NaN in either */
            best0 = _mm256_blendv_ps(best0, v0, greater0);
            best1 = _mm256_blendv_ps(best1, v1, greater1);
            best_j0 = _mm256_blendv_epi8(best_j0, jj, _mm256_castps_si256(greater0));
            best_j1 = _mm256_blendv_epi8(best_j1, jj, _mm256_castps_si256(greater1));
        }
        if (_mm256_movemask_ps(nan))
            return i;
        _mm256_storeu_si256((__m256i *)(dst + i),
                            _mm256_cvtepi32_epi64(_mm256_castsi256_si128(best_j0)));
        _mm256_storeu_si256((__m256i *)(dst + i + 4),
                            _mm256_cvtepi32_epi64(_mm256_extracti128_si256(best_j0, 1)));
        _mm256_storeu_si256((__m256i *)(dst + i + 8),
                            _mm256_cvtepi32_epi64(_mm256_castsi256_si128(best_j1)));
        _mm256_storeu_si256((__m256i *)(dst + i + 12),
                            _mm256_cvtepi32_epi64(_mm256_extracti128_si256(best_j1, 1)));
    }
    return i;
}
#endif

/* How many leading rows a float32 vector scan fills (stopping before a group holding a NaN,
 * which the scalar scan then finds): 0 at the scalar level or when the offsets do not fit. */
static int64_t argmax_f32_vector(const char *base, int64_t n, int64_t classes, int64_t row_step,
                                 int64_t col_step, int64_t *dst)
{
    const tt_simd level = tt_simd_level();
    (void)level;
#if defined(TT_HAVE_AVX2_TARGET)
    if (level >= TT_SIMD_AVX2 && tt_simd_gather_is_fast() && classes <= INT32_MAX &&
        row_step <= INT32_MAX / 15 && row_step >= -(INT32_MAX / 15))
        return argmax_rows_f32_avx2(base, n, classes, row_step, col_step, dst);
#endif
#if defined(__SSE2__)
    if (level >= TT_SIMD_SSE2 && classes <= INT32_MAX)
        return argmax_rows_f32_sse2(base, n, classes, row_step, col_step, dst);
#endif
    return 0;
}

int64_t tt_argmax_rows(const tt_view *s, int64_t start, int64_t n, int64_t *dst)
{
    const argmax_scan scan = scalar_scans[s->dtype];
    if (scan == NULL)
        return -1;
    const int64_t classes = s->shape[1];
    const int64_t row_step = tt_step(s, 0), col_step = tt_step(s, 1);
    const char *base = s->data + start * row_step;
    const int64_t first =
        s->dtype == TT_F32 ? argmax_f32_vector(base, n, classes, row_step, col_step, dst) : 0;
    return scan(base, first, n, classes, row_step, col_step, dst);
}
