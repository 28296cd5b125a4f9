"""Roll call after a failed sync: which ranks of the group are still there, and where each is.

A sync that times out knows only that some rank did not take part. Naming that rank through
torch.distributed's store would depend on the one process that hosts the store (rank 0, or
node 0's torchrun agent): when it is the one lost, nothing can be named. Instead, every process
that syncs keeps a tiny TCP service on a thread of its own (started at its first sync over a
group of more than one rank), and after a failure each surviving rank asks every other member
directly. A rank answers with how far it is in each group's syncs (sync number, stage, and
whether it is running, has failed or has left that sync), also while its main thread is blocked
in a collective; the question itself says that the asker failed, so a survivor that exits right
after its own error is still known to have been there.

Addresses (IPv4 and port, one int64 per rank) travel in every sync header, so after one header
over a group every member knows every other's. For a first sync that fails before any header
arrived, each process also registers its address when it starts its first sync: in a file that
the ranks of its node share (a folder named after the launcher's process, torchrun or
run_distributed) and in the default store. A rank of this node with no file there, or any rank
with no key in a store that answers, has never started a sync. A successful sync costs one dict
write per stage here; sockets are used only when a sync fails.

The service answers anyone who can reach the address (it binds the interface that reaches
MASTER_ADDR, or GLOO_SOCKET_IFNAME's): it tells sync progress and nothing else.
"""

import contextlib
import errno
import fcntl
import json
import os
import selectors
import shutil
import socket
import socketserver
import struct
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, cast

# Stages of one sync, in the order a rank goes through them: the header collective, packing
# between it and the data collectives, inside a data collective's call (starting it), waiting
# for the data collectives to complete.
STAGES = ("header", "after header", "data call", "data wait")
RUNNING, FAILED, LEFT = "running", "failed", "left"

GroupKey = Tuple[int, ...]  # the group's global ranks, in group-rank order

_progress: Dict[GroupKey, Tuple[int, str, str]] = {}  # group -> (sync id, stage, state)
_heard: Dict[Tuple[GroupKey, int], Dict[int, str]] = {}  # (group, sync id) -> {rank: stage it failed in}
_book: Dict[int, int] = {}  # global rank -> address word
_lock = threading.Lock()


@dataclass(frozen=True)
class Answer:
    """What the roll call learnt about one rank.

    kind: "present" (reached the sync: still in it, failed in it, or done with it),
    "elsewhere" (answered, but had not reached this sync), "gone" (its host refused the
    connection: the process is gone), "silent" (no answer in time: host down, network cut or
    process frozen), "never" (it registered no address: it never started a sync), "unknown"
    (no address known for it, and no way to tell whether it started a sync).
    sync_id, stage, state: the rank's own report, when it answered.
    """

    kind: str
    sync_id: int = 0
    stage: str = ""
    state: str = ""
    detail: str = ""


# -- the service every syncing process runs ------------------------------------------------


class _Handler(socketserver.StreamRequestHandler):
    timeout = 2.0  # a client that connects and never writes must not hold a thread for long
    server: "_Server"  # the service's own server class (an annotation only)

    def handle(self) -> None:
        try:
            asked = json.loads(self.rfile.readline(4096))
            group = tuple(asked["group"])
            if asked.get("state") == FAILED:
                with _lock:
                    _heard.setdefault((group, int(asked["sync"])), {})[int(asked["rank"])] = str(asked["stage"])
            sync_id, stage, state = _progress.get(group, (0, "", LEFT))
            reply = {
                "rank": self.server.global_rank,
                "pid": os.getpid(),
                "sync": sync_id,
                "stage": stage,
                "state": state,
            }
            self.wfile.write(json.dumps(reply).encode() + b"\n")
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a malformed or abandoned question gets no answer


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    global_rank = -1


_service: Dict[str, Any] = {"pid": None, "word": 0}


def address_word(global_rank: int, store_getter: Callable[[], Any]) -> int:
    """This process's address as a header word (0 when it has none), starting the service on
    the first call in this process (again after a fork)."""
    if _service["pid"] == os.getpid():
        return _service["word"]
    with _lock:
        if _service["pid"] != os.getpid():
            _service["word"] = _start_service(global_rank, store_getter)
            _service["pid"] = os.getpid()
    return _service["word"]


