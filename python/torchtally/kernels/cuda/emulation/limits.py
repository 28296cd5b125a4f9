"""Launch limits: every launch the emulation run made, checked against each supported
architecture's limits, with each kernel's registers and static shared memory from a real NVRTC
compile for that architecture (what cuFuncGetAttribute would report on such a GPU).

Per launch and architecture:

* block dimensions (x, y <= 1024, z <= 64, x*y*z <= 1024) and grid dimensions (x < 2^31,
  y, z <= 65535);
* threads per block <= the kernel's own maximum: registers are allocated per warp in units of
  256, from 64K registers per block, so r registers per thread allow
  floor(65536 / roundup(32 r, 256)) warps (at most 1024 threads);
* static + dynamic shared memory <= 48 KiB, unless the host set the kernel's
  MAX_DYNAMIC_SHARED_SIZE_BYTES attribute (cuFuncSetAttribute, which the stand-in driver logs)
  to at least the dynamic size, and then <= the architecture's opt-in maximum.

The compile takes a few seconds per architecture; its table is cached on disk beside the kernel
cache (kernels/cuda/cache.py), keyed by the source, the architecture and the NVRTC version, so a
run recompiles only after the kernels' source changed. Without NVRTC the registers and the
static shared memory are unknown: those checks are skipped, and the report says so.
"""

import hashlib
import json
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Tuple

from .. import cache, nvrtc

KIB = 1024


@dataclass(frozen=True)
class ArchLimits:
    """One compute capability's per-block limits (CUDA C++ Programming Guide, "Technical
    Specifications per Compute Capability": the same for sm_75 to sm_120 but the opt-in shared
    memory per block)."""

    arch: int
    optin_shared: int  # bytes a block may use once the kernel opts in
    threads: int = 1024
    registers: int = 64 * KIB  # 32-bit registers per block
    default_shared: int = 48 * KIB  # without the opt-in attribute


# The opt-in maxima per block from the same table: 7.5 64 KB; 8.0 163 KB; 8.6 and 8.9 99 KB;
# 9.0 and 10.0 227 KB; 12.0 99 KB.
ARCHES: Tuple[ArchLimits, ...] = (
    ArchLimits(75, 64 * KIB),
    ArchLimits(80, 163 * KIB),
    ArchLimits(86, 99 * KIB),
    ArchLimits(89, 99 * KIB),
    ArchLimits(90, 227 * KIB),
    ArchLimits(100, 227 * KIB),
    ArchLimits(120, 99 * KIB),
)


class Launch(NamedTuple):
    """One launch as the stand-in driver logged it."""

    name: str
    grid: Tuple[int, int, int]
    block: Tuple[int, int, int]
    shared: int  # dynamic shared memory, bytes
    optin: int  # the kernel's MAX_DYNAMIC_SHARED_SIZE_BYTES when launched (0: never set)

    @staticmethod
    def parse(line: str) -> "Launch":
        """A log line: name gx gy bx by shared gz bz optin."""
        name, gx, gy, bx, by, shared, gz, bz, optin = line.split()
        return Launch(name, (int(gx), int(gy), int(gz)), (int(bx), int(by), int(bz)), int(shared), int(optin))


class Usage(NamedTuple):
    registers: int
    shared: int  # static shared memory, bytes


Resources = Dict[int, Dict[str, Usage]]  # arch -> kernel -> its usage


def _cache_path(source: str, arch: int, version: Tuple[int, int]) -> str:
    key = cache.entry_key(source, f"sm_{arch}", version, 0)
    digest = hashlib.sha256(f"resources {key}".encode()).hexdigest()[:40]
    return os.path.join(cache.default_folder(), "resources", f"{digest}.json")


