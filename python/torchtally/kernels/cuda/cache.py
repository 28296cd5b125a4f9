"""The on-disk cache of compiled kernel images, so that a process pays NVRTC's compile (seconds)
once per machine, not once per run, and a torchrun job of N ranks pays it once, not N times.

An entry is one file, ``<key>.<kind>``, named by a key over everything the image depends on (the
kernels' source, the architecture, NVRTC's version, the driver's version); its bytes are a
magic word, the SHA-256 of the image, then the image. Writes go to a temporary file in the same
folder and are renamed into place (atomic), so a reader sees a whole entry or none; a read
checks the magic and the checksum, so a truncated or corrupt entry is a miss (and is rewritten),
never a bad image handed to the driver.

Ranks that start together take the entry's lock file in turn (``fcntl.flock``): the first
compiles and writes, the others wait for it and then read its entry. A cache that cannot be
written (read-only, no home folder) still works: the image is compiled in memory, and
`Cache.problem` says why nothing was kept. The folder: ``TORCHTALLY_CACHE_DIR``, else
``$XDG_CACHE_HOME/torchtally/kernels``, else ``~/.cache/torchtally/kernels``.
"""

import contextlib
import hashlib
import os
import tempfile
import time
from types import ModuleType
from typing import Any, Callable, Iterator, Optional, Tuple

fcntl: Optional[ModuleType]
try:
    import fcntl
except ImportError:  # not POSIX: no cross-process lock, every process compiles for itself
    fcntl = None

MAGIC = b"TTKERN1\n"
DIGEST = 32


def default_folder(env=os.environ) -> str:
    explicit = env.get("TORCHTALLY_CACHE_DIR", "").strip()
    if explicit:
        return explicit
    base = env.get("XDG_CACHE_HOME", "").strip() or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "torchtally", "kernels")


# Part of every key: a change of how torchtally compiles (options, the entry format) gives new
# entries, never a stale image compiled the old way.
FORMAT = "torchtally-kernels-1 --std=c++17"


def entry_key(source: str, arch: str, nvrtc_version: Tuple[int, int], driver_version: int) -> str:
    """The key of an image: a hash over everything that changes the compiled bytes or whether the
    driver can load them."""
    h = hashlib.sha256()
    for part in (FORMAT, source, arch, "{}.{}".format(*nvrtc_version), str(driver_version)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:40]


def pack(image: bytes) -> bytes:
    return MAGIC + hashlib.sha256(image).digest() + image


def unpack(data: bytes) -> Optional[bytes]:
    """The image of an entry's bytes, or None when they are not a whole, intact entry."""
    if len(data) < len(MAGIC) + DIGEST or not data.startswith(MAGIC):
        return None
    digest, image = data[len(MAGIC) : len(MAGIC) + DIGEST], data[len(MAGIC) + DIGEST :]
    return image if hashlib.sha256(image).digest() == digest else None


class Cache:
    """The kernel image cache in `folder`."""

    def __init__(self, folder: Optional[str] = None, lock_timeout_s: float = 300.0):
        self.folder = folder or default_folder()
        self.lock_timeout_s = lock_timeout_s
        self.problem = ""  # why the last get_or_make kept nothing on disk ("" when it did, or had no need)

    def path(self, key: str, kind: str) -> str:
        return os.path.join(self.folder, f"{key}.{kind}")

    def read(self, key: str, kind: str) -> Optional[bytes]:
        try:
            with open(self.path(key, kind), "rb") as f:
                return unpack(f.read())
        except OSError:
            return None

    def write(self, key: str, kind: str, image: bytes) -> None:
        """Atomically store an entry; raises OSError where the folder cannot be written."""
        os.makedirs(self.folder, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=f".{key}.", dir=self.folder)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(pack(image))
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, self.path(key, kind))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    @contextlib.contextmanager
    def _locked(self, key: str) -> Iterator[None]:
        """Holds the entry's lock file while the body runs; no lock where none can be taken, or
        where another process holds it beyond `lock_timeout_s` (stopped, or a file system whose
        locks never answer): the body then runs unlocked (a compile of its own) and `problem`
        says why."""
        handle = None
        if fcntl is not None:
            try:
                os.makedirs(self.folder, exist_ok=True)
                handle = open(os.path.join(self.folder, f"{key}.lock"), "a+b")
                if not self._lock_within(handle, self.lock_timeout_s):
                    handle.close()
                    handle = None
                    self.problem = (
                        f"the kernel cache's lock {key}.lock in {self.folder} was held for more than "
                        f"{self.lock_timeout_s:.0f} s: compiled without waiting for it"
                    )
            except OSError:
                if handle is not None:
                    handle.close()
                handle = None
        try:
            yield
        finally:
            if handle is not None:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)  # type: ignore[union-attr]  # a handle: fcntl is there
                handle.close()

    @staticmethod
    def _lock_within(handle: Any, timeout_s: float) -> bool:
        """Take the exclusive lock on `handle`, polling until `timeout_s`; whether it was taken."""
        deadline, pause = time.monotonic() + timeout_s, 0.01
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # type: ignore[union-attr]
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(pause)
                pause = min(pause * 2, 0.5)

    def get_or_make(self, key: str, kind: str, make: Callable[[], bytes]) -> Tuple[bytes, bool]:
        """(image, whether it came from the cache): the entry when it is intact, else make() under
        the entry's lock (another process may have written it meanwhile), stored when possible."""
        self.problem = ""
        image = self.read(key, kind)
        if image is not None:
            return image, True
        with self._locked(key):
            image = self.read(key, kind)
            if image is not None:
                return image, True
            image = make()
            try:
                self.write(key, kind, image)
            except OSError as exc:
                self.problem = (
                    f"the kernel cache {self.folder} cannot be written ({exc}): compiled for this process only"
                )
            return image, False
