"""kernels.cuda.cache: the on-disk cache of compiled kernel images. An intact entry is read back;
a truncated, corrupt or foreign one is a miss and is rewritten; processes that start together
compile once (the entry's lock); the key changes with everything the image depends on."""

import json
import multiprocessing
import os
import subprocess
import sys

from torchtally.kernels.cuda import cache


def test_an_entry_round_trips_and_a_second_get_does_not_make(tmp_path):
    store = cache.Cache(str(tmp_path))
    made = []
    image, cached = store.get_or_make("k", "cubin", lambda: made.append(1) or b"\x7fELF image")
    assert (image, cached) == (b"\x7fELF image", False)
    assert store.get_or_make("k", "cubin", lambda: made.append(1) or b"other") == (b"\x7fELF image", True)
    assert made == [1] and store.problem == ""
    assert [p for p in os.listdir(tmp_path) if not p.endswith(".lock")] == ["k.cubin"]  # no temporary left


def test_truncated_corrupt_and_foreign_entries_are_misses_and_are_rewritten(tmp_path):
    store = cache.Cache(str(tmp_path))
    store.write("k", "cubin", b"a good image")
    whole = (tmp_path / "k.cubin").read_bytes()
    damaged = {
        "truncated": whole[:-3],
        "a flipped byte": whole[:-1] + bytes([whole[-1] ^ 1]),
        "only the header": whole[: len(cache.MAGIC) + 10],
        "foreign": b"not a torchtally entry at all, long enough to have a digest....",
        "empty": b"",
    }
    for what, data in damaged.items():
        (tmp_path / "k.cubin").write_bytes(data)
        assert store.read("k", "cubin") is None, what
        image, cached = store.get_or_make("k", "cubin", lambda: b"recompiled")
        assert (image, cached) == (b"recompiled", False), what
        assert store.read("k", "cubin") == b"recompiled", what
        store.write("k", "cubin", b"a good image")


def test_the_key_covers_source_arch_nvrtc_and_driver():
    base = cache.entry_key("src", "sm_90", (13, 0), 13000)
    changed = [
        cache.entry_key("src2", "sm_90", (13, 0), 13000),
        cache.entry_key("src", "sm_80", (13, 0), 13000),
        cache.entry_key("src", "sm_90", (12, 9), 13000),
        cache.entry_key("src", "sm_90", (13, 0), 13010),
    ]
    assert len({base, *changed}) == 5 and base == cache.entry_key("src", "sm_90", (13, 0), 13000)


def test_the_default_folder_follows_the_environment(tmp_path):
    assert cache.default_folder({"TORCHTALLY_CACHE_DIR": str(tmp_path)}) == str(tmp_path)
    assert cache.default_folder({"XDG_CACHE_HOME": "/x"}) == os.path.join("/x", "torchtally", "kernels")
    assert cache.default_folder({}).endswith(os.path.join(".cache", "torchtally", "kernels"))


def _compile_once(folder: str, marks: str, start) -> bytes:
    start.wait()  # every process asks at the same moment

    def make() -> bytes:
        with open(os.path.join(marks, str(os.getpid())), "w"):
            pass
        import time

        time.sleep(0.5)  # a compile takes a while: the others must wait for it, not race it
        return b"the one image"

    return cache.Cache(folder).get_or_make("key", "cubin", make)[0]


def test_four_processes_starting_together_compile_once(tmp_path):
    folder, marks = tmp_path / "cache", tmp_path / "marks"
    marks.mkdir()
    context = multiprocessing.get_context("spawn")
    start = context.Manager().Barrier(4)
    with context.Pool(4) as pool:
        images = pool.starmap(_compile_once, [(str(folder), str(marks), start)] * 4)
    assert images == [b"the one image"] * 4
    assert len(os.listdir(marks)) == 1  # one compile; three read its entry


def _read_only_mount_works(folder) -> bool:
    import shutil

    if shutil.which("unshare") is None or os.geteuid() != 0:
        return False
    done = subprocess.run(["unshare", "-m", "sh", "-c", f"mount --bind -o ro {folder} {folder}"], capture_output=True)
    return done.returncode == 0


def test_a_read_only_cache_serves_its_entries_and_compiles_around_the_rest(tmp_path):
    """A cache folder on a read-only file system (a bind mount, in a mount namespace of its own):
    an entry already there is read; a missing one is made in memory, with the reason kept."""
    store = cache.Cache(str(tmp_path))
    store.write("present", "cubin", b"kept image")
    if not _read_only_mount_works(tmp_path):
        import pytest

        pytest.skip("no mount namespace here (needs root and unshare): the unwritable-folder test covers the logic")
    script = (
        "import json; from torchtally.kernels.cuda import cache\n"
        f"store = cache.Cache({str(tmp_path)!r})\n"
        "kept = store.get_or_make('present', 'cubin', lambda: b'recompiled')\n"
        "made = store.get_or_make('absent', 'cubin', lambda: b'in memory')\n"
        "print(json.dumps([kept[0].decode(), kept[1], made[0].decode(), made[1], store.problem]))\n"
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", f'mount --bind -o ro {tmp_path} {tmp_path} && {sys.executable} -c "$0"', script],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    kept, kept_cached, made, made_cached, problem = json.loads(done.stdout)
    assert (kept, kept_cached) == ("kept image", True)
    assert (made, made_cached) == ("in memory", False) and "Read-only file system" in problem
    assert not (tmp_path / "absent.cubin").exists()


def test_a_lock_held_too_long_is_given_up_and_said(tmp_path):
    """A process that holds an entry's lock and never lets go (stopped, or a file system whose
    locks never answer) must not hang the others' first CUDA update: they compile without it."""
    import fcntl

    store = cache.Cache(str(tmp_path), lock_timeout_s=0.2)
    with open(tmp_path / "key.lock", "a+b") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)  # another open file: the cache's flock conflicts
        image, cached = store.get_or_make("key", "cubin", lambda: b"made alone")
    assert (image, cached) == (b"made alone", False)
    assert "was held for more than 0 s: compiled without waiting" in store.problem
    assert store.read("key", "cubin") == b"made alone"  # still stored: the rename is atomic
