"""kernels.cuda.loader: the per-device decision whether torchtally's CUDA kernels serve a device,
step by step, without a GPU: a stand-in for torchtally._C_cuda (driver, device, load), stand-in
NVRTCs, a cache in a temporary folder and a stand-in known-answer check. Each fallback must say
why, warn once (TORCHTALLY_CUDA=auto), raise (=1) or stay quiet (=0)."""

import warnings

import pytest

from torchtally.kernels.cuda import cache, loader, nvrtc


class Module:
    """A stand-in torchtally._C_cuda: a driver of `version` with one device of `arch`."""

    def __init__(self, version=13000, arch=90, prebuilt=None, load_error=None, driver_error=None):
        self.version, self.arch, self._prebuilt = version, arch, prebuilt or {}
        self.load_error, self.driver_error = load_error, driver_error
        self.loaded = {}

    def driver(self):
        if self.driver_error:
            raise RuntimeError(self.driver_error)
        return {"version": self.version, "devices": 1}

    def device_info(self, device):
        return {"major": self.arch // 10, "minor": self.arch % 10, "sm_count": 132}

    def kernels_loaded(self, device):
        return device in self.loaded

    def load_kernels(self, device, image):
        if self.load_error:
            raise RuntimeError(self.load_error)
        self.loaded[device] = image

    def prebuilt(self):
        return dict(self._prebuilt)

    def kernel_source(self):
        return 'extern "C" __global__ void tt_latch() {}'


class Compiler:
    """A stand-in NVRTC: counts compiles; `fail` makes them fail with a log."""

    path = "/stand-in/libnvrtc.so.13"

    def __init__(self, version=(13, 0), arches=(75, 80, 86, 89, 90, 100, 120), fail=False):
        self.version, self.arches, self.fail = version, list(arches), fail
        self.compiles = []

    def supported_arches(self):
        return self.arches

    def compile(self, source, arch, options=()):
        self.compiles.append(arch)
        if self.fail:
            raise nvrtc.NvrtcError(
                f"NVRTC ({self.path}) could not compile the kernels for {arch}: "
                "NVRTC_ERROR_COMPILATION\ntorchtally.cu(3): error: something"
            )
        return nvrtc.Compiled(
            image=f"image for {arch}".encode(), kind="cubin" if arch.startswith("sm_") else "ptx", arch=arch, log=""
        )


def finder(compiler):
    return lambda env, driver_version: compiler


def agree(module, reference, device):
    return []


def make(tmp_path, module=None, compiler=None, env=None, check=agree):
    env = {"TORCHTALLY_CACHE_DIR": str(tmp_path / "cache"), **(env or {})}
    return loader.Loader(
        module or Module(),
        reference=object(),
        env=env,
        find_nvrtc=finder(compiler or Compiler()),
        cache=cache.Cache(env["TORCHTALLY_CACHE_DIR"]),
        check=check,
    )


def test_a_device_is_compiled_for_its_own_architecture_cached_loaded_and_checked(tmp_path):
    module, compiler = Module(arch=89), Compiler()
    first = make(tmp_path, module, compiler)
    status = first.status(0)
    assert status.serves and status.reason == "" and status.arch == "sm_89"
    assert compiler.compiles == ["sm_89"] and module.loaded[0] == b"image for sm_89"
    assert "compiled by NVRTC 13.0" in status.image and status.checked
    # a second process: the image comes from the disk cache, no compile
    again, compiler2 = Module(arch=89), Compiler()
    status2 = make(tmp_path, again, compiler2).status(0)
    assert status2.serves and compiler2.compiles == [] and "from the cache" in status2.image
    assert again.loaded[0] == b"image for sm_89"


def test_an_architecture_nvrtc_does_not_know_gets_ptx_of_the_newest_below(tmp_path):
    module, compiler = Module(arch=121), Compiler(arches=(80, 90, 120))
    status = make(tmp_path, module, compiler).status(0)
    assert status.serves and compiler.compiles == ["compute_120"]
    assert module.loaded[0] == b"image for compute_120\0"  # PTX goes to the driver NUL-terminated
    assert loader.pick_target(70, [75, 80]) is None


def test_a_prebuilt_cubin_of_exactly_the_device_architecture_is_used_without_nvrtc(tmp_path):
    module, compiler = Module(arch=90, prebuilt={"sm_90": b"nvcc cubin"}), Compiler()
    status = make(tmp_path, module, compiler).status(0)
    assert status.serves and compiler.compiles == [] and module.loaded[0] == b"nvcc cubin"
    assert "built by nvcc at install" in status.image
    other = Module(arch=80, prebuilt={"sm_90": b"nvcc cubin"})
    assert make(tmp_path, other, Compiler()).status(0).image.startswith("cubin for sm_80 compiled")


@pytest.mark.parametrize(
    "step, build, words",
    [
        (
            "no driver",
            lambda: dict(module=Module(driver_error='no CUDA driver: dlopen("libcuda.so.1") failed')),
            "no CUDA driver",
        ),
        ("no NVRTC", lambda: dict(compiler="missing"), "NVRTC, which compiles"),
        ("a failing compile", lambda: dict(compiler=Compiler(fail=True)), "could not compile the kernels for sm_90"),
        (
            "a failing load",
            lambda: dict(module=Module(load_error="CUDA_ERROR_INVALID_IMAGE")),
            "the driver did not load the cubin for sm_90",
        ),
        (
            "a wrong answer",
            lambda: dict(check=lambda m, r, d: ["topk_update float16: the state differs"]),
            "known-answer check of its kernels on cuda:0 (sm_90) found 1 difference(s)",
        ),
    ],
)
def test_each_failing_step_sends_the_device_to_the_reference_with_its_reason(tmp_path, step, build, words):
    parts = build()
    if parts.get("compiler") == "missing":

        def no_nvrtc(env, driver_version):
            raise nvrtc.NvrtcError("NVRTC, which compiles torchtally's CUDA kernels, was not found (...)")

        parts.pop("compiler")
        made = make(tmp_path, **parts)
        made.find_nvrtc = no_nvrtc
    else:
        made = make(tmp_path, **parts)
    status = made.status(0)
    assert not status.serves and words in status.reason, status.reason
    assert "torch reference, because" in str(status)
    with pytest.warns(RuntimeWarning, match="take the torch reference path") as caught:
        assert made.serves(0) is False
    assert words in str(caught[0].message)
    assert caught[0].filename == __file__  # the caller's line, outside torchtally
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert made.serves(0) is False  # once per device


def test_a_failed_compile_keeps_nvrtcs_log(tmp_path):
    status = make(tmp_path, compiler=Compiler(fail=True)).status(0)
    assert "torchtally.cu(3): error: something" in status.log and "\n" not in status.reason


def test_torchtally_cuda_1_raises_at_every_use_instead_of_falling_back(tmp_path):
    made = make(tmp_path, compiler=Compiler(fail=True), env={"TORCHTALLY_CUDA": "1"})
    for _ in range(2):
        with pytest.raises(loader.CudaKernelsUnavailable, match="TORCHTALLY_CUDA=1, but .* cannot serve cuda:0"):
            made.serves(0)


def test_torchtally_cuda_0_chooses_the_reference_without_compiling_or_warning(tmp_path):
    module, compiler = Module(), Compiler()
    made = make(tmp_path, module, compiler, env={"TORCHTALLY_CUDA": "0"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert made.serves(0) is False
    assert compiler.compiles == [] and module.loaded == {} and "TORCHTALLY_CUDA=0" in made.status(0).reason


def test_a_bad_torchtally_cuda_value_is_the_reason(tmp_path):
    status = make(tmp_path, env={"TORCHTALLY_CUDA": "yes"}).status(0)
    assert not status.serves and "expected 0, 1 or auto, got 'yes'" in status.reason


def test_an_nvrtc_newer_than_the_driver_is_passed_over(tmp_path, monkeypatch):
    new, old = Compiler(version=(13, 0)), Compiler(version=(12, 9))
    new.path, old.path = "/new/libnvrtc.so.13", "/old/libnvrtc.so.12"
    monkeypatch.setattr(nvrtc, "candidates", lambda env: [new.path, old.path])
    monkeypatch.setattr(nvrtc, "load", lambda path: {new.path: new, old.path: old}[path])
    assert nvrtc.find({}, driver_version=12080) is old
    assert nvrtc.find({}, driver_version=13000) is new
    monkeypatch.setattr(nvrtc, "candidates", lambda env: [new.path])
    with pytest.raises(nvrtc.NvrtcError, match=r"newer than the driver \(CUDA 12.8\).*nvidia-cuda-nvrtc-cu12"):
        nvrtc.find({}, driver_version=12080)


def test_a_cache_that_cannot_be_written_still_serves_and_says_nothing_was_kept(tmp_path):
    # a folder under a plain file cannot be made, for root too (chmod does not stop root)
    (tmp_path / "not-a-folder").write_text("")
    compiler = Compiler()
    made = make(tmp_path, compiler=compiler, env={"TORCHTALLY_CACHE_DIR": str(tmp_path / "not-a-folder" / "cache")})
    made.cache = cache.Cache(str(tmp_path / "not-a-folder" / "cache"))
    status = made.status(0)
    assert status.serves and compiler.compiles == ["sm_90"]
    assert "cannot be written" in status.cache and "compiled for this process only" in status.cache


def test_an_unforeseen_failure_is_the_reason_and_is_decided_once(tmp_path):
    class OutOfMemory(Module):
        def load_kernels(self, device, image):
            self.attempts = getattr(self, "attempts", 0) + 1
            raise MemoryError("CUDA: loading the compiled kernels (cuModuleLoadData) failed: CUDA_ERROR_OUT_OF_MEMORY")

    module = OutOfMemory()
    made = make(tmp_path, module)
    with pytest.warns(RuntimeWarning, match="MemoryError: CUDA: loading the compiled kernels"):
        assert made.serves(0) is False
    assert made.serves(0) is False and module.attempts == 1  # kept: no retry at every update
