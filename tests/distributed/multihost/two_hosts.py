"""Two "hosts" on one Linux machine: two network namespaces joined by a veth pair, each running
one torchrun node of a two-node job; gloo and torchtally's roll call go over that link only.

The addresses (10.231.0.1 on node A, 10.231.0.2 on node B, /24) exist only inside the two
namespaces, so nothing outside them is ever contacted. Names carry the pid of the test process
(ttmh-<pid>-<n>-a, veth ttmh<pid>a<n>), so concurrent runs never collide, and sweep_stale()
removes what earlier runs that crashed left behind (their pid is gone): namespaces with the
processes still in them, and veths left in the root namespace.
"""

import functools
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

PREFIX = "ttmh"
ADDRESSES = ("10.231.0.1", "10.231.0.2")
MASK = 24
MASTER_PORT = 29500  # a fresh namespace has every port free
PROCS_PER_NODE = 2
JOB = Path(__file__).with_name("two_host_job.py")

_counter = itertools.count()


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True, timeout=20)


@functools.cache
def cannot_make_namespaces() -> Optional[str]:
    """Why network namespaces cannot be made here (the skip reason), or None when they can."""
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is not installed; `make test` installs it where apt-get can"
    if os.geteuid() != 0:
        return "creating network namespaces needs root"
    probe = f"{PREFIX}-{os.getpid()}-probe"
    made = _ip("netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"`ip netns add` failed: {made.stderr.strip()}"
    _ip("netns", "del", probe, check=False)
    return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_namespace_processes(namespace: str) -> None:
    """SIGKILL every process in ``namespace`` (as a crashed host would lose them) and wait until
    none is left (at most 10 s)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        listed = _ip("netns", "pids", namespace, check=False)
        pids = [int(p) for p in listed.stdout.split()] if listed.returncode == 0 else []
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        time.sleep(0.05)


def _remove_namespace(namespace: str) -> None:
    kill_namespace_processes(namespace)
    _ip("netns", "del", namespace, check=False)  # its end of the veth pair goes with it


def sweep_stale() -> None:
    """Remove namespaces and root-namespace veths of this test's prefix whose run is gone."""
    for line in _ip("netns", "list", check=False).stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.fullmatch(rf"{PREFIX}-(\d+)-.*", name)
        if m and not _alive(int(m.group(1))):
            _remove_namespace(name)
    for line in _ip("-o", "link", "show", check=False).stdout.splitlines():
        m = re.match(rf"\d+: ({PREFIX}(\d+)[ab]\d+)[@:]", line)
        if m and not _alive(int(m.group(2))):
            _ip("link", "del", m.group(1), check=False)


@dataclass
class HostPair:
    namespaces: Tuple[str, str]  # node A, node B
    links: Tuple[str, str]  # each namespace's end of the veth pair

    def take_link_down(self) -> None:
        """Node A's end of the link goes down (node B's loses its carrier): a partition."""
        _ip("-n", self.namespaces[0], "link", "set", self.links[0], "down")

    def kill_node(self, node: int) -> None:
        kill_namespace_processes(self.namespaces[node])

    def close(self) -> None:
        for namespace in self.namespaces:
            _remove_namespace(namespace)
        for link in self.links:  # only there when setup stopped before moving it
            if _ip("link", "show", link, check=False).returncode == 0:
                _ip("link", "del", link, check=False)


def make_pair() -> HostPair:
    """Two namespaces, a veth pair between them, an address on each end, every link up."""
    n = next(_counter)
    pid = os.getpid()
    pair = HostPair((f"{PREFIX}-{pid}-{n}-a", f"{PREFIX}-{pid}-{n}-b"), (f"{PREFIX}{pid}a{n}", f"{PREFIX}{pid}b{n}"))
    try:
        for namespace in pair.namespaces:
            _ip("netns", "add", namespace)
        _ip("link", "add", pair.links[0], "type", "veth", "peer", "name", pair.links[1])
        for namespace, link, address in zip(pair.namespaces, pair.links, ADDRESSES):
            _ip("link", "set", link, "netns", namespace)
            _ip("-n", namespace, "addr", "add", f"{address}/{MASK}", "dev", link)
            _ip("-n", namespace, "link", "set", link, "up")
            _ip("-n", namespace, "link", "set", "lo", "up")
    except BaseException:
        pair.close()
        raise
    return pair


# -- a two-node torchrun job over the pair ----------------------------------------------------


def _worker_env(link: str) -> Dict[str, str]:
    import torchtally

    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")
    }
    package_root = str(Path(torchtally.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH", "")) if p)
    env["GLOO_SOCKET_IFNAME"] = link
    env["OMP_NUM_THREADS"] = "1"
    return env


class Job:
    """One torchrun node per namespace, running two_host_job.py ``scenario``; every rank writes
    <out>/rank<r>.json. Node logs: <out>/node<i>.log."""

    def __init__(self, pair: HostPair, scenario: str, out: Path, sync_timeout_s: float) -> None:
        self.pair, self.out = pair, out
        self.procs: List[subprocess.Popen] = []
        for node, (namespace, link) in enumerate(zip(pair.namespaces, pair.links)):
            command = [
                "ip",
                "netns",
                "exec",
                namespace,
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--nnodes=2",
                f"--node-rank={node}",
                f"--nproc-per-node={PROCS_PER_NODE}",
                f"--master-addr={ADDRESSES[0]}",
                f"--master-port={MASTER_PORT}",
                "--max-restarts=0",
                "--monitor-interval=0.2",
                str(JOB),
                scenario,
                str(out),
                str(sync_timeout_s),
            ]
            with open(out / f"node{node}.log", "wb") as log:
                self.procs.append(
                    subprocess.Popen(
                        command, env=_worker_env(link), stdout=log, stderr=subprocess.STDOUT, start_new_session=True
                    )
                )

    def path(self, name: str) -> Path:
        return self.out / name

    def wait_for(self, names: Sequence[str], timeout_s: float) -> None:
        """Wait until every file in ``names`` exists; AssertionError (with the node logs) when
        one is still missing after ``timeout_s`` or once every torchrun has exited."""
        deadline = time.monotonic() + timeout_s
        while True:
            missing = [n for n in names if not self.path(n).exists()]
            if not missing:
                return
            if time.monotonic() > deadline or all(p.poll() is not None for p in self.procs):
                raise AssertionError(f"{missing} did not appear within {timeout_s:g}s\n{self.logs()}")
            time.sleep(0.05)

    def signal_file(self, name: str) -> None:
        self.path(name).write_text("go")

    def results(self, ranks: Sequence[int], timeout_s: float) -> Dict[int, dict]:
        self.wait_for([f"rank{r}.json" for r in ranks], timeout_s)
        return {r: json.loads(self.path(f"rank{r}.json").read_text()) for r in ranks}

    def wait_exit(self, timeout_s: float) -> List[int]:
        deadline = time.monotonic() + timeout_s
        codes = []
        for p in self.procs:
            try:
                codes.append(p.wait(max(deadline - time.monotonic(), 0.1)))
            except subprocess.TimeoutExpired:
                raise AssertionError(f"torchrun still running after {timeout_s:g}s\n{self.logs()}") from None
        return codes

    def logs(self) -> str:
        parts = []
        for node in range(len(self.procs)):
            text = self.path(f"node{node}.log").read_text(errors="replace")
            parts.append(f"--- node {node} log (last 3000 chars) ---\n{text[-3000:]}")
        return "\n".join(parts)

    def close(self) -> None:
        """Kill both nodes (torchrun waits for its peer node at exit: a lost node would hold it)."""
        for namespace in self.pair.namespaces:
            kill_namespace_processes(namespace)
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                pass
