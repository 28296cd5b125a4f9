/*
 * embedding_rows.c: the row loading and distance the clustering kernels share (embedding_rows.h).
 */
#include "kernels/embedding_rows.h"

#include <string.h>

/* Rows start..start+m of data widened to double into x[m * d] (row-major); 0 when a value is not
 * finite. Row-major contiguous float32 (the usual embeddings) is one flat loop the compiler
 * vectorises; elsewhere the check is a comparison per value and-ed into a flag. */
int tt_load_embedding_rows(const tt_view *data, int64_t start, int64_t m, int64_t d, double *x)
{
    const int64_t row = tt_step(data, 0), col = tt_step(data, 1);
    int finite = 1;
    if (data->dtype == TT_F32 && col == (int64_t)sizeof(float) && (row == d * col || m == 1)) {
        const float *src = (const float *)(data->data + start * row);
        uint32_t bad = 0; /* values whose exponent bits are all ones: inf and NaN (an integer test,
                             which vectorises where a float comparison with NaN does not) */
        for (int64_t i = 0; i < m * d; i++) {
            uint32_t bits = 0;
            memcpy(&bits, src + i, sizeof bits);
            bad += (bits & 0x7f800000U) == 0x7f800000U;
            x[i] = src[i];
        }
        return bad == 0;
    }
    for (int64_t i = 0; i < m; i++) {
        const char *p = data->data + (start + i) * row;
        for (int64_t j = 0; j < d; j++) {
            x[i * d + j] = tt_load_score(p + j * col, data->dtype);
            finite &= x[i * d + j] - x[i * d + j] == 0.0;
        }
    }
    return finite;
}

/* sum over j of (x[j] - c[j])^2 in four lanes (lane l takes j = l mod 4): four independent chains
 * of adds instead of one, about four times faster for the D of embeddings. */
double tt_squared_distance(const double *x, const double *c, int64_t d)
{
    double lane[4] = {0.0, 0.0, 0.0, 0.0};
    int64_t j = 0;
    for (; j + 4 <= d; j += 4)
        for (int l = 0; l < 4; l++)
            lane[l] += (x[j + l] - c[j + l]) * (x[j + l] - c[j + l]);
    for (; j < d; j++)
        lane[0] += (x[j] - c[j]) * (x[j] - c[j]);
    return (lane[0] + lane[1]) + (lane[2] + lane[3]);
}
