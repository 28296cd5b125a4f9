"""Whether torchtally's CUDA kernels serve a device, decided once per device at its first use.

The steps, each of which can send the device to the torch reference with its reason:

1. ``TORCHTALLY_CUDA``: ``0`` never serve (no warning: asked for), ``auto`` (the default) serve
   where every step below succeeds and warn once per device where one fails, ``1`` the same but
   raise instead of falling back, at every use of such a device.
2. The driver (torchtally._C_cuda loads libcuda.so.1) and the device's architecture.
3. An image for that architecture: the cubin nvcc built at install when there is one for
   exactly that architecture, else the on-disk cache's (cache.py), else NVRTC's compile
   (nvrtc.py) of the device source torchtally._C_cuda carries: a cubin where NVRTC knows the
   architecture, PTX of the newest one it knows below it otherwise (the driver finishes it),
   from an NVRTC no newer than the driver.
4. ``cuModuleLoadData`` of it into the device's primary context, every kernel looked up.
5. The known-answer check (known_answer.py) against the torch reference on that device.

`status(device)` is the record of those steps (what ran, from where, how long, why not).
"""

import contextlib
import os
import threading
import time
import warnings
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from ...errors import stacklevel_outside_torchtally
from . import cache as cache_module
from . import known_answer, nvrtc

MODES = ("0", "1", "auto")


def mode(env=os.environ) -> str:
    """TORCHTALLY_CUDA as "0", "1" or "auto" (default)."""
    value = env.get("TORCHTALLY_CUDA", "auto").strip().lower() or "auto"
    if value not in MODES:
        raise ValueError(f"TORCHTALLY_CUDA: expected 0, 1 or auto, got {value!r}")
    return value


class CudaKernelsUnavailable(RuntimeError):
    """TORCHTALLY_CUDA=1 and the kernels cannot serve a device; the message says why."""


@dataclass
class DeviceStatus:
    """How torchtally's CUDA kernels stand on one device."""

    device: int
    serves: bool = False
    reason: str = ""  # why they do not serve it ("" when they do)
    arch: str = ""  # the device's, e.g. "sm_90"
    image: str = ""  # where the loaded image came from
    compile_seconds: float = 0.0  # NVRTC's compile (0 when the image came from the cache or the install)
    check_seconds: float = 0.0  # loading the image and the known-answer check
    nvrtc: str = ""
    driver: int = 0  # the driver's CUDA version, e.g. 13000
    cache: str = ""
    log: str = ""  # NVRTC's log when a compile failed
    checked: List[str] = field(default_factory=list)  # the known-answer cases run

    def __str__(self) -> str:
        head = f"cuda:{self.device} ({self.arch or 'unknown arch'}): "
        if not self.serves:
            return head + "torch reference, because " + self.reason
        return (
            head + f"torchtally's kernels ({self.image}; compile {self.compile_seconds:.2f} s, "
            f"load and known-answer check of {len(self.checked)} cases {self.check_seconds:.2f} s)"
        )


def pick_target(arch: int, supported: List[int]) -> Optional[str]:
    """ "sm_XY" when NVRTC compiles for `arch`, else "compute_XY" of the newest it knows below."""
    if arch in supported:
        return f"sm_{arch}"
    below = [a for a in supported if a < arch]
    return f"compute_{max(below)}" if below else None


