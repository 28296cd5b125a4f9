"""A fake libnccl.so.2, compiled at test time with the system C compiler, for the loader tests.

It exports NCCL's entry points with NCCL's C signatures but works on host memory for a world
of one rank, and records what it was given (the stream pointer, live communicators, the config
ncclCommInitRankConfig received, aborts) behind extra fake_* symbols the tests read with ctypes.
Variants leave a symbol out (ncclAllGather; ncclCommInitRankConfig, as NCCL < 2.14) or report
another version.

Non-blocking communicators follow NCCL's rules: ncclCommInitRankConfig with blocking = 0 and the
collectives on such a communicator may return ncclInProgress (7); ncclCommGetAsyncError then
answers 7 for a scripted number of polls (fake_script; -1: forever, like a peer that died during
setup) and after that the scripted result (0, or an error code). Any call but ncclCommAbort while
a communicator is in progress is refused as ncclInvalidUsage and counted (fake_misuses).
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

/* ncclConfig_t as NCCL 2.14 declared it; a newer caller's struct is longer (read as a prefix). */
typedef struct { size_t size; unsigned int magic; unsigned int version; int blocking; } config_v21400;

/* A pool of communicators: live = 1 (blocking) or 2 (non-blocking); `pending` polls of
 * ncclCommGetAsyncError still answer ncclInProgress (-1: forever, a peer that never comes),
 * then `result`. */
enum { FREE = 0, BLOCKING = 1, NONBLOCKING = 2, POOL = 16, IN_PROGRESS = 7 };
typedef struct { int live; int pending; int result; } fake_comm;
static fake_comm comms[POOL];
static int alive = 0;
static void *last_stream = NULL;
/* the script (fake_script) and what was seen */
static int script_init_polls = 0, script_collective_polls = 0, script_result = 0;
static int init_calls = 0, config_calls = 0, abort_calls = 0, misuses = 0, polls = 0;
static void *last_aborted = NULL;
static config_v21400 seen_config;

static fake_comm *find(void *comm)
{
    fake_comm *c = comm;
    if (c < comms || c >= comms + POOL || c->live == FREE)
        return NULL;
    return c;
}

static void *make(int kind)
{
    for (int i = 0; i < POOL; i++)
        if (comms[i].live == FREE) {
            comms[i].live = kind;
            comms[i].pending = 0;
            comms[i].result = 0;
            alive++;
            return &comms[i];
        }
    return NULL;
}

/* NCCL's rule for a non-blocking communicator: no call while it is in progress (but abort). */
static int busy(fake_comm *c)
{
    if (c->pending != 0) {
        misuses++;
        return 1;
    }
    return 0;
}

int ncclGetVersion(int *version) { *version = FAKE_VERSION; return 0; }

int ncclGetUniqueId(unique_id *id)
{
    memset(id->internal, 0x5a, sizeof id->internal);
    id->internal[0] = 7;
    return 0;
}

static int valid_init(int nranks, unique_id id, int rank)
{
    return nranks == 1 && rank == 0 && id.internal[0] == 7 && id.internal[127] == 0x5a;
}

int ncclCommInitRank(void **comm, int nranks, unique_id id, int rank)
{
    init_calls++;
    if (!valid_init(nranks, id, rank))
        return 4; /* ncclInvalidArgument */
    *comm = make(BLOCKING);
    return *comm ? 0 : 2;
}

#ifndef OMIT_INIT_CONFIG
int ncclCommInitRankConfig(void **comm, int nranks, unique_id id, int rank, config_v21400 *config)
{
    config_calls++;
    if (config == NULL)
        return 4;
    memset(&seen_config, 0, sizeof seen_config);
    seen_config.size = config->size;  /* NCCL reads `size` first, then that many bytes at most */
    if (config->size >= sizeof seen_config)
        memcpy(&seen_config, config, sizeof seen_config);
    if (config->size < sizeof seen_config || config->size > 4096 || seen_config.magic != 0xcafebeefu ||
        seen_config.version < 21400 || seen_config.version > FAKE_VERSION ||
        (seen_config.blocking != 0 && seen_config.blocking != 1))
        return 4;
    if (!valid_init(nranks, id, rank))
        return 4;
    fake_comm *c = make(seen_config.blocking ? BLOCKING : NONBLOCKING);
    *comm = c;
    if (c == NULL)
        return 2;
    if (c->live == NONBLOCKING && script_init_polls != 0) {
        c->pending = script_init_polls;
        c->result = script_result;
        return IN_PROGRESS;
    }
    c->result = script_result;
    return 0;
}
#endif

/* a collective on a non-blocking communicator: still enqueueing for `script_collective_polls` */
static int enqueued(fake_comm *c)
{
    if (c->live == NONBLOCKING && script_collective_polls != 0) {
        c->pending = script_collective_polls;
        return IN_PROGRESS;
    }
    return 0;
}

int ncclAllReduce(const void *send, void *recv, size_t count, int dtype, int op, void *comm, void *stream)
{
    fake_comm *c = find(comm);
    if (c == NULL)
        return 4;
    if (busy(c))
        return 5; /* ncclInvalidUsage */
    if (dtype != 7)
        return 5; /* only float32: ncclInvalidUsage */
    if (op == 2)
        return 2; /* MAX: pretend an ncclSystemError */
    last_stream = stream;
    for (size_t i = 0; i < count; i++) /* as if a second rank held the same values */
        ((float *)recv)[i] = 2.0f * ((const float *)send)[i];
    return enqueued(c);
}

#ifndef OMIT_ALLGATHER
int ncclAllGather(const void *send, void *recv, size_t count, int dtype, void *comm, void *stream)
{
    fake_comm *c = find(comm);
    if (c == NULL || dtype != 1)
        return 5;
    if (busy(c))
        return 5;
    last_stream = stream;
    memcpy(recv, send, count); /* two ranks' worth of uint8 */
    memcpy((char *)recv + count, send, count);
    return enqueued(c);
}
#endif

static int end(void *comm)
{
    fake_comm *c = find(comm);
    if (c == NULL)
        return 4; /* not a live communicator: a double free */
    c->live = FREE;
    alive--;
    return 0;
}

int ncclCommAbort(void *comm)
{
    abort_calls++;
    last_aborted = comm;
    return end(comm);
}

int ncclCommDestroy(void *comm)
{
    fake_comm *c = find(comm);
    if (c != NULL && busy(c))
        return 5;
    return end(comm);
}

const char *ncclGetErrorString(int result)
{
    switch (result) {
    case 2: return "fake: unhandled system error";
    case 4: return "fake: invalid argument";
    case 5: return "fake: invalid usage";
    case 6: return "fake: remote process exited or there was a network error";
    case 7: return "fake: operation in progress";
    default: return "fake: other";
    }
}

int ncclCommGetAsyncError(void *comm, int *result)
{
    fake_comm *c = find(comm);
    if (c == NULL)
        return 4;
    polls++;
    if (c->pending != 0) {
        if (c->pending > 0)
            c->pending--;
        *result = IN_PROGRESS;
        return 0;
    }
    *result = c->result;
    return 0;
}

/* ---- the tests' side (ctypes) ---- */
void fake_script(int init_polls, int collective_polls, int result)
{
    script_init_polls = init_polls;
    script_collective_polls = collective_polls;
    script_result = result;
}

void fake_reset(void)
{
    fake_script(0, 0, 0);
    init_calls = config_calls = abort_calls = misuses = polls = 0;
    last_aborted = NULL;
    memset(&seen_config, 0, sizeof seen_config);
}

int fake_alive(void) { return alive; }
void *fake_any_live(void)
{
    for (int i = 0; i < POOL; i++)
        if (comms[i].live != FREE)
            return &comms[i];
    return NULL;
}
void *fake_last_stream(void) { return last_stream; }
int fake_init_calls(void) { return init_calls; }
int fake_config_calls(void) { return config_calls; }
int fake_abort_calls(void) { return abort_calls; }
void *fake_last_aborted(void) { return last_aborted; }
int fake_misuses(void) { return misuses; }
int fake_polls(void) { return polls; }
size_t fake_seen_size(void) { return seen_config.size; }
unsigned int fake_seen_magic(void) { return seen_config.magic; }
unsigned int fake_seen_version(void) { return seen_config.version; }
int fake_seen_blocking(void) { return seen_config.blocking; }
"""


