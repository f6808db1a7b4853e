"""What wattzip does to the machine: one lock per machine, a journal of every change, undo.

Users run wattzip as root on shared servers for hours. Every change it makes (an
I/O scheduler, a governor, a mount, a loop device, a cgroup, helper processes) is
written to a journal on disk *before* it is made, with the value it replaces, and
is undone in reverse order when the command ends. A command that could not undo
(SIGKILL, the OOM killer, a lost node) leaves its entries behind: the next wattzip
command that touches the machine undoes them first and says what it undid, so the
value it then reads as "the original" is the machine's own. `wattzip restore`
shows and undoes them by hand.

The lock is an abstract Unix socket. The kernel frees it when its holder dies,
however it dies, and every process of the network namespace sees it, chroots
included; its holder answers who it is (pid, testbed, config, since when). A
container with a network namespace of its own does not see it: docs/machine.md says
so, and the idle calibration refuses a machine that was not quiet.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from wattzip.errors import MachineError
from wattzip.undoers import OWNER_ENV, UNDO

STATE_DIR_ENV = "WATTZIP_STATE_DIR"
LOCK_NAME_ENV = "WATTZIP_LOCK_NAME"
DEFAULT_STATE_DIR = "/var/lib/wattzip"
DEFAULT_LOCK_NAME = "wattzip-machine"
DEFAULT_LOCK_WAIT_S = 24 * 3600.0


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --- who owns a change -------------------------------------------------------------------


def process_start(pid: int) -> str | None:
    """The kernel's start time of a live process (field 22 of /proc/PID/stat): with the
    pid, it names one process for good (pids are reused, start times are not). A zombie
    (killed, not yet reaped by its parent) has no start: it can undo nothing any more."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return None if fields[0] in ("Z", "X") else fields[19]


def me() -> dict:
    return {"pid": os.getpid(), "start": process_start(os.getpid())}


def is_alive(owner: dict) -> bool:
    return process_start(owner["pid"]) == owner["start"]


def owner_tag(owner: dict | None = None) -> str:
    owner = owner or me()
    return f"{owner['pid']}:{owner['start']}"


# --- the journal -------------------------------------------------------------------------


def state_dir() -> Path:
    return Path(os.environ.get(STATE_DIR_ENV, DEFAULT_STATE_DIR))


def journal_path() -> Path:
    return state_dir() / "changes.jsonl"


def _append(entry: dict) -> None:
    path = journal_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        data = f.read()
        if data and not data.endswith(b"\n"):  # torn by a kill: a change never made
            f.truncate(data.rfind(b"\n") + 1)
        f.write((json.dumps(entry, sort_keys=True) + "\n").encode())
        f.flush()
        os.fsync(f.fileno())


def note(kind: str, target: str, original: str | None = None, **extra) -> str:
    """Journal a change before it is made; returns its id, for undone()."""
    entry_id = uuid.uuid4().hex
    _append({"op": "change", "id": entry_id, "owner": me(), "kind": kind, "target": target,
             "original": original, "extra": extra,
             "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")})
    return entry_id


def undone(entry_id: str) -> None:
    """The change is undone (by its owner, or by whoever cleaned up after it)."""
    _append({"op": "undone", "id": entry_id})


def pending() -> list[dict]:
    """Changes not undone yet, in the order they were made. A torn last line is a change
    that was never made (it is journaled first); any other bad line is an error."""
    path = journal_path()
    if not path.exists():
        return []
    lines = path.read_bytes().split(b"\n")
    changes: dict[str, dict] = {}
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError:
            if number == len(lines):  # no newline after it: torn by a kill
                continue
            raise MachineError(f"{path}, line {number}: not a journal entry ({raw[:60]!r}); "
                               "inspect the file, undo what it names by hand, and remove "
                               "the line") from None
        if entry.get("op") == "change":
            changes[entry["id"]] = entry
        elif entry.get("op") == "undone":
            changes.pop(entry.get("id"), None)
    return list(changes.values())


def describe(entry: dict) -> str:
    original = f" (was {entry['original']!r})" if entry.get("original") is not None else ""
    owner = entry["owner"]
    return (f"{entry['kind']} {entry['target']}{original}, changed by pid {owner['pid']} "
            f"at {entry['at']}")


def undo(entries: list[dict], log: Callable[[str], None] = _log, why: str = "") -> None:
    """Undo changes in reverse order; every one that fails is named in one error."""
    failed = []
    for entry in reversed(entries):
        try:
            UNDO[entry["kind"]](entry)
        except (OSError, MachineError, subprocess.TimeoutExpired) as exc:
            failed.append(f"{describe(entry)}: {exc}")
            continue
        undone(entry["id"])
        if why:
            log(f"wattzip: undid {why}: {describe(entry)}")
    if failed:
        raise MachineError("these changes to the machine could not be undone and stay "
                           "changed: " + "; ".join(failed) + f" (journal: {journal_path()}; "
                           "fix them by hand, then run `wattzip restore`)")


