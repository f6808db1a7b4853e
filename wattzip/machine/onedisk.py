"""One disk, one bandwidth: an emulated disk whose reads and writes share one budget.

SYSTOR '09 read its inputs from, and wrote its outputs to, one dedicated disk: one
head, one bandwidth for both. The kernel's block-I/O throttles (cgroup v1
blkio.throttle.*, v2 io.max) keep a read budget and a write budget apart, even on one
device, so a plain copy on a throttled loop device moves its N bytes in and its N bytes
out in N/rate, where one disk takes 2N/rate. nbdkit's rate filter keeps two buckets too.

This module emulates the shared budget: a small FUSE filesystem exposes the medium's
image file as `disk.img`, every read and write of it is charged to one token bucket at
the emulated rate, and the medium's loop device holds that file (with direct I/O). The
input staged on the medium and the output written to it then take turns on one
bandwidth, as on the paper's disk. The budget sets the time; the bytes behind it may come
from the host's page cache of the image file (the job evicts it before each run), so
only the bandwidth is emulated, not a disk's seeks or its power.

The filesystem also offers `rate` (the budget in bytes/s, read back; written to change
it: "unlimited" while the job stages its inputs, outside every measured region) and
`moved` (bytes read and written so far), which the tests read to see what the disk did.
The daemon's own CPU time (not measured apart from the job's) falls inside the
measured region, as a real disk's controller draws power; the report says so.

The daemon runs as a child process, journaled with its mount before it starts
(wattzip.machine), so a killed job's disk is unmounted and its daemon killed by the
next command.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import os
import stat
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from wattzip import machine
from wattzip.errors import FactorError
from wattzip.machine.undoers import OWNER_ENV

DISK_FILE = "disk.img"
# Credit a budget may bank while idle: a real disk does not go faster after a pause,
# so a burst is kept to what one request queue holds, never a whole slice of bytes.
BURST_S = 0.02
START_TIMEOUT_S = 15.0


class BandwidthBudget:
    """A token bucket kept as a virtual clock: each request waits until the bytes before
    it have passed at `bytes_per_s` (None: no limit), reads and writes alike."""

    def __init__(self, bytes_per_s: int | None):
        self.bytes_per_s = bytes_per_s
        self._lock = threading.Lock()
        self._free_at = time.monotonic()
        self.moved = {"read": 0, "write": 0}

    def charge(self, nbytes: int, kind: str) -> float:
        """Account `nbytes` of `kind` and return how long the request must wait (s)."""
        with self._lock:
            self.moved[kind] += nbytes
            if not self.bytes_per_s:
                return 0.0
            now = time.monotonic()
            self._free_at = max(self._free_at, now - BURST_S) + nbytes / self.bytes_per_s
            return max(0.0, self._free_at - now)

    def spend(self, nbytes: int, kind: str) -> None:
        wait = self.charge(nbytes, kind)
        if wait > 0:
            time.sleep(wait)


def _operations(backing: str, budget: BandwidthBudget):
    """The FUSE filesystem: disk.img (the image behind one budget), rate and moved."""
    import mfusepy as fuse

    class OneDiskFS(fuse.Operations):
        use_ns = True

        def __init__(self):
            self.fd = os.open(backing, os.O_RDWR)

        def _text(self, path: str) -> bytes:
            if path == "/rate":
                rate = budget.bytes_per_s
                return f"{rate if rate else 'unlimited'}\n".encode()
            return f"{budget.moved['read']} {budget.moved['write']}\n".encode()

        def getattr(self, path, fh=None):
            now = int(time.time() * 1e9)
            times = {"st_atime": now, "st_mtime": now, "st_ctime": now}
            if path == "/":
                return {"st_mode": stat.S_IFDIR | 0o755, "st_nlink": 2, **times}
            if path == f"/{DISK_FILE}":
                return {"st_mode": stat.S_IFREG | 0o600, "st_nlink": 1,
                        "st_size": os.fstat(self.fd).st_size, **times}
            if path in ("/rate", "/moved"):
                return {"st_mode": stat.S_IFREG | 0o644, "st_nlink": 1, "st_size": 4096,
                        **times}
            raise fuse.FuseOSError(errno.ENOENT)

        def readdir(self, path, fh):
            return [".", "..", DISK_FILE, "rate", "moved"]

        def open(self, path, flags):
            return 0

        def read(self, path, size, offset, fh):
            if path != f"/{DISK_FILE}":
                return self._text(path)[offset:offset + size]
            budget.spend(size, "read")
            return os.pread(self.fd, size, offset)

        def write(self, path, data, offset, fh):
            if path == "/rate":
                text = bytes(data).decode().strip()
                budget.bytes_per_s = None if text == "unlimited" else int(text)
                return len(data)
            if path != f"/{DISK_FILE}":
                raise fuse.FuseOSError(errno.EACCES)
            budget.spend(len(data), "write")
            return os.pwrite(self.fd, data, offset)

        def truncate(self, path, length, fh=None):
            return 0  # the rate file is rewritten whole; the disk keeps its size

        def flush(self, path, fh):
            return 0

        def fsync(self, path, datasync, fh):
            # The loop device's flush reaches the emulated disk here; the image file's
            # own bytes go on to the host disk as any file's do.
            return 0

    return OneDiskFS()


def serve(backing: str, mountpoint: str, bytes_per_s: int | None) -> None:
    """Run the filesystem in the foreground until it is unmounted."""
    import mfusepy as fuse

    fuse.FUSE(_operations(backing, BandwidthBudget(bytes_per_s)), mountpoint, foreground=True,
              direct_io=True, fsname="wattzip-onedisk")


def daemon(backing: str, mountpoint: str, bytes_per_s: int, log: int,
           tag: str) -> subprocess.Popen:
    """Start the daemon of an emulated disk, its messages to the file `log`, its
    processes marked `tag`. In "/" and with -P, its paths made absolute first: `-m` puts
    the current folder first on the import path, and a `wattzip/` planted in the folder a
    root job was started from would run as root."""
    argv = [sys.executable, "-P", "-m", "wattzip.machine.onedisk", os.path.abspath(backing),
            os.path.abspath(mountpoint), str(bytes_per_s)]
    return subprocess.Popen(argv, env={**os.environ, OWNER_ENV: tag}, cwd="/", stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


class OneDisk:
    """The emulated disk of one medium: start() mounts it and returns the file a loop
    device should hold; the changes it makes are journaled, their ids in `changes`."""

    def __init__(self, backing: str, bytes_per_s: int):
        self.backing = os.path.abspath(backing)
        self.mountpoint = self.backing + ".onedisk"
        self.bytes_per_s = bytes_per_s
        self.changes: list[str] = []
        self._proc: subprocess.Popen | None = None

    @property
    def file(self) -> str:
        return os.path.join(self.mountpoint, DISK_FILE)

    @property
    def log_path(self) -> str:
        return self.backing + ".onedisk.log"

    def start(self) -> str:
        check_available()
        self._make_mountpoint()
        log = self._open_log()
        try:
            tag = f"onedisk-{uuid.uuid4().hex[:12]}"
            # Undone in reverse: the mount first, then the daemon (if it survived).
            self.changes.append(machine.note("processes", tag))
            self.changes.append(machine.note("mount", self.mountpoint,
                                             source="wattzip-onedisk"))
            # Its messages go to a file beside the image: a pipe nobody reads would fill
            # and stall the disk in the middle of a run.
            self._proc = daemon(self.backing, self.mountpoint, self.bytes_per_s, log, tag)
            deadline = time.monotonic() + START_TIMEOUT_S
            while not os.path.exists(self.file):
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    self._proc.kill()
                    self._proc.wait()
                    said = os.pread(log, 4096, max(0, os.fstat(log).st_size - 4096))
                    why = said.decode(errors="replace").strip()[-400:]
                    raise FactorError(f"the emulated disk (FUSE) for {self.backing} did not "
                                      f"start at {self.mountpoint}: {why or 'timed out'}")
                time.sleep(0.02)
        finally:
            os.close(log)
        return self.file

    def _make_mountpoint(self) -> None:
        """The FUSE mount point, journaled before it is made (removed at the end, when
        empty). One already there (an earlier version left them) is used only if it is an
        empty folder of root's: a mount would hide what it holds, and follow a link."""
        change = machine.note("dir", self.mountpoint)
        try:
            os.mkdir(self.mountpoint, 0o700)
        except FileExistsError:
            try:
                st = os.lstat(self.mountpoint)
                why = ("is not a folder" if not stat.S_ISDIR(st.st_mode) else
                       "is not root's" if st.st_uid != 0 else
                       "is not empty" if os.listdir(self.mountpoint) else
                       "is a mount point already" if os.path.ismount(self.mountpoint)
                       else None)
            except OSError as exc:
                why = f"cannot be read ({exc.strerror})"
            if why:
                machine.undone(change)  # not made by us: nothing to remove
                raise FactorError(f"the emulated disk's mount point {self.mountpoint} {why}; "
                                  "mounting there would hide or follow it. Remove it, or "
                                  "choose another path for the medium") from None
        self.changes.append(change)

    def _open_log(self) -> int:
        """The daemon's log, journaled before it is made, and made new: a file or link an
        earlier run (or anyone else) left at its name is unlinked, never written through."""
        change = machine.note("file", self.log_path)
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.log_path)
            fd = os.open(self.log_path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o600)
        except OSError as exc:
            machine.undone(change)
            raise FactorError(f"the emulated disk's log {self.log_path} cannot be made "
                              f"({exc.strerror}); remove what is there") from None
        self.changes.append(change)
        return fd

    def applied_bytes_per_s(self) -> int | None:
        """The budget the daemon holds, read back from it."""
        text = Path(self.mountpoint, "rate").read_text().strip()
        return None if text == "unlimited" else int(text)

    def moved_bytes(self) -> tuple[int, int]:
        """(bytes read, bytes written) through the disk so far."""
        read, written = Path(self.mountpoint, "moved").read_text().split()
        return int(read), int(written)

    @contextlib.contextmanager
    def unlimited(self):
        """No budget for a while (staging the inputs, outside every measured region)."""
        Path(self.mountpoint, "rate").write_text("unlimited\n")
        try:
            yield
        finally:
            Path(self.mountpoint, "rate").write_text(f"{self.bytes_per_s}\n")

    def wait_stopped(self) -> None:
        """After the mount is undone the daemon exits by itself; reap it."""
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(timeout=10)
            if self._proc.poll() is None:
                self._proc.kill()
                self._proc.wait()
            self._proc = None


