"""torchtally on the GPU, public face: which path CUDA tensors take, and the compile check.

``torchtally.cuda_status()`` (also here as `status`) says, per visible device, whether
torchtally's CUDA kernels serve it and if not why; preparing a device it was never used on
compiles and checks its kernels first (seconds, once: the image is cached on disk).

``python -m torchtally.cuda compile --arch sm_90`` compiles every kernel with NVRTC for that
architecture, without a GPU or a driver, prints one line per kernel (registers, static shared
memory, stack, spills) and exits 0 when the compile is clean and the image holds exactly the
kernels torchtally launches; ``python -m torchtally.cuda status`` prints cuda_status().

``python -m torchtally.cuda emulate`` runs the kernels' own source on the host under an
emulation of the CUDA execution model (no GPU; g++ and a C compiler), through torchtally._C_cuda's
real host path, on the known-answer and seeded random cases, compares every kernel with the C
core bit for bit, counts the host synchronisations inside every update (none allowed in the
deferred mode), checks every launch against the limits of sm_75 to sm_120 (registers and static
shared memory from NVRTC), prints one line per kernel (cases, mismatches, syncs/update) and exits
0 when every kernel ran and nothing differed or went over a limit (1 otherwise, 2 without a
compiler).
"""

import argparse
import os
import sys
from dataclasses import dataclass, field
from typing import Iterable, List, Optional, Sequence

from . import kernels
from .kernels.cuda import cache, nvrtc
from .kernels.cuda.loader import CudaKernelsUnavailable, DeviceStatus, mode

__all__ = ["status", "CudaStatus", "DeviceStatus", "CudaKernelsUnavailable", "compile_kernels", "main"]


@dataclass
class CudaStatus:
    """What cuda_status() found: the switch, the driver, NVRTC, the cache and each device."""

    mode: str
    driver: str
    nvrtc: str
    cache: str
    devices: List[DeviceStatus] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [
            f"TORCHTALLY_CUDA={self.mode}",
            f"driver: {self.driver}",
            f"NVRTC: {self.nvrtc}",
            f"kernel cache: {self.cache}",
        ]
        lines += [str(d) for d in self.devices] or [
            "no CUDA device used yet (status(devices=[...]) prepares and reports any)"
        ]
        return "\n".join(lines)


def status(devices: Optional[Iterable[int]] = None) -> CudaStatus:
    """Per device, whether torchtally's CUDA kernels serve it, and if not why. ``devices``: which
    to report (each is prepared first if it was not: a compile or a cache read, and the
    known-answer check); default: those torchtally has used, and torch's current device once
    torch has initialised CUDA (so that a status call creates no context on the other GPUs)."""
    try:
        wanted = mode()
    except ValueError as exc:
        wanted = str(exc)
    module = kernels.cuda_module()
    count = 0
    if module is None:
        driver = "torchtally._C_cuda is not importable"
    else:
        try:
            found = module.driver()
            count = found["devices"]
            driver = f"CUDA {found['version'] // 1000}.{found['version'] % 1000 // 10}, {count} device(s)"
        except RuntimeError as exc:
            driver = str(exc)
    try:
        compiler = nvrtc.find()
        compiler_text = f"{compiler.version[0]}.{compiler.version[1]} ({compiler.path})"
    except nvrtc.NvrtcError as exc:
        compiler_text = str(exc)
    if devices is None:
        chosen = set(kernels.cuda_devices_decided())
        torch = sys.modules.get("torch")
        if count and torch is not None and torch.cuda.is_initialized():
            chosen.add(torch.cuda.current_device())
        devices = sorted(chosen)
    found_devices = [kernels.cuda_device_status(d) for d in devices]
    return CudaStatus(wanted, driver, compiler_text, cache.default_folder(), found_devices)