def compile_fake(
    folder: Path, name: str, version: int = 23003, omit_all_gather: bool = False, omit_init_config: bool = False
) -> Path:
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
    if omit_init_config:  # an NCCL before 2.14: no ncclCommInitRankConfig
        command.insert(1, "-DOMIT_INIT_CONFIG")
    subprocess.run(command, check=True, capture_output=True)
    return out


def release_leftovers(nccl, path: Path) -> None:
    """Aborts, through torchtally._nccl, every communicator a failed test left open in the fake at
    `path`, so that the next test can unload it (a failure then stays in its own test)."""
    if nccl.loaded_path() == str(path):
        fake = hooks(path)
        while fake.fake_any_live():
            nccl.comm_abort(fake.fake_any_live())


def hooks(path: Path) -> ctypes.CDLL:
    """The fake's recording symbols (the same loaded copy: dlopen of one path returns one handle)."""
    lib = ctypes.CDLL(str(path))
    for name in (
        "fake_alive",
        "fake_init_calls",
        "fake_config_calls",
        "fake_abort_calls",
        "fake_misuses",
        "fake_polls",
        "fake_seen_blocking",
    ):
        getattr(lib, name).restype = ctypes.c_int
    lib.fake_last_stream.restype = ctypes.c_void_p
    lib.fake_last_aborted.restype = ctypes.c_void_p
    lib.fake_any_live.restype = ctypes.c_void_p
    lib.fake_seen_size.restype = ctypes.c_size_t
    lib.fake_seen_magic.restype = ctypes.c_uint
    lib.fake_seen_version.restype = ctypes.c_uint
    lib.fake_script.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
    lib.fake_script.restype = None
    lib.fake_reset.restype = None
    return lib
