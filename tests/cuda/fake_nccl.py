"""A fake libnccl.so.2, compiled at test time with the system C compiler, for the loader tests.

It exports NCCL's entry points with NCCL's C signatures but works on host memory for a world
of one rank, and records what it was given (the stream pointer, live communicators) behind two
extra symbols the tests read with ctypes. Variants leave a symbol out or report another version.
"""
import ctypes
import shutil
import subprocess
from pathlib import Path

import pytest

SOURCE = r"""
#include <stddef.h>
#include <string.h>

typedef struct { char internal[128]; } unique_id;
static int alive = 0;
static void *last_stream = NULL;

int ncclGetVersion(int *version) { *version = FAKE_VERSION; return 0; }

int ncclGetUniqueId(unique_id *id)
{
    memset(id->internal, 0x5a, sizeof id->internal);
    id->internal[0] = 7;
    return 0;
}

int ncclCommInitRank(void **comm, int nranks, unique_id id, int rank)
{
    if (nranks != 1 || rank != 0 || id.internal[0] != 7 || id.internal[127] != 0x5a)
        return 4; /* ncclInvalidArgument */
    *comm = &alive;
    alive++;
    return 0;
}

int ncclAllReduce(const void *send, void *recv, size_t count, int dtype, int op, void *comm, void *stream)
{
    if (comm != &alive)
        return 4;
    if (dtype != 7)
        return 5; /* only float32: ncclInvalidUsage */
    if (op == 2)
        return 2; /* MAX: pretend an ncclSystemError */
    last_stream = stream;
    for (size_t i = 0; i < count; i++) /* as if a second rank held the same values */
        ((float *)recv)[i] = 2.0f * ((const float *)send)[i];
    return 0;
}

#ifndef OMIT_ALLGATHER
int ncclAllGather(const void *send, void *recv, size_t count, int dtype, void *comm, void *stream)
{
    if (comm != &alive || dtype != 1)
        return 5;
    last_stream = stream;
    memcpy(recv, send, count); /* two ranks' worth of uint8 */
    memcpy((char *)recv + count, send, count);
    return 0;
}
#endif

int ncclCommAbort(void *comm) { alive--; return 0; }
int ncclCommDestroy(void *comm) { alive--; return 0; }

const char *ncclGetErrorString(int result)
{
    switch (result) {
    case 2: return "fake: unhandled system error";
    case 4: return "fake: invalid argument";
    case 5: return "fake: invalid usage";
    default: return "fake: other";
    }
}

int ncclCommGetAsyncError(void *comm, int *result) { *result = 0; return 0; }

int fake_alive(void) { return alive; }
void *fake_last_stream(void) { return last_stream; }
"""


def compile_fake(folder: Path, name: str, version: int = 23003, omit_all_gather: bool = False) -> Path:
    """Builds the fake as folder/name and returns its path (fails the test without a C compiler)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.fail("no C compiler (cc/gcc) to build the fake NCCL; the C extension build needs one too")
    source = folder / f"{name}.c"
    source.write_text(SOURCE)
    out = folder / name
    command = [compiler, "-shared", "-fPIC", "-O1", f"-DFAKE_VERSION={version}", "-o", str(out), str(source)]
    if omit_all_gather:
        command.insert(1, "-DOMIT_ALLGATHER")
    subprocess.run(command, check=True, capture_output=True)
    return out


def hooks(path: Path) -> ctypes.CDLL:
    """The fake's recording symbols (the same loaded copy: dlopen of one path returns one handle)."""
    lib = ctypes.CDLL(str(path))
    lib.fake_alive.restype = ctypes.c_int
    lib.fake_last_stream.restype = ctypes.c_void_p
    return lib
