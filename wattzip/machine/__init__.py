"""What wattzip does to the machine: one lock per machine, a journal of every change, undo.

Users run wattzip as root on shared servers for hours. Every change it makes (an
I/O scheduler, a governor, a mount, a loop device, a cgroup, helper processes) is
written to a journal on disk *before* it is made, with the value it replaces, and
is undone in reverse order when the command ends. A command that could not undo
(SIGKILL, the OOM killer, a lost node) leaves its entries behind: the next wattzip
command that touches the machine undoes them first and says what it undid, so the
value it then reads as "the original" is the machine's own. `wattzip restore`
shows and undoes them by hand.

The journal is trusted only when root owns it and its folder and no one else can
write them: an entry names a file for root to write. Each kind of change may touch
only what that kind makes (wattzip.machine.undoers), and an entry from another host or boot is
reported, never undone.

One lock per machine (wattzip.machine.lock) keeps two commands from measuring or changing it
at once; a command killed alone is undone at once by its guard (wattzip.machine.guard).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import re
import signal
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

from wattzip.errors import MachineError
from wattzip.machine import guard, trust
from wattzip.machine.lock import (  # noqa: F401
    DEFAULT_LOCK_WAIT_S,
    LOCK_DIR,
    LOCK_NAME,
    MachineLock,
    untrusted,
)
from wattzip.machine.undoers import OWNER_ENV, UNDO

STATE_DIR_ENV = "WATTZIP_STATE_DIR"
DEFAULT_STATE_DIR = "/var/lib/wattzip"


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


def boot_id() -> str:
    """This boot of this kernel: a pid and its start time name a process within it only."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def here() -> dict:
    return {"host": os.uname().nodename, "boot": boot_id()}


def is_here(entry: dict) -> bool:
    """Made on this host in this boot (an entry from before hosts were recorded: yes).
    The boot id alone decides when the entry has one: it is random per boot of each
    host, and a host renamed within a boot keeps it (its own entries stay its own)."""
    if entry.get("boot") is not None:
        return entry["boot"] == boot_id()
    return entry.get("host", here()["host"]) == here()["host"]


def me() -> dict:
    return {"pid": os.getpid(), "start": process_start(os.getpid())}


def is_alive(owner: dict) -> bool:
    return process_start(owner["pid"]) == owner["start"]


def owner_tag(owner: dict | None = None) -> str:
    owner = owner or me()
    return f"{owner['pid']}:{owner['start']}"


# --- the journal -------------------------------------------------------------------------


def state_dir() -> Path:
    """Resolved once, here: a link in the path is followed now, never swapped later."""
    return Path(os.path.realpath(os.environ.get(STATE_DIR_ENV, DEFAULT_STATE_DIR)))


def journal_path() -> Path:
    return state_dir() / "changes.jsonl"


def check_trusted(create: bool = False) -> Path:
    """The journal, if only its owner (root) can write it and the folders above it
    (`trust`, as every folder root uses); a journal others can write could name any file
    as a change for root to "undo". Made root's alone (0700) when missing."""
    folder = state_dir()
    journal = folder / "changes.jsonl"
    if not create and not os.path.lexists(folder):
        return journal  # nothing journaled yet
    try:
        if create and not os.path.lexists(folder):
            trust.trusted_folder(folder.parent, "the folder above the state folder")
            with contextlib.suppress(FileExistsError):  # made meanwhile: checked below
                folder.mkdir(mode=0o700)
        trust.trusted_folder(folder, "the state folder", create=False)
        if os.path.lexists(journal):
            trust.trusted_file(journal, "the journal")
    except MachineError as exc:
        raise MachineError(f"the state folder {folder} ({STATE_DIR_ENV}), which holds the "
                           f"journal of changes to the machine, cannot be used: {exc}. "
                           f"Give {STATE_DIR_ENV} a folder owned by root that no one else "
                           f"can write (e.g. the default {DEFAULT_STATE_DIR})") from None
    return journal


def _open_journal() -> int:
    path = check_trusted(create=True)
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW
                       | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise MachineError(f"the journal {path} cannot be written ({exc.strerror}); "
                           f"choose a state folder root can write ({STATE_DIR_ENV})") from None


# A journal larger than this is compacted on the next append: rewritten with only the
# changes still pending (and any line it cannot read, kept for its error), then renamed
# over the old one. Otherwise it grows forever and is read whole for every append.
COMPACT_BYTES = 256 << 10


def _append(entry: dict) -> None:
    line = (json.dumps(entry, sort_keys=True) + "\n").encode()
    while True:
        with os.fdopen(_open_journal(), "a+b") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            path = journal_path()
            if os.fstat(f.fileno()).st_ino != os.stat(path).st_ino:
                continue  # compacted (renamed over) while this one waited: the new file
            f.seek(0)
            data = f.read()
            if data and not data.endswith(b"\n"):  # torn by a kill: a change never made
                data = data[: data.rfind(b"\n") + 1]
                f.truncate(len(data))
            if len(data) > COMPACT_BYTES:
                _compacted(path, data + line)
                return
            f.write(line)
            f.flush()
            os.fsync(f.fileno())
            return


