/*
 * dlpack_abi.h: the DLPack ABI, declared by this project.
 *
 * These are the binary layouts fixed by the DLPack specification (v1.x): the structs a producer
 * such as torch hands us inside a "dltensor" / "dltensor_versioned" capsule, and the
 * `__dlpack_c_exchange_api__` table that lets a consumer read a tensor without going through
 * Python. Only the parts torchtally reads are declared. tests/csrc/test_dlpack.py compiles a
 * probe against the installed torch's ATen/dlpack.h and checks every size and offset here.
 */
#ifndef TT_DLPACK_ABI_H
#define TT_DLPACK_ABI_H

#include <stdint.h>

/* DLDeviceType values used here. */
enum {
    TT_DL_CPU = 1,
    TT_DL_CUDA = 2,
    TT_DL_CUDA_HOST = 3,
};

/* DLDataTypeCode values. */
enum {
    TT_DL_INT = 0,
    TT_DL_UINT = 1,
    TT_DL_FLOAT = 2,
    TT_DL_BFLOAT = 4,
    TT_DL_BOOL = 6,
};

/* DLManagedTensorVersioned.flags bits. */
#define TT_DL_FLAG_READ_ONLY ((uint64_t)1 << 0)

typedef struct {
    uint32_t major;
    uint32_t minor;
} tt_DLPackVersion;

typedef struct {
    int32_t device_type; /* an enum in the spec: int-sized on every supported ABI */
    int32_t device_id;
} tt_DLDevice;

typedef struct {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} tt_DLDataType;

typedef struct {
    void *data;
    tt_DLDevice device;
    int32_t ndim;
    tt_DLDataType dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL means compact row-major */
    uint64_t byte_offset;
} tt_DLTensor;

typedef struct tt_DLManagedTensor {
    tt_DLTensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct tt_DLManagedTensor *self);
} tt_DLManagedTensor;

typedef struct tt_DLManagedTensorVersioned {
    tt_DLPackVersion version;
    void *manager_ctx;
    void (*deleter)(struct tt_DLManagedTensorVersioned *self);
    uint64_t flags;
    tt_DLTensor dl_tensor;
} tt_DLManagedTensorVersioned;

/* The C exchange table (DLPack >= 1.2), found as a "dlpack_exchange_api" capsule on the type. */
typedef struct tt_DLPackExchangeAPIHeader {
    tt_DLPackVersion version;
    struct tt_DLPackExchangeAPIHeader *prev_api;
} tt_DLPackExchangeAPIHeader;

typedef struct {
    tt_DLPackExchangeAPIHeader header;
    void *managed_tensor_allocator;
    int (*managed_tensor_from_py_object_no_sync)(void *py_object,
                                                 tt_DLManagedTensorVersioned **out);
    void *managed_tensor_to_py_object_no_sync;
    /* May be NULL. Fills a caller-owned DLTensor that borrows the producer's memory. */
    int (*dltensor_from_py_object_no_sync)(void *py_object, tt_DLTensor *out);
    int (*current_work_stream)(int32_t device_type, int32_t device_id, void **out_stream);
} tt_DLPackExchangeAPI;

#endif /* TT_DLPACK_ABI_H */
