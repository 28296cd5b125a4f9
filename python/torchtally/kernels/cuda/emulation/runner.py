"""The comparison: every case of cases.py run through torchtally._C_cuda's real host path on the
stand-in driver (which runs the launches in the emulation image) and through the C core
(torchtally._C), state and verdict compared bit for bit (moments to 1e-12).

`compare(image, driver, ...)` runs the cases in a fresh interpreter (the driver is loaded once
per process and named by TORCHTALLY_LIBCUDA) and returns, per kernel of kernel_table.h, how many
cases launched it and in how many of those the state or the verdict differed from the C core's.
The child is this module run as a script; it reads which kernels a case launched from the
driver's launch log.

Two more things count as a mismatch of the kernels concerned:

* a host synchronisation inside an update call (the driver counts them; the runner's own
  check, which waits, is outside the count): none in deferred mode (the default), and in
  immediate mode, which the first cases of every kernel method also run to show the count
  works, exactly one per call that has an error report (the latch; merges have none);
* a launch over a supported architecture's limits (limits.py), checked on every distinct
  launch the run made, with the kernels' registers and static shared memory from NVRTC
  (compiled while the child runs, cached on disk).
"""

import ctypes
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import limits
from .build import build_driver, build_image

IMMEDIATE_CASES = 2  # per kernel method: the cases also run with immediate checks


@dataclass
class Comparison:
    """What a run found: per kernel [cases that launched it, cases that differed]; the mismatches
    described, one line each."""

    counts: Dict[str, List[int]]
    details: List[str] = field(default_factory=list)
    syncs: Dict[str, int] = field(default_factory=dict)  # host synchronisations in deferred updates, per kernel
    immediate: Tuple[int, int] = (0, 0)  # (update calls with immediate checks, their host synchronisations)
    waits: int = 0  # cuStreamWaitEvent calls in deferred updates (device-side waits, not counted as syncs)
    queries: int = 0  # cuEventQuery calls in deferred updates
    limits_note: str = ""  # where the registers and static shared memory came from

    def syncs_per_update(self, name: str) -> float:
        cases = self.counts[name][0]
        return self.syncs.get(name, 0) / cases if cases else 0.0

    def problems(self) -> Dict[str, List[int]]:
        """The kernels no case launched or some case found wrong."""
        return {k: v for k, v in self.counts.items() if v[0] == 0 or v[1] != 0}


def compare(
    image: str,
    driver: str,
    seed: int = 0,
    sms: int = 2,
    only: Sequence[str] = (),
    stride: int = 1,
    resources: Optional[limits.Resources] = None,
) -> Comparison:
    """Run the cases on `driver` with `image`: the cases whose name holds one of `only` (every
    case when empty), and of those every `stride`-th. `seed`: the emulation's block order and
    interleavings; `sms`: the device's multiprocessor count (a small one makes small grids,
    whose threads stride over several elements). `resources`: the kernels' registers and static
    shared memory per architecture for the launch limits (default: NVRTC's, of the installed
    kernels' source)."""
    with ThreadPoolExecutor(max_workers=1) as pool:  # NVRTC compiles while the child runs
        found = pool.submit(_resources, resources)
        comparison, launches = _run(image, driver, seed, sms, only, stride)
        table, comparison.limits_note = found.result()
    for line in limits.check(launches, table):
        comparison.counts[line.split()[0]][1] += 1
        comparison.details.append(f"MISMATCH launch limit: {line}")
    return comparison


def _resources(given: Optional[limits.Resources]) -> Tuple[Optional[limits.Resources], str]:
    if given is not None:
        return given, "registers and static shared memory: as given"
    from torchtally import _C_cuda

    return limits.resources(_C_cuda.kernel_source())