def _compacted(path: Path, data: bytes) -> None:
    """`data`'s pending changes (and unreadable lines) written whole to the journal's
    name: a new file, fsync'd, renamed over it (the caller holds the old one's lock)."""
    undone = set()
    for raw in data.split(b"\n"):
        with contextlib.suppress(ValueError, AttributeError):
            if (e := json.loads(raw)).get("op") == "undone":
                undone.add(e.get("id"))
    kept = []
    for raw in data.split(b"\n"):
        if not raw.strip():
            continue
        try:
            e = json.loads(raw)
        except ValueError:
            kept.append(raw)
            continue
        if isinstance(e, dict) and e.get("op") == "change" and e.get("id") not in undone:
            kept.append(raw)
    fresh = path.with_name(path.name + ".compact")
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    try:
        view = memoryview(b"".join(raw + b"\n" for raw in kept))
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(fresh, path)


def note(kind: str, target: str, original: str | None = None, **extra) -> str:
    """Journal a change before it is made; returns its id, for undone()."""
    entry_id = uuid.uuid4().hex
    _append({"op": "change", "id": entry_id, "owner": me(), "kind": kind, "target": target,
             "original": original, "extra": extra, **here(),
             "at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")})
    return entry_id


def undone(entry_id: str) -> None:
    """The change is undone (by its owner, or by whoever cleaned up after it)."""
    _append({"op": "undone", "id": entry_id})


def pending() -> list[dict]:
    """Changes not undone yet, in the order they were made. A torn last line is a change
    that was never made (it is journaled first); any other bad line is an error."""
    path = check_trusted()
    if not path.exists():
        return []
    with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NOFOLLOW)) as f:
        lines = f.read().split(b"\n")
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
    where = "" if is_here(entry) else (f" on host {entry.get('host')}, boot "
                                       f"{entry.get('boot')}")
    return (f"{entry['kind']} {entry['target']}{original}, changed by pid {owner['pid']}"
            f"{where} at {entry['at']}")


def _is_tools(entry: dict) -> bool:
    """A command's own mark (pid:start): the tools it ran, not a helper daemon of its
    own (the emulated disk's, tagged apart, is stopped after what sits on it)."""
    return entry["kind"] == "processes" and bool(re.fullmatch(r"\d+:\d+", entry["target"]))


def undo_order(entries: list[dict]) -> list[dict]:
    """Reverse order, but a command's tools first: a tool still running in a mount keeps
    it busy, so it is killed before anything is unmounted."""
    ordered = list(reversed(entries))
    return [e for e in ordered if _is_tools(e)] + [e for e in ordered if not _is_tools(e)]


def undo(entries: list[dict], log: Callable[[str], None] = _log, why: str = "") -> None:
    """Undo changes in reverse order (processes first), going on past one that fails;
    every one that fails is named in one error. A change undone that the journal cannot
    record (a full or failing disk) does not stop the rest: it is named in the error as
    undone but unmarked, since a later command will try to undo it again. A log that
    cannot be written (a dead terminal) stops nothing either."""
    failed, unmarked = [], []
    for entry in undo_order(entries):
        try:
            if entry.get("kind") not in UNDO:
                raise MachineError(f"unknown kind {entry.get('kind')!r}")
            UNDO[entry["kind"]](entry)
        except (OSError, MachineError, subprocess.TimeoutExpired) as exc:
            failed.append(f"{describe(entry)}: {exc}")
            continue
        try:
            undone(entry["id"])
        except (OSError, MachineError) as exc:
            unmarked.append(f"{describe(entry)} ({getattr(exc, 'strerror', None) or exc})")
        if why:
            with contextlib.suppress(OSError, ValueError):  # stderr closed or gone
                log(f"wattzip: undid {why}: {describe(entry)}")
    problems = []
    if failed:
        problems.append("these changes to the machine could not be undone and stay "
                        "changed: " + "; ".join(failed) + " (fix them by hand, then run "
                        "`wattzip restore`)")
    if unmarked:
        problems.append("these changes were undone but the journal could not record it, "
                        "so a later command will undo them again: " + "; ".join(unmarked)
                        + f" (free space on the state folder's disk, {STATE_DIR_ENV})")
    if problems:
        raise MachineError("; ".join(problems) + f" (journal: {journal_path()})")


def leftovers() -> list[dict]:
    """Changes of this host and boot whose owner died without undoing them."""
    return [e for e in pending() if is_here(e) and not is_alive(e["owner"])]