def _start_service(global_rank: int, store_getter: Callable[[], Any]) -> int:
    try:
        server = _Server((local_ip(), 0), _Handler)
    except OSError:
        return 0  # no roll call for this rank: peers will report it as having no address
    server.global_rank = global_rank
    ip, port = cast(Tuple[str, int], server.server_address[:2])  # an AF_INET address
    word = (struct.unpack("!I", socket.inet_aton(ip))[0] << 16) | port
    _book[global_rank] = word
    _register_on_node(global_rank, word)

    def serve() -> None:
        _register(global_rank, word, store_getter)  # here: a store that hangs must not stall a sync
        server.serve_forever(poll_interval=0.5)

    threading.Thread(target=serve, name="torchtally-rollcall", daemon=True).start()
    return word


def _store_key(global_rank: int) -> str:
    return f"torchtally/rollcall/{global_rank}"


def _register(global_rank: int, word: int, store_getter: Callable[[], Any]) -> None:
    try:
        store_getter().set(_store_key(global_rank), str(word))
    except Exception:
        pass  # the header still carries the address


def local_ip() -> str:
    """The IPv4 address peers reach this process at: GLOO_SOCKET_IFNAME's (the interface gloo
    itself uses), else the one the route to MASTER_ADDR leaves from, else the host name's."""
    ifname = os.environ.get("GLOO_SOCKET_IFNAME", "").split(",")[0].strip()
    if ifname:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s, contextlib.suppress(OSError, ValueError):
            request = struct.pack("256s", ifname.encode()[:15])
            return socket.inet_ntoa(fcntl.ioctl(s.fileno(), 0x8915, request)[20:24])  # SIOCGIFADDR
    master = os.environ.get("MASTER_ADDR")
    if master:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s, contextlib.suppress(OSError, ValueError):
            s.connect((master, int(os.environ.get("MASTER_PORT", "9") or 9)))  # sends nothing
            return s.getsockname()[0]
    with contextlib.suppress(OSError, ValueError):
        return socket.gethostbyname(socket.gethostname())
    return "127.0.0.1"


def _address(word: int) -> Tuple[str, int]:
    return socket.inet_ntoa(struct.pack("!I", word >> 16)), word & 0xFFFF


# -- what a sync records as it goes --------------------------------------------------------


def mark(group: GroupKey, sync_id: int, stage: str, state: str = RUNNING) -> None:
    """Record how far this process is in its sync ``sync_id`` over ``group``."""
    _progress[group] = (sync_id, stage, state)


def leave(group: GroupKey, sync_id: int) -> None:
    """This process is done with sync ``sync_id`` over ``group`` (kept as FAILED if it failed)."""
    entry = _progress.get(group)
    if entry is not None and entry[0] == sync_id and entry[2] == RUNNING:
        _progress[group] = (sync_id, entry[1], LEFT)


def learn(group: GroupKey, words: Sequence[int]) -> None:
    """Keep the members' addresses from a header (``words`` in group-rank order)."""
    for rank, word in zip(group, words):
        if word and _book.get(rank) != word:
            _book[rank] = word


# -- the roll call itself ------------------------------------------------------------------