def leftovers() -> list[dict]:
    """Changes whose owner died without undoing them."""
    return [e for e in pending() if not is_alive(e["owner"])]


def recover(log: Callable[[str], None] = _log) -> int:
    found = leftovers()
    undo(found, log, why="what a killed wattzip process left")
    return len(found)


def undo_own(log: Callable[[str], None] = _log) -> None:
    undo([e for e in pending() if e["owner"] == me()], log)


# --- the lock -------------------------------------------------------------------------------


class MachineLock:
    """One holder per machine: whatever measures or changes the machine holds it."""

    def __init__(self, what: str, testbed: str = "", config: str = ""):
        self.name = os.environ.get(LOCK_NAME_ENV, DEFAULT_LOCK_NAME)
        self.info = {"pid": os.getpid(), "what": what, "testbed": testbed, "config": config,
                     "host": os.uname().nodename}
        self._sock: socket.socket | None = None

    def _try(self) -> bool:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.bind("\0" + self.name)
        except OSError:
            sock.close()
            return False
        sock.listen(8)
        self._sock = sock
        self.info["since"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        threading.Thread(target=self._answer, daemon=True).start()
        return True

    def _answer(self) -> None:
        """Tell whoever waits who holds the lock."""
        reply = (json.dumps(self.info) + "\n").encode()
        while self._sock is not None:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with conn, contextlib.suppress(OSError):
                conn.sendall(reply)

    def holder(self) -> dict | None:
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX,
                                                          socket.SOCK_STREAM) as s:
            s.settimeout(2)
            s.connect("\0" + self.name)
            return json.loads(s.makefile().readline())
        return None

    def acquire(self, wait_s: float = DEFAULT_LOCK_WAIT_S,
                log: Callable[[str], None] = _log) -> None:
        deadline, said = time.monotonic() + wait_s, 0.0
        while not self._try():
            holder = self.holder() or {}
            who = (f"pid {holder.get('pid')} ({holder.get('what')}, testbed "
                   f"{holder.get('testbed') or '-'}, config {holder.get('config') or '-'}, "
                   f"since {holder.get('since')})") if holder else "a process just leaving"
            if time.monotonic() > deadline:
                raise MachineError(f"the machine is busy: {who} holds the wattzip lock "
                                   f"@{self.name}; gave up after {wait_s:g} s. Measurements "
                                   "never overlap: wait for it, or stop it")
            if time.monotonic() >= said:
                log(f"wattzip: waiting for the machine: {who} holds it")
                said = time.monotonic() + 60
            time.sleep(0.5)

    def release(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


# --- a command that touches the machine ---------------------------------------------------

_depth = 0


@contextlib.contextmanager
def session(what: str, testbed: str = "", config: str = "",
            wait_s: float = DEFAULT_LOCK_WAIT_S,
            log: Callable[[str], None] = _log) -> Iterator[None]:
    """Hold the machine for one command: take the lock, undo what a killed command left,
    mark every process it starts, and undo its own changes at the end, also on SIGTERM,
    SIGINT and SIGHUP (a Slurm scancel, a Ctrl-C, a lost SSH session)."""
    global _depth
    if _depth:  # already held by this process
        yield
        return
    lock = MachineLock(what, testbed, config)
    lock.acquire(wait_s, log)
    _depth += 1
    previous = {sig: signal.signal(sig, _exit_on) for sig in (signal.SIGTERM, signal.SIGINT,
                                                               signal.SIGHUP)}
    os.environ[OWNER_ENV] = owner_tag()
    try:
        recover(log)
        note("processes", owner_tag())  # every child, however deep, carries the mark
        yield
    finally:
        try:
            undo_own(log)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            os.environ.pop(OWNER_ENV, None)
            _depth -= 1
            lock.release()


def _exit_on(signum, frame) -> None:
    """A signal unwinds like an exception, so that every change is undone."""
    sys.exit(128 + signum)


def restore(wait_s: float, log: Callable[[str], None] = _log) -> str:
    """`wattzip restore`: take the lock (which undoes what dead commands left), name what
    running commands hold, and say where the machine stands."""
    with session("restore", wait_s=wait_s):
        pass
    live = pending()
    for entry in live:
        log(f"in use by a running wattzip command: {describe(entry)}")
    return (f"the machine is as wattzip found it (journal {journal_path()})" if not live
            else f"{len(live)} change(s) belong to running commands")