def compile_kernels(arch: str, path: Optional[str] = None):
    """Compile every kernel for `arch` ("sm_90"); (usage per kernel, warnings, kernels missing
    from the image, kernels in it that torchtally does not launch)."""
    compiler = nvrtc.load(path) if path else nvrtc.find()
    module = kernels.cuda_module()
    if module is None:
        raise SystemExit("torchtally._C_cuda is not importable: reinstall torchtally")
    compiled = compiler.compile(module.kernel_source(), arch, nvrtc.USAGE_OPTIONS)
    usage, warnings = nvrtc.resource_usage(compiled.log)
    expected = set(module.kernel_names())
    found = {u.name for u in usage}
    return compiler, usage, warnings, sorted(expected - found), sorted(found - expected)


def _compile_command(args) -> int:
    try:
        compiler, usage, warnings, missing, extra = compile_kernels(args.arch, args.nvrtc)
    except nvrtc.NvrtcError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"NVRTC {compiler.version[0]}.{compiler.version[1]} ({compiler.path}), {args.arch}: {len(usage)} kernels")
    print(f"{'kernel':<40} {'registers':>9} {'shared':>8} {'stack':>6} {'spills':>7}")
    for u in sorted(usage, key=lambda u: u.name):
        print(f"{u.name:<40} {u.registers:>9} {u.shared:>8} {u.stack:>6} {u.spills:>7}")
    problems = (
        [f"warning: {w}" for w in warnings]
        + [f"missing from the image: {m}" for m in missing]
        + [f"not a kernel torchtally launches: {e}" for e in extra]
    )
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


def _emulate_command(args) -> int:
    from .kernels.cuda import emulation  # builds and runs things: only for this command

    if kernels.cuda_module() is None:
        print("torchtally._C_cuda is not importable: reinstall torchtally", file=sys.stderr)
        return 1
    try:
        found = emulation.emulate(seed=args.seed, sms=args.sms, only=args.only)
    except emulation.CompilerMissing as exc:
        print(f"cannot emulate: {exc}", file=sys.stderr)
        return 2
    print(f"CUDA emulation, seed {args.seed}, {args.sms} SMs: {len(found.counts)} kernels")
    print(f"{'kernel':<40} {'cases':>6} {'mismatches':>10} {'syncs/update':>12}")
    for name, (cases, mismatches) in sorted(found.counts.items()):
        print(f"{name:<40} {cases:>6} {mismatches:>10} {found.syncs_per_update(name):>12g}")
    calls, waited = found.immediate
    print(
        f"deferred updates: {found.waits} stream waits on events and {found.queries} event queries (no host "
        f"waits); immediate checks: {calls} checked updates, {waited} host synchronisations"
    )
    print(f"launch limits: sm_{', sm_'.join(str(a.arch) for a in emulation.ARCHES)}; {found.limits_note}")
    for line in found.details:
        print(line, file=sys.stderr)
    never = sorted(name for name, (cases, _) in found.counts.items() if cases == 0)
    if never and not args.only:  # --only picks cases: the kernels they do not launch are not missed
        print(f"no case launched: {', '.join(never)}", file=sys.stderr)
    wrong = any(mismatches for _, mismatches in found.counts.values())
    return 1 if wrong or (never and not args.only) else 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torchtally.cuda", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    compile_parser = commands.add_parser("compile", help="compile every kernel for an architecture (no GPU needed)")
    compile_parser.add_argument("--arch", required=True, help="e.g. sm_90 (a cubin) or compute_90 (PTX)")
    compile_parser.add_argument(
        "--nvrtc", default=os.environ.get("TORCHTALLY_NVRTC"), help="a libnvrtc.so to use instead of the one found"
    )
    commands.add_parser("status", help="print cuda_status()")
    emulate_parser = commands.add_parser(
        "emulate", help="run every kernel on the host under the CUDA emulation and compare it with the C core"
    )
    emulate_parser.add_argument("--seed", type=int, default=0, help="block order and thread interleavings")
    emulate_parser.add_argument("--sms", type=int, default=2, help="the emulated device's multiprocessor count")
    emulate_parser.add_argument("--only", nargs="*", default=[], help="only the cases whose name holds one of these")
    args = parser.parse_args(argv)
    if args.command == "compile":
        return _compile_command(args)
    if args.command == "emulate":
        return _emulate_command(args)
    print(status())
    return 0


if __name__ == "__main__":
    sys.exit(main())