# The daemon must outrun the budget by this much, or the budget is not what sets the time.
CEILING_MARGIN = 1.2
# A shared host's disk has slow moments (another guest's burst): a budget is refused only
# when this many test copies, this far apart, all fall short of it.
CEILING_TRIES = 3
CEILING_PAUSE_S = 10.0
# A test copy still running after this long is stuck (a FUSE daemon that stopped
# answering): the lock is held meanwhile, so the wait has a bound.
CEILING_TIMEOUT_S = 600.0


def check_reachable(directory: str, bytes_per_s: int, size: int = 64 << 20,
                    backing: str | None = None) -> dict:
    """Refuse a budget this machine's emulated disk cannot deliver: a FactorError unless
    one of CEILING_TRIES test copies (copy_rates) beats the budget by CEILING_MARGIN both
    reading and writing. A budget above the host disk's own speed fails every try; a
    slow moment of a shared host fails one. Returns the passing try's rates (B/s) and
    every try's, for the pre-flight report."""
    tries = []
    for attempt in range(CEILING_TRIES):
        if attempt:
            time.sleep(CEILING_PAUSE_S)
        read, write = copy_rates(directory, size, backing)
        tries.append({"read_bytes_per_s": read, "write_bytes_per_s": write})
        if min(read, write) >= CEILING_MARGIN * bytes_per_s:
            return {**tries[-1], "tries": tries}
    best = max(min(t.values()) for t in tries)
    seen = ", ".join(f"{t['read_bytes_per_s'] / 1e6:.0f}/{t['write_bytes_per_s'] / 1e6:.0f}"
                     for t in tries)
    raise FactorError(
        f"bandwidth {bytes_per_s / 1e6:g} MB/s: the emulated disk reaches only "
        f"{seen} MB/s reading/writing here in {len(tries)} tries, cold (its FUSE "
        f"daemon's and the host disk's limit), so it cannot emulate that disk; choose a "
        f"bandwidth below {best / CEILING_MARGIN / 1e6:.0f} MB/s, or give the medium "
        "inputs: separate (the kernel's throttle, reads and writes apart)")