def foreign() -> list[dict]:
    """Changes journaled on another host or in another boot: their pid names no process
    here, so they are reported, never undone (a reboot undid all but folders)."""
    return [e for e in pending() if not is_here(e)]


def recover(log: Callable[[str], None] = _log) -> int:
    for entry in foreign():
        log(f"wattzip: not undone, from another host or boot: {describe(entry)} (check it "
            f"by hand, then remove its line from {journal_path()})")
    found = leftovers()
    undo(found, log, why="what a killed wattzip process left")
    return len(found)


def undo_own(log: Callable[[str], None] = _log) -> None:
    undo([e for e in pending() if e["owner"] == me()], log)


# --- a command that touches the machine ---------------------------------------------------

_depth = 0
# Set once the command starts undoing (or a signal starts it): a signal that comes then
# waits in `_deferred` until the undo is over. A second Ctrl-C, or Snakemake passing on
# Slurm's SIGTERM after the first, must not cut the undo short.
_unwinding = False
_by_signal = False
_deferred: list[int] = []
# Guards left to undo what this process could not (see _leave): kept open until it ends.
_left_to_guard: list[tuple[subprocess.Popen, int]] = []


@contextlib.contextmanager
def session(what: str, testbed: str = "", config: str = "",
            wait_s: float = DEFAULT_LOCK_WAIT_S,
            log: Callable[[str], None] = _log, guarded: bool = True) -> Iterator[None]:
    """Hold the machine for one command: take the lock, undo what a killed command left,
    mark every process it starts, start its guard (wattzip.machine.guard: if the command dies
    unannounced, its tools are killed and its changes undone at once), and undo its own
    changes at the end, also on SIGTERM,
    SIGINT and SIGHUP (a Slurm scancel, a Ctrl-C, a lost SSH session), unless the
    hang-up is ignored (nohup). Once the undo has begun, those signals wait until it ends."""
    global _depth, _unwinding, _by_signal
    if _depth:  # already held by this process
        yield
        return
    lock = MachineLock(what, testbed, config)
    lock.acquire(wait_s, log)
    _depth += 1
    # A hang-up that nohup (or a parent) chose to ignore stays ignored: the user meant
    # the command to outlive the terminal. SIGTERM and SIGINT always undo and stop.
    caught = [s for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
              if s != signal.SIGHUP or signal.getsignal(s) is not signal.SIG_IGN]
    previous = {sig: signal.signal(sig, _exit_on) for sig in caught}
    os.environ[OWNER_ENV] = owner_tag()
    watch = None
    try:
        recover(log)
        note("processes", owner_tag())  # every child, however deep, carries the mark
        if guarded:
            watch = guard.start(owner_tag())
        yield
    finally:
        _unwinding = True
        try:
            _leave(watch, log)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            os.environ.pop(OWNER_ENV, None)
            _depth -= 1
            lock.release()
            deferred, stopping = list(_deferred), _by_signal
            _deferred.clear()
            _unwinding = _by_signal = False
        if deferred and not stopping:  # asked to stop while undoing: stop now, as asked
            signal.raise_signal(deferred[0])


def _leave(watch: tuple[subprocess.Popen, int] | None, log: Callable[[str], None]) -> None:
    """Undo this command's changes, then let its guard go; while any of them stays
    pending (an undo cut short), the guard stays, to undo it when this process ends."""
    try:
        undo_own(log)
    finally:
        try:
            left = any(e["owner"] == me() for e in pending())
        except MachineError:
            left = True
        if watch and not left:
            guard.stop(*watch)
        elif watch:
            _left_to_guard.append(watch)  # its pipe closes when this process ends


def held() -> bool:
    """This process holds the machine (inside a session): meters open only then."""
    return _depth > 0


def _exit_on(signum, frame) -> None:
    """A signal unwinds like an exception, so that every change is undone; one that comes
    while they are being undone waits until they are (a SIGKILL leaves them to the guard)."""
    global _unwinding, _by_signal
    if _unwinding:
        _deferred.append(signum)
        with contextlib.suppress(OSError):  # not print(): it may be inside a print
            os.write(2, f"wattzip: signal {signum}: stopping once its changes to the "
                        "machine are undone\n".encode())
        return
    _unwinding = _by_signal = True
    sys.exit(128 + signum)


def restore(wait_s: float, log: Callable[[str], None] = _log) -> str:
    """`wattzip restore`: take the lock (which undoes what dead commands left), name what
    running commands hold, and say where the machine stands."""
    with session("restore", wait_s=wait_s):
        pass
    live = [e for e in pending() if is_here(e)]
    for entry in live:
        log(f"in use by a running wattzip command: {describe(entry)}")
    return (f"the machine is as wattzip found it (journal {journal_path()})" if not live
            else f"{len(live)} change(s) belong to running commands")
