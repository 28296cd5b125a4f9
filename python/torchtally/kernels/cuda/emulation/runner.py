"""The comparison: every case of cases.py run through torchtally._C_cuda's real host path on the
stand-in driver (which runs the launches in the emulation image) and through the C core
(torchtally._C), state and verdict compared bit for bit (moments to 1e-12).

`compare(image, driver, ...)` runs the cases in a fresh interpreter (the driver is loaded once
per process and named by TORCHTALLY_LIBCUDA) and returns, per kernel of kernel_table.h, how many
cases launched it and in how many of those the state or the verdict differed from the C core's.
The child is this module run as a script; it reads which kernels a case launched from the
driver's launch log.
"""

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .build import build_driver, build_image


@dataclass
class Comparison:
    """What a run found: per kernel [cases that launched it, cases that differed]; the mismatches
    described, one line each."""

    counts: Dict[str, List[int]]
    details: List[str] = field(default_factory=list)

    def problems(self) -> Dict[str, List[int]]:
        """The kernels no case launched or some case found wrong."""
        return {k: v for k, v in self.counts.items() if v[0] == 0 or v[1] != 0}


def compare(
    image: str, driver: str, seed: int = 0, sms: int = 2, only: Sequence[str] = (), stride: int = 1
) -> Comparison:
    """Run the cases on `driver` with `image`: the cases whose name holds one of `only` (every
    case when empty), and of those every `stride`-th. `seed`: the emulation's block order and
    interleavings; `sms`: the device's multiprocessor count (a small one makes small grids,
    whose threads stride over several elements)."""
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
    counts = json.loads(done.stdout.strip().splitlines()[-1])
    return Comparison(counts, [line for line in done.stderr.splitlines() if line.startswith("MISMATCH")])


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
    """The kernels launched since the last call (the log is emptied)."""
    if not os.path.exists(log):
        return []
    with open(log) as f:
        names = [line.split()[0] for line in f]
    os.remove(log)
    return names


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
    _launched(log)
    tally: Dict[str, List[int]] = {name: [0, 0] for name in _C_cuda.kernel_names()}

    def outcome(module, kernel: str, args) -> Tuple[torch.Tensor, Optional[str]]:
        state = args[0]
        try:
            call_like_c_core(module, kernel, args, on_fake_cuda if module is _C_cuda else list)
            if module is _C_cuda:
                _C_cuda.check(0, state.data_ptr(), state.numel() * state.element_size(), True)
        except ValueError as exc:
            return state, str(exc)
        return state, None

    g = torch.Generator()
    chosen = [(i, case) for i, case in enumerate(cases(g)) if not only or any(o in case.name for o in only)]
    for i, case in chosen[::stride]:
        mine, my_error = outcome(_C_cuda, case.kernel, (g.manual_seed(i), case.make())[1])
        ran = set(_launched(log))
        theirs, their_error = outcome(_C, case.kernel, (g.manual_seed(i), case.make())[1])
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
            tally[k][1] += not (same and verdict)
        if not (same and verdict):
            detail = f"state same={same}; {my_error!r} vs {their_error!r}"
            print(f"MISMATCH {case.name}: kernels {sorted(ran)}; {detail}", file=sys.stderr)
    print(json.dumps(tally))


if __name__ == "__main__":
    _run_child(sys.argv[1], int(sys.argv[2]), sys.argv[3:])