def _compile(compiler: nvrtc.Nvrtc, source: str, arch: int) -> Dict[str, Usage]:
    path = _cache_path(source, arch, compiler.version)
    try:
        with open(path) as f:
            return {name: Usage(*row) for name, row in json.load(f).items()}
    except (OSError, ValueError, TypeError):
        pass
    compiled = compiler.compile(source, f"sm_{arch}", nvrtc.USAGE_OPTIONS)
    usage = {u.name: Usage(u.registers, u.shared) for u in nvrtc.resource_usage(compiled.log)[0]}
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        partial = f"{path}.{os.getpid()}"
        with open(partial, "w") as f:
            json.dump(usage, f)
        os.replace(partial, path)  # readers never see a half-written table
    except OSError:
        pass  # a read-only cache folder: compile again next time
    return usage


def resources(source: str, arches: Sequence[ArchLimits] = ARCHES) -> Tuple[Optional[Resources], str]:
    """(registers and static shared memory of every kernel per architecture, or None, and a line
    saying where they came from or why there are none)."""
    try:
        compiler = nvrtc.find()
    except nvrtc.NvrtcError as exc:
        return None, f"registers and static shared memory not checked: {exc}"
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:  # NVRTC runs without the GIL
            tables = list(pool.map(lambda a: _compile(compiler, source, a.arch), arches))
    except nvrtc.NvrtcError as exc:  # `python -m torchtally.cuda compile` is the check that reports it
        return None, f"registers and static shared memory not checked: {str(exc).splitlines()[0]}"
    version = "{}.{}".format(*compiler.version)
    return {a.arch: t for a, t in zip(arches, tables)}, f"registers and static shared memory: NVRTC {version}"


def max_threads(registers: int, limits: ArchLimits) -> int:
    """The most threads per block a kernel of `registers` registers per thread can launch with."""
    per_warp = -(-registers * 32 // 256) * 256
    if per_warp == 0:
        return limits.threads
    return min(limits.threads, limits.registers // per_warp * 32)


def _problems(launch: Launch, limits: ArchLimits, usage: Optional[Usage]) -> Iterable[str]:
    (gx, gy, gz), (bx, by, bz) = launch.grid, launch.block
    threads = bx * by * bz
    if bx > 1024 or by > 1024 or bz > 64 or threads > limits.threads:
        yield f"block {bx}x{by}x{bz} ({threads} threads) over {limits.threads} threads per block"
    if gx >= 2**31 or gy > 65535 or gz > 65535:
        yield f"grid {gx}x{gy}x{gz} over the grid limits (2^31 - 1, 65535, 65535)"
    if usage is not None:
        most = max_threads(usage.registers, limits)
        if threads > most:
            yield (
                f"{threads} threads per block over {most}, the most {usage.registers} registers per thread allow "
                f"({limits.registers} per block)"
            )
    static = usage.shared if usage is not None else 0
    total = static + launch.shared
    if launch.optin and launch.optin >= launch.shared:
        if static + launch.optin > limits.optin_shared or total > limits.optin_shared:
            yield (
                f"{static} B static + {launch.shared} B dynamic shared memory (opt-in {launch.optin} B) over the "
                f"opt-in maximum {limits.optin_shared} B per block"
            )
    elif total > limits.default_shared:
        yield (
            f"{static} B static + {launch.shared} B dynamic shared memory over {limits.default_shared} B per block "
            "without the opt-in attribute (cuFuncSetAttribute MAX_DYNAMIC_SHARED_SIZE_BYTES"
            + (f" was {launch.optin} B" if launch.optin else " not set")
            + ")"
        )


def check(launches: Iterable[Launch], found: Optional[Resources], arches: Sequence[ArchLimits] = ARCHES) -> List[str]:
    """One line per (kernel, architecture, limit) that some launch exceeds, naming all three."""
    lines: Dict[Tuple[str, int, str], str] = {}
    for launch in set(launches):
        for limits in arches:
            usage = None if found is None else found.get(limits.arch, {}).get(launch.name)
            for problem in _problems(launch, limits, usage):
                kind = problem.split(" over ")[-1]
                lines.setdefault((launch.name, limits.arch, kind), f"{launch.name} on sm_{limits.arch}: {problem}")
    return [lines[k] for k in sorted(lines)]