class Loader:
    """Prepares each device once; thread-safe. Everything it touches is injectable for the tests:
    the extension `module`, the torch `reference`, the environment, how NVRTC is found, the cache
    and the known-answer check."""

    def __init__(
        self,
        module,
        reference,
        env=os.environ,
        find_nvrtc: Callable = nvrtc.find,
        cache: Optional[cache_module.Cache] = None,
        check: Callable = known_answer.run,
    ):
        self.module = module
        self.reference = reference
        self.env = env
        self.find_nvrtc = find_nvrtc
        self.cache = cache
        self.check = check
        self._lock = threading.Lock()
        self._status: Dict[int, DeviceStatus] = {}
        self._warned: set = set()

    def status(self, device: int) -> DeviceStatus:
        """The device's status, preparing it first when this is its first use."""
        found = self._status.get(device)
        if found is not None:
            return found
        with self._lock:
            if device not in self._status:
                self._status[device] = self._prepare_or_say_why(device)
            return self._status[device]

    def _prepare_or_say_why(self, device: int) -> DeviceStatus:
        """_prepare, with any failure it did not foresee (an allocation the driver refused, an old
        NVRTC lacking a function...) recorded as the reason: the decision is kept either way, so
        a device that cannot be served falls back once instead of failing every update."""
        try:
            return self._prepare(device)
        except Exception as exc:  # noqa: BLE001  (every failure here means: not served, and why)
            return DeviceStatus(device=device, reason=f"preparing the kernels failed: {type(exc).__name__}: {exc}")

    def decided(self) -> List[int]:
        """The devices prepared so far."""
        return sorted(self._status)

    def serves(self, device: int) -> bool:
        """Whether the kernels serve `device`; on a device they do not serve, warns once (auto) or
        raises CudaKernelsUnavailable (TORCHTALLY_CUDA=1)."""
        found = self.status(device)
        if found.serves:
            return True
        wanted = mode(self.env)
        if wanted == "1":
            raise CudaKernelsUnavailable(
                f"TORCHTALLY_CUDA=1, but torchtally's CUDA kernels cannot serve cuda:{device}: {found.reason}"
            )
        if wanted == "auto" and device not in self._warned:
            self._warned.add(device)
            warnings.warn(
                f"torchtally: CUDA tensors on cuda:{device} take the torch reference path (correct, but it "
                f"synchronises the host on every update), because {found.reason}. torchtally.cuda_status() "
                "says more; TORCHTALLY_CUDA=0 chooses the reference without this warning.",
                RuntimeWarning,
                stacklevel=stacklevel_outside_torchtally(),
            )
        return False

    def forget(self) -> None:
        """Drop every decision (the tests'; a loaded module cannot be unloaded)."""
        with self._lock:
            self._status.clear()
            self._warned.clear()

    # ---- the steps --------------------------------------------------------------------------

    def _prepare(self, device: int) -> DeviceStatus:
        st = DeviceStatus(device=device)
        try:
            wanted = mode(self.env)
        except ValueError as exc:
            st.reason = str(exc)
            return st
        if wanted == "0":
            st.reason = "TORCHTALLY_CUDA=0 asks for the torch reference"
            return st
        if self.module is None:
            st.reason = "torchtally._C_cuda is not importable (reinstall torchtally)"
            return st
        try:
            st.driver = int(self.module.driver()["version"])
            info = self.module.device_info(device)
        except RuntimeError as exc:
            st.reason = str(exc)
            return st
        capability = info["major"] * 10 + info["minor"]
        st.arch = f"sm_{capability}"
        if self.module.kernels_loaded(device):  # loaded before a forget(): no second load
            st.image = "loaded earlier in this process"
        else:
            image = self._image(st, capability)
            if image is None:
                return st
            start = time.perf_counter()
            try:
                self.module.load_kernels(device, image)
            except (RuntimeError, ValueError) as exc:
                st.reason = f"the driver did not load the {st.image}: {exc}"
                return st
            st.check_seconds = time.perf_counter() - start
        return self._known_answers(st)

    def _image(self, st: DeviceStatus, capability: int) -> Optional[bytes]:
        prebuilt = self.module.prebuilt().get(st.arch)
        if prebuilt is not None:
            st.image = f"cubin for {st.arch} built by nvcc at install"
            return prebuilt
        try:
            compiler = self.find_nvrtc(self.env, st.driver)
        except nvrtc.NvrtcError as exc:
            st.reason = str(exc)
            return None
        version = compiler.version
        st.nvrtc = f"NVRTC {version[0]}.{version[1]} ({compiler.path})"
        target = pick_target(capability, compiler.supported_arches())
        if target is None:
            st.reason = f"{st.nvrtc} compiles for no architecture up to {st.arch}"
            return None
        source = self.module.kernel_source()
        kind = "cubin" if target.startswith("sm_") else "ptx"
        store = self.cache if self.cache is not None else cache_module.Cache(cache_module.default_folder(self.env))
        key = cache_module.entry_key(source, target, version, st.driver)
        timing = {}

        def make() -> bytes:
            start = time.perf_counter()
            compiled = compiler.compile(source, target)
            timing["compile"] = time.perf_counter() - start
            return compiled.image + (b"\0" if kind == "ptx" else b"")  # the driver reads PTX up to a NUL

        try:
            image, cached = store.get_or_make(key, kind, make)
        except nvrtc.NvrtcError as exc:
            st.reason = str(exc).split("\n", 1)[0]
            st.log = str(exc)
            return None
        st.compile_seconds = timing.get("compile", 0.0)
        st.cache = store.problem or store.folder
        where = f"from the cache {store.path(key, kind)}" if cached else f"compiled by {st.nvrtc}"
        st.image = f"{kind} for {target} {where}"
        return image

    def _known_answers(self, st: DeviceStatus) -> DeviceStatus:
        import torch  # the check needs tensors on the device

        start = time.perf_counter()
        st.checked = [case.name for case in known_answer.cases()]
        # On a stream of its own (the user's stream may be busy, or queued behind a collective),
        # with the device current (old torch hands C only tensors on the current device).
        with contextlib.ExitStack() as scope:
            if torch.cuda.is_available():
                scope.enter_context(torch.cuda.device(st.device))
                scope.enter_context(torch.cuda.stream(torch.cuda.Stream(st.device)))
            differences = self.check(self.module, self.reference, torch.device("cuda", st.device))
        st.check_seconds += time.perf_counter() - start
        if differences:
            st.reason = (
                f"the known-answer check of its kernels on cuda:{st.device} ({st.arch}) found "
                f"{len(differences)} difference(s) from the torch reference: " + "; ".join(differences[:4])
            )
            return st
        st.serves = True
        return st