def _run(
    image: str, driver: str, seed: int, sms: int, only: Sequence[str], stride: int
) -> Tuple[Comparison, List[limits.Launch]]:
    env = {
        **os.environ,
        "TORCHTALLY_LIBCUDA": driver,
        "FAKE_CUDA_SEED": str(seed),
        "FAKE_CUDA_SMS": str(sms),
        "FAKE_CUDA_LOG": str(Path(image).with_suffix(f".{seed}.{sms}.log")),
    }
    argv = [sys.executable, "-m", __name__, image, str(stride), *only]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=600)
    if done.returncode != 0:
        raise RuntimeError(f"the emulation run failed:\n{done.stderr[-4000:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    details = [line for line in done.stderr.splitlines() if line.startswith("MISMATCH")]
    comparison = Comparison(
        found["counts"],
        details,
        found["syncs"],
        (found["immediate"][0], found["immediate"][1]),
        found["waits"],
        found["queries"],
    )
    return comparison, [limits.Launch.parse(line) for line in found["launches"]]


def emulate(seed: int = 0, sms: int = 2, only: Sequence[str] = (), stride: int = 1) -> Comparison:
    """Build the stand-in driver and the emulation image of the installed kernels' source in a
    temporary folder and compare (see `compare`). Raises build.CompilerMissing without a C or
    C++ compiler."""
    from torchtally import _C_cuda

    source = _C_cuda.kernel_source()
    with tempfile.TemporaryDirectory(prefix="torchtally-emulation-") as folder:
        driver = build_driver(Path(folder), source)
        image = build_image(source, Path(folder), _C_cuda.kernel_names())
        return compare(image, driver, seed=seed, sms=sms, only=only, stride=stride)


# ---- the child: runs on the stand-in driver ---------------------------------------------------


def _launched(log: str) -> List[str]:
    """The launches since the last call, as the driver logged them (the log is emptied)."""
    if not os.path.exists(log):
        return []
    with open(log) as f:
        lines = [line.strip() for line in f]
    os.remove(log)
    return lines


class _SyncCounter:
    """The stand-in driver's counts (fake_libcuda.c): the same library _C_cuda loaded, as
    dlopen gives the loaded copy again for the same path."""

    def __init__(self, driver: str) -> None:
        self.lib = ctypes.CDLL(driver)
        self.values = (ctypes.c_longlong * 3)()

    def reset(self) -> None:
        self.lib.fake_cuda_reset_counts()

    def read(self) -> Tuple[int, int, int]:
        """(host synchronisations, stream waits on events, event queries) since reset()."""
        self.lib.fake_cuda_counts(self.values)
        return self.values[0], self.values[1], self.values[2]


def _run_child(image: str, stride: int, only: Sequence[str]) -> None:
    import types

    import torch

    from torchtally import _C, _C_cuda
    from torchtally.kernels.segmentation_status import call_like_c_core

    from .cases import cases
    from .fake_tensor import on_fake_cuda

    def no_stream(device=None) -> Any:  # a CPU torch has none; the stand-in driver ignores streams
        return types.SimpleNamespace(cuda_stream=0)

    torch.cuda.current_stream = no_stream  # _C_cuda asks torch for the current stream
    _C_cuda.load_kernels(0, Path(image).read_bytes())
    log = os.environ["FAKE_CUDA_LOG"]
    counter = _SyncCounter(os.environ["TORCHTALLY_LIBCUDA"])
    launches = set(_launched(log))
    tally: Dict[str, List[int]] = {name: [0, 0] for name in _C_cuda.kernel_names()}
    syncs: Dict[str, int] = dict.fromkeys(tally, 0)
    waits_queries = [0, 0]  # cuStreamWaitEvent, cuEventQuery in deferred updates
    immediate = [0, 0]  # update calls with immediate checks, their host synchronisations

    def outcome(module, kernel: str, args) -> Tuple[torch.Tensor, Optional[str], int]:
        """(state after the call, the error, host synchronisations inside the update call)."""
        state = args[0]
        counted = 0
        try:
            if module is _C_cuda:
                counter.reset()
                try:
                    call_like_c_core(module, kernel, args, on_fake_cuda)
                finally:
                    counted, waits, queries = counter.read()
                    waits_queries[0] += waits
                    waits_queries[1] += queries
                _C_cuda.check(0, state.data_ptr(), state.numel() * state.element_size(), True)
            else:
                call_like_c_core(module, kernel, args)
        except ValueError as exc:
            return state, str(exc), counted
        return state, None, counted

    def immediately(case, i: int) -> None:
        """The case again with immediate checks: an update with an error report waits exactly once."""
        previous = _C_cuda.set_immediate_checks(True)
        try:
            _, _, counted = outcome(_C_cuda, case.kernel, (g.manual_seed(i), case.make())[1])
        finally:
            _C_cuda.set_immediate_checks(previous)
        ran = _launched(log)
        launches.update(ran)
        # the wait for the call's own error report: calls without one (merges) wait for nothing
        expected = int(any(line.split()[0] == "tt_latch" for line in ran))
        immediate[0] += expected
        immediate[1] += counted
        if counted != expected:
            names = sorted({line.split()[0] for line in ran})
            for k in names:
                tally[k][1] += 1
            print(
                f"MISMATCH {case.name} (immediate checks): kernels {names}; {counted} host synchronisations "
                f"in the update call, expected {expected}",
                file=sys.stderr,
            )

    g = torch.Generator()
    chosen = [(i, case) for i, case in enumerate(cases(g)) if not only or any(o in case.name for o in only)]
    seen: Dict[str, int] = {}
    for i, case in chosen[::stride]:
        mine, my_error, counted = outcome(_C_cuda, case.kernel, (g.manual_seed(i), case.make())[1])
        lines = _launched(log)
        launches.update(lines)
        ran = {line.split()[0] for line in lines}
        theirs, their_error, _ = outcome(_C, case.kernel, (g.manual_seed(i), case.make())[1])
        if case.exact:
            same = torch.equal(mine, theirs)
        else:
            same = torch.allclose(mine, theirs, rtol=1e-12, atol=1e-12, equal_nan=True)
        # the CUDA message is the C core's, then where it was found
        verdict = (my_error is None) == (their_error is None) and (
            my_error is None or their_error is not None and my_error.startswith(their_error)
        )
        for k in ran:
            tally[k][0] += 1
            tally[k][1] += not (same and verdict and counted == 0)
            syncs[k] += counted
        if not (same and verdict):
            detail = f"state same={same}; {my_error!r} vs {their_error!r}"
            print(f"MISMATCH {case.name}: kernels {sorted(ran)}; {detail}", file=sys.stderr)
        if counted:
            print(
                f"MISMATCH {case.name}: kernels {sorted(ran)}; {counted} host synchronisations in a deferred update",
                file=sys.stderr,
            )
        seen[case.kernel] = seen.get(case.kernel, 0) + 1
        if seen[case.kernel] <= IMMEDIATE_CASES:
            immediately(case, i)
    waits, queries = waits_queries
    found = {"counts": tally, "syncs": syncs, "immediate": immediate, "waits": waits, "queries": queries}
    print(json.dumps({**found, "launches": sorted(launches)}))


if __name__ == "__main__":
    _run_child(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
