"""A command's guard: undoes what the command changed the moment it dies unannounced.

A `wattzip job` killed alone (SIGKILL, the OOM killer's choice) cannot undo anything,
and its tools, each in a process group of its own, go on running in its mounts. Every
command that holds the machine (wattzip.machine.session) starts this small process in a
session of its own, with the read end of a pipe only the command holds. When the
command ends it writes "done"; when it dies the pipe just closes, and the guard kills
every process carrying the command's mark, then takes the lock and undoes what the
command left, as the next command would, but at once. A kill of everything at once (a
Slurm timeout's cgroup, a lost node) takes the guard too: the next command recovers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time

DONE = b"done"
LOCK_WAIT_S = 120.0
GUARD_MAIN = "import sys; from wattzip.machine import guard; sys.exit(guard.main(sys.argv[1:]))"


def start(tag: str) -> tuple[subprocess.Popen, int]:
    """The guard of the command `tag` (pid:start), and the pipe end to tell it "done"."""
    from wattzip.machine.undoers import OWNER_ENV

    read, write = os.pipe()  # neither end is inherited by the tools (O_CLOEXEC)
    env = {k: v for k, v in os.environ.items() if k != OWNER_ENV}  # not one of its own
    try:
        # Not `-m wattzip.machine.guard`: the package imports this module first, and
        # runpy warns on every command's stderr that it runs a module already imported.
        # In "/" and with -P: the caller's folder, where anyone may plant a `wattzip/`,
        # is never on root's import path.
        proc = subprocess.Popen([sys.executable, "-P", "-c", GUARD_MAIN, tag], stdin=read,
                                stdout=subprocess.DEVNULL, env=env, cwd="/",
                                start_new_session=True)
    finally:
        os.close(read)
    return proc, write


def stop(proc: subprocess.Popen, write: int) -> None:
    """The command ends as it should: its guard leaves, undoing nothing."""
    with contextlib.suppress(OSError):
        os.write(write, DONE)
    os.close(write)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def _log(msg: str) -> None:
    with contextlib.suppress(OSError):  # the job's log may be gone with its reader
        print(msg, file=sys.stderr, flush=True)


def main(argv: list[str]) -> int:
    for sig in (signal.SIGHUP, signal.SIGINT, signal.SIGPIPE):
        signal.signal(sig, signal.SIG_IGN)
    tag = argv[0]
    said = b""
    while chunk := os.read(0, 64):
        said += chunk
    if said == DONE:
        return 0
    from wattzip import machine
    from wattzip.machine import undoers

    pid, start_time = tag.split(":", 1)
    owner = {"pid": int(pid), "start": start_time}
    deadline = time.monotonic() + 10
    while machine.is_alive(owner) and time.monotonic() < deadline:
        time.sleep(0.01)  # its files are closed; its exit is a moment away
    _log(f"wattzip guard: pid {pid} ended without undoing its changes; killing its tools")
    try:
        undoers.UNDO["processes"]({"target": tag})
        # Not for long: a command that takes the lock first recovers the same way.
        with machine.session("guard", f"after pid {pid}", wait_s=LOCK_WAIT_S, log=_log,
                             guarded=False):
            pass  # the session undoes what dead commands left
    except Exception as exc:  # noqa: BLE001 - said, and left to the next command
        _log(f"wattzip guard: {exc}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