def roll_call(
    group: GroupKey,
    me: int,
    sync_id: int,
    stage: str,
    grace_s: float,
    store_getter: Callable[[], Any],
    late_wait_s: float = 0.0,
) -> Dict[int, Answer]:
    """Ask every other member of ``group`` where it is, telling it that this rank (global rank
    ``me``) failed sync ``sync_id`` in ``stage``. Returns global rank -> Answer. Waits at most
    about ``grace_s`` seconds (a member that does not answer by then is "silent").

    A member that has not reached this sync (it answers from an earlier one, or has registered
    no address yet) is looked up and asked again for up to ``late_wait_s`` seconds (the time the
    sync had left): a failure that came fast, e.g. on a dead peer's closed connection, must not
    name a healthy rank that was a few milliseconds from the sync."""
    mark(group, sync_id, stage, FAILED)
    now = time.monotonic()
    deadline, late_deadline = now + grace_s, now + min(late_wait_s, grace_s)
    question = (
        json.dumps({"rank": me, "group": list(group), "sync": sync_id, "stage": stage, "state": FAILED}) + "\n"
    ).encode()
    answers: Dict[int, Tuple[str, Any]] = {}
    store_read = False
    pending = [r for r in group if r != me]
    while True:
        if any(r not in _book for r in pending):
            _read_node_registry()
        if any(r not in _book for r in pending):
            store_read = _read_store([r for r in pending if r not in _book], store_getter, min(grace_s / 2, 2.0))
        answers.update(_ask_all({r: _address(_book[r]) for r in pending if r in _book}, question, deadline))
        heard = _heard.get((group, sync_id), {})
        pending = [r for r in pending if r not in heard and (r not in _book or _behind(answers.get(r), sync_id))]
        if not pending or time.monotonic() >= late_deadline:
            break
        time.sleep(0.05)
    heard = dict(_heard.get((group, sync_id), {}))
    out: Dict[int, Answer] = {}
    for r in (r for r in group if r != me):
        if r in heard:  # it told us it failed in this sync (it may have exited since)
            out[r] = Answer("present", sync_id, heard[r], FAILED)
        elif r not in _book:
            never = r in node_ranks() or (store_read and r not in _book)
            if never:
                out[r] = Answer("never", detail="no address registered")
            elif not store_read and r == _store_host_rank() and _refused(_store_address(), grace_s):
                out[r] = Answer("gone", detail=STORE_HOST_GONE)
            else:
                out[r] = Answer("unknown", detail="no address known")
        else:
            out[r] = _classify(answers.get(r), r, sync_id)
    return out


STORE_HOST_GONE = "it hosted the store, whose port now refuses connections"


def _store_host_rank() -> Optional[int]:
    """The global rank whose process hosts the default store: rank 0 under env:// (MASTER_ADDR,
    MASTER_PORT), unless torchrun's agent hosts it (then no rank's death closes it)."""
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() == "true" or _store_address() is None:
        return None
    return 0


def _store_address() -> Optional[Tuple[str, int]]:
    try:
        return os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    except (KeyError, ValueError):
        return None


def _refused(address: Optional[Tuple[str, int]], wait_s: float) -> bool:
    """Whether a TCP connection to ``address`` is refused (its host is up, nothing listens: the
    process that listened is gone), as opposed to accepted or unanswered."""
    if address is None:
        return False
    try:
        with socket.create_connection(address, timeout=wait_s):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


def _behind(answer: Optional[Tuple[str, Any]], sync_id: int) -> bool:
    """The answer of a member that has not reached sync ``sync_id`` yet."""
    return answer is not None and answer[0] == "reply" and int(answer[1].get("sync", 0)) < sync_id


def _classify(answer: Optional[Tuple[str, Any]], rank: int, sync_id: int) -> Answer:
    if answer is None:
        return Answer("silent", detail="no answer")
    kind, payload = answer
    if kind != "reply":
        return Answer(kind, detail=payload)
    if payload.get("rank") != rank:
        return Answer("unknown", detail=f"its address now answers as rank {payload.get('rank')}")
    theirs = int(payload.get("sync", 0))
    report: Dict[str, Any] = dict(
        sync_id=theirs, stage=str(payload.get("stage", "")), state=str(payload.get("state", ""))
    )
    if theirs >= sync_id:
        return Answer("present", **report)
    return Answer("elsewhere", **report)


def _read_store(ranks: Sequence[int], store_getter: Callable[[], Any], wait_s: float) -> bool:
    """Look up addresses in the store, on a thread given up after ``wait_s`` (a store whose host
    is unreachable can block a call for the store's whole timeout). True when the store answered
    for every rank."""
    answered = []

    def read() -> None:
        try:
            store = store_getter()
            for r in ranks:
                if store.check([_store_key(r)]):
                    _book[r] = int(store.get(_store_key(r)))
            answered.append(True)
        except Exception:
            pass

    thread = threading.Thread(target=read, name="torchtally-rollcall-store", daemon=True)
    thread.start()
    thread.join(wait_s)
    return bool(answered)


