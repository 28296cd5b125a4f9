/*
 * dtype.h: the dtype codes every torchtally C file shares, in one header that has no include
 * and no function, so that the CUDA kernels' device source (compiled by NVRTC, which has no C
 * library) reads the same enum as the host.
 */
#ifndef TT_DTYPE_H
#define TT_DTYPE_H

typedef enum {
    TT_BOOL = 0,
    TT_U8,
    TT_I8,
    TT_I16,
    TT_I32,
    TT_I64,
    TT_F16,
    TT_BF16,
    TT_F32,
    TT_F64,
    TT_NDTYPES
} tt_dtype;

#endif /* TT_DTYPE_H */
