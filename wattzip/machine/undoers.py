"""How each kind of journaled machine change is undone (wattzip.machine keeps the journal).

Every undoer puts one change back and reads it back, or raises MachineError saying
what stays changed; a change whose target is already gone is undone.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from wattzip.errors import MachineError
from wattzip.machine import factors

OWNER_ENV = "WATTZIP_OWNER"  # marks every process a wattzip command starts
# A stand-in for /sys that the tests build (this VM has no cpufreq); root's own setting.
FAKE_SYSFS_ENV = "WATTZIP_FAKE_SYSFS"
# A CPU's hotplug switch, below /sys, that the emulated machine writes
# (wattzip.machine.emulated: the CPUs beyond machine.cpus offline).
CPU_ONLINE_FILES = re.compile(r"^devices/system/cpu/cpu[0-9]+/online$")


def _run(argv: list[str]) -> subprocess.CompletedProcess:
    """An undo's command (umount, losetup), in a process group of its own: a second
    Ctrl-C at the terminal, which the undo waits out, never reaches it."""
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120,
                          process_group=0)


def _mounted(path: str) -> bool:
    real = os.path.realpath(path)
    with open("/proc/self/mounts") as f:
        return any(line.split()[1].replace("\\040", " ") == real for line in f)


def _below(path: str, root: str) -> str | None:
    """`path` relative to `root`, both resolved, or None if it lies outside."""
    real, root = os.path.realpath(path), os.path.realpath(root)
    return os.path.relpath(real, root) if real.startswith(root.rstrip("/") + "/") else None


def _refuse(entry: dict, why: str) -> None:
    raise MachineError(f"refused: a {entry['kind']} change may touch only {why}, and "
                       f"{entry['target']} is not one")


def _roots(real: str) -> list[str]:
    """Where an undo may write: `real` (/sys, or a part of it), and the tests' stand-in."""
    return [real, *filter(None, [os.environ.get(FAKE_SYSFS_ENV)])]


def _sysfs_file(entry: dict) -> Path:
    """The target, if it is a file a machine factor writes (wattzip.machine.factors'
    table: a disk's scheduler, a CPU's governor) or the emulated machine's hotplug (a
    CPU's online switch), under /sys or the tests' own."""
    for root in _roots("/sys"):
        rel = _below(entry["target"], root)
        if rel and (factors.written_by_a_factor(rel) or CPU_ONLINE_FILES.search(rel)):
            return Path(root, rel)
    _refuse(entry, "a file under /sys that a machine factor or the emulated machine "
            "writes")
    raise AssertionError  # unreachable


def _undo_sysfs(entry: dict) -> None:
    path = _sysfs_file(entry)
    if not path.exists():  # its CPU went offline or its disk away, the setting with it
        return
    path.write_text(entry["original"])
    now = path.read_text()
    bracketed = re.search(r"\[(\S+)\]", now)
    value = bracketed.group(1) if bracketed else now.strip()
    if value != entry["original"]:
        raise MachineError(f"{path} reads {value!r} after writing {entry['original']!r}")


def _mount_source(path: str) -> str | None:
    real, found = os.path.realpath(path), None
    with open("/proc/self/mounts") as f:
        for line in f:
            source, mount = line.split()[:2]
            if mount.replace("\\040", " ") == real:
                found = source  # the last mount on top wins
    return found


def _undo_mount(entry: dict) -> None:
    made = (entry.get("extra") or {}).get("source")
    source = _mount_source(entry["target"])
    if made and source and os.path.realpath(source) != os.path.realpath(made):
        _refuse(entry, f"the mount wattzip made (of {made}; mounted there now: {source})")
    while _mounted(entry["target"]):
        proc = _run(["umount", entry["target"]])
        if proc.returncode != 0:
            raise MachineError(f"umount {entry['target']}: {proc.stderr.strip()[:200]}")


def _loops_backed_by(image: str) -> list[str]:
    """Loop devices whose backing file is `image`, read from sysfs: no stat of the file,
    which fails when it lives on a FUSE filesystem whose daemon was killed."""
    found = []
    for backing in Path("/sys/block").glob("loop*/loop/backing_file"):
        with contextlib.suppress(OSError):
            name = backing.read_text().strip().removesuffix(" (deleted)")
            if name == image or name == os.path.realpath(image):
                found.append(f"/dev/{backing.parent.parent.name}")
    return found


# Set by root on every image wattzip makes; a user cannot set or forge a trusted.* name.
IMAGE_MARK = "trusted.wattzip"


def is_wattzip_image(image: str) -> bool:
    """An image wattzip made: marked so when it was made (or, where the filesystem keeps
    no such marks, named in a root-owned file beside it)."""
    st = os.lstat(image)
    if not stat.S_ISREG(st.st_mode):
        return False
    with contextlib.suppress(OSError):
        if os.getxattr(image, IMAGE_MARK, follow_symlinks=False) == b"1":
            return True
    side = Path(image + ".wattzip")
    with contextlib.suppress(OSError):
        return os.lstat(side).st_uid == 0 and side.read_text().strip() == str(st.st_ino)
    return False


def _loop_is_ours(target: str) -> bool:
    """The emulated disk's file (in a wattzip-onedisk mount, read without a stat that a
    dead daemon would fail), an image wattzip made, or a file already gone."""
    folder = os.path.dirname(target)
    if os.path.basename(target) == "disk.img" and folder.endswith(".onedisk"):
        return _mount_source(folder) in (None, "wattzip-onedisk")
    try:
        return is_wattzip_image(target)
    except FileNotFoundError:
        return True  # deleted: only loops still naming it are detached