def copy_rates(directory: str, size: int, backing: str | None) -> tuple[float, float]:
    """(read, write) B/s of one test copy of `size` bytes to a scratch file in `directory`
    (on the emulated disk, its budget lifted) and back, through the loop device and the
    daemon. Cold down to the host disk: the write counts until the `backing` image's
    bytes are on the host disk, and the read starts with the image out of the host's
    page cache."""
    import shutil

    from wattzip.machine.system import evict

    scratch = Path(directory, ".wattzip-ceiling")
    size = max(1 << 20, min(size, shutil.disk_usage(directory).free // 2) >> 20 << 20)
    argv = ["dd", "if=/dev/zero", f"of={scratch}", "bs=1M", f"count={size >> 20}",
            "conv=fsync", "status=none"]
    try:
        started = time.monotonic()
        subprocess.run(argv, check=True, timeout=CEILING_TIMEOUT_S)
        if backing:  # the daemon's writes sit in the host's cache until they reach its disk
            fd = os.open(backing, os.O_RDONLY | os.O_CLOEXEC)
            try:
                os.fdatasync(fd)
            finally:
                os.close(fd)
        write = size / (time.monotonic() - started)
        evict([str(scratch), *([backing] if backing else [])])
        started = time.monotonic()
        subprocess.run(["dd", f"if={scratch}", "of=/dev/null", "bs=128K", "status=none"],
                       check=True, timeout=CEILING_TIMEOUT_S)
        read = size / (time.monotonic() - started)
    except subprocess.CalledProcessError as exc:
        raise FactorError(f"the emulated disk at {directory}: a test copy failed ({exc})") \
            from None
    except subprocess.TimeoutExpired:
        raise FactorError(f"the emulated disk at {directory}: a test copy of {size >> 20} "
                          f"MiB was still running after {CEILING_TIMEOUT_S} s (a stuck "
                          "FUSE daemon, a failing disk?), and was killed") from None
    finally:
        scratch.unlink(missing_ok=True)
    return read, write


def check_available() -> None:
    """FUSE and its library are here, or a FactorError that says what to install."""
    if not os.path.exists("/dev/fuse"):
        raise FactorError("an emulated disk with one budget for reads and writes needs FUSE "
                          "(/dev/fuse is missing: modprobe fuse), or set the medium's "
                          "inputs: separate")
    try:
        import mfusepy  # noqa: F401
    except (ImportError, OSError) as exc:
        raise FactorError(f"an emulated disk with one budget needs libfuse3 and mfusepy "
                          f"({exc}); run setup.sh (Debian package libfuse3-3)") from None


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m wattzip.machine.onedisk", description=__doc__)
    p.add_argument("backing", help="the image file")
    p.add_argument("mountpoint")
    p.add_argument("bytes_per_s", type=int)
    a = p.parse_args(argv)
    serve(a.backing, a.mountpoint, a.bytes_per_s)


if __name__ == "__main__":
    main()
