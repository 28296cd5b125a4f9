/*
 * device_prelude.cuh: the little of the C library the kernels use. NVRTC ships no C headers,
 * so under it the fixed-width integers (int64_t must be `long`, as on the host, for the
 * argument structs to match), INT64_MAX and INFINITY are defined here; nvcc takes the real
 * headers. Device math (isfinite, isinf) is built into both compilers.
 */
#ifndef TT_CUDA_DEVICE_PRELUDE_CUH
#define TT_CUDA_DEVICE_PRELUDE_CUH

#ifdef __CUDACC_RTC__
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long int64_t;
typedef unsigned long uint64_t;
typedef unsigned long uintptr_t;
#define INT64_MAX 0x7fffffffffffffffL
#define INFINITY __int_as_float(0x7f800000)
#define NULL 0
#else
#include <math.h>
#include <stdint.h>
#endif

#endif /* TT_CUDA_DEVICE_PRELUDE_CUH */