# -- the node's registry: a folder the ranks started by one launcher process share ----------


def node_ranks() -> range:
    """Global ranks on this node, as torchrun (and run_distributed) say: they are contiguous,
    LOCAL_WORLD_SIZE of them, this one at LOCAL_RANK. Empty when the launcher does not say."""
    try:
        rank, local, size = (int(os.environ[k]) for k in ("RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE"))
    except (KeyError, ValueError):
        return range(0)
    return range(rank - local, rank - local + size)


def _registry_dir() -> Optional[str]:
    if not node_ranks():
        return None
    job = f"{os.getppid()}-{os.environ.get('MASTER_PORT', '')}-{os.environ.get('TORCHELASTIC_RUN_ID', '')}"
    return os.path.join(tempfile.gettempdir(), f"torchtally-rollcall-{os.getuid()}", job)


def _register_on_node(global_rank: int, word: int) -> None:
    folder = _registry_dir()
    if folder is None:
        return
    with contextlib.suppress(OSError):
        _sweep(os.path.dirname(folder))
        os.makedirs(folder, exist_ok=True)
        tmp = os.path.join(folder, f".{global_rank}.{os.getpid()}")
        with open(tmp, "w") as f:
            f.write(str(word))
        os.replace(tmp, os.path.join(folder, str(global_rank)))


def _sweep(root: str) -> None:
    """Remove the folders of launchers that are gone (their pid starts the folder's name)."""
    for name in os.listdir(root) if os.path.isdir(root) else ():
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(name.split("-")[0]), 0)
            continue
        shutil.rmtree(os.path.join(root, name), ignore_errors=True)


def _read_node_registry() -> None:
    folder = _registry_dir()
    for r in node_ranks():
        with contextlib.suppress(OSError, ValueError, TypeError):
            with open(os.path.join(folder, str(r))) as f:  # type: ignore[arg-type]
                _book.setdefault(r, int(f.read()))


def _ask_all(targets: Dict[int, Tuple[str, int]], question: bytes, deadline: float) -> Dict[int, Tuple[str, Any]]:
    """Send ``question`` to every target at once (non-blocking sockets) and read one line back
    from each. Returns rank -> ("reply", dict) or ("gone" | "silent", why); ranks that did not
    answer by ``deadline`` are left out."""
    results: Dict[int, Tuple[str, Any]] = {}
    selector = selectors.DefaultSelector()
    for rank, address in targets.items():
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        err = sock.connect_ex(address)
        if err not in (0, errno.EINPROGRESS):
            results[rank] = _refusal(err)
            sock.close()
            continue
        selector.register(sock, selectors.EVENT_WRITE, [rank, question, b""])
    try:
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            for key, _ in selector.select(remaining):
                _step(selector, key, results)
    finally:
        for key in list(selector.get_map().values()):
            cast(socket.socket, key.fileobj).close()
        selector.close()
    return results


def _step(selector: selectors.BaseSelector, key: selectors.SelectorKey, results: Dict[int, Tuple[str, Any]]) -> None:
    sock, state = cast(socket.socket, key.fileobj), key.data  # every registered object is a socket
    rank = state[0]
    try:
        if key.events & selectors.EVENT_WRITE:
            err = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                raise OSError(err, os.strerror(err))
            state[1] = state[1][sock.send(state[1]) :]
            if not state[1]:
                selector.modify(sock, selectors.EVENT_READ, state)
            return
        chunk = sock.recv(4096)
        state[2] += chunk
        if chunk and b"\n" not in state[2]:
            return
        results[rank] = ("reply", json.loads(state[2])) if chunk else ("silent", "closed without an answer")
    except OSError as exc:
        results[rank] = _refusal(exc.errno or 0)
    except ValueError:
        results[rank] = ("silent", "an unreadable answer")
    selector.unregister(sock)
    sock.close()


def _refusal(err: int) -> Tuple[str, str]:
    if err == errno.ECONNREFUSED:
        return ("gone", "its host refused the connection: the process is gone")
    return ("silent", f"unreachable: {os.strerror(err)}")