def _undo_loop(entry: dict) -> None:
    if not _loop_is_ours(entry["target"]):
        _refuse(entry, "a loop device of an image wattzip made")
    for loop in _loops_backed_by(entry["target"]):
        with open("/proc/self/mounts") as f:
            mounts = [line.split()[1] for line in f if line.split()[0] == loop]
        for mount in mounts:
            _undo_mount({"target": mount})
        proc = _run(["losetup", "--detach", loop])
        if proc.returncode != 0:
            raise MachineError(f"losetup --detach {loop}: {proc.stderr.strip()[:200]}")


def _undo_cgroup(entry: dict) -> None:
    path = Path(entry["target"])
    if not path.exists():
        return
    home = entry["extra"]["return_to"]
    if not (_below(str(path), "/sys/fs/cgroup") and path.name.startswith("wattzip-")
            and (_below(home, "/sys/fs/cgroup") or os.path.realpath(home) == "/sys/fs/cgroup")):
        _refuse(entry, "a wattzip-* cgroup under /sys/fs/cgroup")
    back = Path(home) / "cgroup.procs"
    for pid in (path / "cgroup.procs").read_text().split():
        with contextlib.suppress(ProcessLookupError):  # a process that exits meanwhile
            back.write_text(f"{pid}\n")
    path.rmdir()


def _undo_controllers(entry: dict) -> None:
    """cgroup v2: the controllers a job enabled for a cgroup's children, disabled again
    (those still enabled: another may have disabled one meanwhile). The kernel refuses
    while a child still uses one (EBUSY): it stays enabled, and the error says so."""
    path = Path(entry["target"])
    if not (path.name == "cgroup.subtree_control"
            and any(_below(str(path), root) for root in _roots("/sys/fs/cgroup"))):
        _refuse(entry, "a cgroup.subtree_control under /sys/fs/cgroup")
    if not path.exists():
        return
    enabled = [c for c in entry["extra"]["enabled"] if c in path.read_text().split()]
    if enabled:
        path.write_text(" ".join(f"-{c}" for c in enabled) + "\n")


def owned_processes(tag: str) -> list[int]:
    """Every process of root's (or this user's) that carries this owner's mark in its
    environment: another user's process that copies the mark is not the command's, and
    would otherwise keep its undo from ever finishing."""
    mark = f"{OWNER_ENV}={tag}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError, ValueError):
                if (_uids(entry) <= {0, os.geteuid()}
                        and mark in (entry / "environ").read_bytes().split(b"\0")):
                    found.append(int(entry.name))
    return found


def _uids(proc: Path) -> set[int]:
    """A process's real, effective, saved and filesystem uids, from its status: not the
    owner of /proc/PID, which is root's for a process its user made non-dumpable."""
    for line in (proc / "status").read_text().splitlines():
        if line.startswith("Uid:"):
            return {int(uid) for uid in line.split()[1:]}
    raise ValueError(f"{proc}/status has no Uid line")


def _undo_processes(entry: dict) -> None:
    """Every process carrying the mark killed; those it forks meanwhile too (SIGKILL is
    sent again to whatever still carries it), for at most 10 seconds."""
    deadline = time.monotonic() + 10
    while left := owned_processes(entry["target"]):
        if time.monotonic() > deadline:
            raise MachineError(f"processes of {entry['target']} survive SIGKILL: {left}")
        for pid in left:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def _undo_dir(entry: dict) -> None:
    target = entry["target"]
    if os.path.basename(target).endswith(".onedisk"):
        # An emulated disk's mount point (wattzip.machine.onedisk), once unmounted: only
        # an empty folder is removed (rmdir follows no link, and leaves one in place).
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(target)
        return
    if os.path.islink(target) or not os.path.basename(target).startswith("wattzip-"):
        _refuse(entry, "a wattzip-* folder wattzip made")
    if os.path.ismount(target):  # a medium mounted there still: never remove its files
        raise MachineError(f"{target} is still a mount point; unmount it, then run "
                           "`wattzip restore`")
    shutil.rmtree(entry["target"], ignore_errors=True)
    if os.path.exists(entry["target"]):
        raise MachineError(f"cannot remove {entry['target']}")


def _undo_file(entry: dict) -> None:
    """A file wattzip made: only an emulated disk's log (`<image>.onedisk.log`), whose
    name is removed (unlink follows no link and removes no folder)."""
    if not os.path.basename(entry["target"]).endswith(".onedisk.log"):
        _refuse(entry, "an emulated disk's log (*.onedisk.log)")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(entry["target"])


def _undo_serial(entry: dict) -> None:
    """A meter left logging to its port (a WattsUp in external mode) set back; a port that
    is gone was unplugged, and the meter with it."""
    if not os.path.exists(entry["target"]):
        return
    if not _below(entry["target"], "/dev"):
        _refuse(entry, "a serial port under /dev")
    import serial  # pyserial: present, since the meter was opened with it

    with serial.Serial(entry["target"], entry["extra"].get("baud", 115200), timeout=1) as port:
        port.write(entry["extra"]["command"].encode("ascii"))
        port.flush()


UNDO: dict[str, Callable[[dict], None]] = {
    "sysfs": _undo_sysfs, "mount": _undo_mount, "loop": _undo_loop, "cgroup": _undo_cgroup,
    "controllers": _undo_controllers,
    "processes": _undo_processes, "dir": _undo_dir, "file": _undo_file,
    "serial": _undo_serial,
}
