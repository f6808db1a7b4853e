"""The machine's lock: one holder at a time for whatever measures or changes the machine.

An flock on a file in a folder only root may write (/run/wattzip): an unprivileged
user can neither take it (as anyone could bind the abstract socket it was before) nor
write a holder's name into it, and the kernel frees it when its holder dies, however
it dies. Every process that sees the same /run sees it: a container or chroot with a
/run of its own does not.

Its name is fixed: no setting names another lock, since a second lock is a second study
measuring beside the first. The tests take this lock like any study (they change the
machine); they journal apart (WATTZIP_STATE_DIR), but the lock never follows the journal.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path

from wattzip.errors import MachineError
from wattzip.machine.trust import untrusted

LOCK_NAME = "wattzip-machine"
LOCK_DIR = "/run/wattzip"
DEFAULT_LOCK_WAIT_S = 24 * 3600.0


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class MachineLock:
    """One holder per machine: whatever measures or changes the machine holds it.

    An flock on a file in a folder only root can enter (/run/wattzip): an unprivileged
    user can neither take it nor write the holder's name in it, and the kernel frees it
    when its holder dies, however it dies. The holder writes who it is (pid, testbed,
    config, since when) into the file for whoever waits."""

    def __init__(self, what: str, testbed: str = "", config: str = ""):
        self.path = Path(LOCK_DIR) / f"{LOCK_NAME}.lock"
        self.info = {"pid": os.getpid(), "what": what, "testbed": testbed, "config": config,
                     "host": os.uname().nodename}
        self._fd: int | None = None

    def _open(self) -> int:
        folder = Path(LOCK_DIR)
        try:
            folder.mkdir(mode=0o700, exist_ok=True)
            st = os.lstat(folder)
            problem = (f"{folder} is not a folder" if not stat.S_ISDIR(st.st_mode)
                       else untrusted(folder, st, "the lock folder"))
            if problem is None:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW
                             | os.O_CLOEXEC, 0o600)
                problem = untrusted(self.path, os.fstat(fd), "the lock file")
                if problem is None:
                    return fd
                os.close(fd)
        except OSError as exc:
            problem = f"{exc.filename or folder}: {exc.strerror}"
        raise MachineError(f"the machine's lock cannot be taken safely: {problem}; wattzip "
                           "changes the machine, so it runs as root, and its lock lives in "
                           f"{LOCK_DIR}, which only root may write")

    def _try(self) -> bool:
        fd = self._open()
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return False
        self.info["since"] = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(self.info) + "\n").encode(), 0)
        self._fd = fd
        return True

    def holder(self) -> dict | None:
        """Who holds the lock, as the holder wrote it (None: nobody, or just arriving)."""
        with contextlib.suppress(OSError, ValueError):
            return json.loads(self.path.read_text())
        return None

    def acquire(self, wait_s: float = DEFAULT_LOCK_WAIT_S,
                log: Callable[[str], None] = _log) -> None:
        deadline, said = time.monotonic() + wait_s, 0.0
        while not self._try():
            holder = self.holder() or {}
            who = (f"pid {holder.get('pid')} ({holder.get('what')}, testbed "
                   f"{holder.get('testbed') or '-'}, config {holder.get('config') or '-'}, "
                   f"since {holder.get('since')})") if holder else "a process just arriving"
            if time.monotonic() > deadline:
                raise MachineError(f"the machine is busy: {who} holds the wattzip lock "
                                   f"{self.path}; gave up after {wait_s:g} s. Measurements "
                                   "never overlap: wait for it, or stop it")
            if time.monotonic() >= said:
                log(f"wattzip: waiting for the machine: {who} holds it")
                said = time.monotonic() + 60
            time.sleep(0.5)

    def release(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)
