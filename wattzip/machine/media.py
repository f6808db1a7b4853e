"""The storage a run writes to: a directory, or a filesystem of its own.

SYSTOR '09 wrote to a dedicated ext2 partition and unmounted it after each run,
which both flushes every byte to the device and empties that filesystem's
page cache. A medium that is its own filesystem (a block device, a loop-mounted
image file the job creates, or tmpfs) offers that flush; a plain directory is
flushed by fsync of the file and its directory.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import stat
import subprocess
from dataclasses import dataclass, field, fields
from pathlib import Path

from wattzip import machine
from wattzip.errors import ConfigError, WattzipError
from wattzip.machine import scratch
from wattzip.machine.onedisk import OneDisk, check_reachable
from wattzip.machine.system import evict, filesystem_of, scheduler_disk
from wattzip.machine.trust import trusted_folder
from wattzip.machine.undoers import IMAGE_MARK, is_wattzip_image
from wattzip.units import parse_size

KINDS = ("directory", "image", "block", "tmpfs")
FILESYSTEMS = ("ext2", "ext3", "ext4", "xfs", "btrfs")
FLUSHES = ("fsync", "unmount")
# Where a job's input lives: on the medium it writes to (SYSTOR '09's layout: one disk
# read and written, one bandwidth), or on a disk of its own (the input directory).
INPUT_LAYOUTS = ("on-medium", "separate")
_MKFS_QUIET = {"ext2": ["-F", "-q"], "ext3": ["-F", "-q"], "ext4": ["-F", "-q"],
               "xfs": ["-f", "-q"], "btrfs": ["-f", "-q"]}


# A medium's name becomes part of paths and setting names: never a space, a slash or a $.
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


class MediumError(WattzipError):
    """A medium cannot be created, mounted or unmounted."""


@dataclass
class Medium:
    """Where the runs write: `path` is the directory (a mount point unless a directory).

    kind image: `image` (default path + ".img") of `size` bytes is formatted
    with `fs` when the job starts and loop-mounted at `path`; kind block:
    `device` is mounted at `path` (formatted only when `format` is true);
    kind tmpfs: a RAM filesystem of `size` at `path`.
    """

    name: str = "default"
    kind: str = "directory"
    path: str = "."
    image: str | None = None
    device: str | None = None
    size: str | None = None
    fs: str | None = None
    mkfs_options: str = ""
    mount_options: str = ""
    flush: str = "fsync"
    format: bool = False
    # A fresh filesystem on the image for every job; False keeps what it holds (inputs).
    fresh: bool = True
    inputs: str = "separate"
    _attached: bool = field(default=False, repr=False, compare=False)
    _loop: str | None = field(default=None, repr=False, compare=False)
    _changes: list[str] = field(default_factory=list, repr=False, compare=False)
    # An emulated disk's one budget for reads and writes (wattzip.machine.onedisk), set by the job.
    _budget_bytes_per_s: int | None = field(default=None, repr=False, compare=False)
    _disk: OneDisk | None = field(default=None, repr=False, compare=False)
    _given: tuple[str, str] = field(default=("", ""), repr=False, compare=False)  # path, image

    def __post_init__(self) -> None:
        if not NAME_PATTERN.fullmatch(str(self.name)):
            raise ConfigError(f"medium name {self.name!r}: use letters, digits, '.', '-' and "
                              "'_' only (the name becomes part of paths and setting names)")
        # Resolved once, here: the kernel names a loop's backing file and a mount point by
        # their resolved paths, and a link swapped later is never followed.
        given = os.path.join(os.getcwd(), str(self.path))
        self._given = (given, os.path.join(os.getcwd(), self.image or given.rstrip("/") + ".img"))
        self.path = os.path.realpath(self.path)
        if self.kind not in KINDS:
            raise ConfigError(f"medium {self.name}: kind {self.kind!r}; valid: {', '.join(KINDS)}")
        if self.flush not in FLUSHES:
            raise ConfigError(f"medium {self.name}: flush {self.flush!r}; valid: "
                              f"{', '.join(FLUSHES)}")
        if self.kind == "directory" and self.flush == "unmount":
            raise ConfigError(f"medium {self.name}: a plain directory cannot be unmounted; use "
                              "kind image (a loop-mounted file), block or tmpfs for flush unmount")
        if self.kind == "image":
            image = os.path.abspath(self.image or self.path.rstrip("/") + ".img")
            # The folder resolved, the name not: a link at the name is refused, not followed.
            self.image = os.path.join(os.path.realpath(os.path.dirname(image)),
                                      os.path.basename(image))
            if not self.size:
                raise ConfigError(f"medium {self.name}: an image needs a size (e.g. 2GiB)")
        if self.kind in ("image", "block") and self.fs is None and (self.kind == "image"
                                                                    or self.format):
            self.fs = "ext2"
        if self.fs is not None and self.fs not in FILESYSTEMS:
            raise ConfigError(f"medium {self.name}: fs {self.fs!r}; valid: "
                              f"{', '.join(FILESYSTEMS)}")
        if self.kind == "block" and not self.device:
            raise ConfigError(f"medium {self.name}: kind block needs device (e.g. /dev/sdb1)")
        if self.kind == "tmpfs" and not self.size:
            raise ConfigError(f"medium {self.name}: tmpfs needs a size (e.g. 2GiB)")
        if self.inputs not in INPUT_LAYOUTS:
            raise ConfigError(f"medium {self.name}: inputs {self.inputs!r}; valid: "
                              f"{', '.join(INPUT_LAYOUTS)}")
        if self.inputs == "on-medium" and self.kind != "image":
            raise ConfigError(f"medium {self.name}: inputs on-medium needs kind image (the "
                              "emulated disk whose one bandwidth the input and the output "
                              "share); use inputs: separate for a directory, device or tmpfs")

    @classmethod
    def from_spec(cls, name: str, spec: str | dict) -> Medium:
        """A config value: a directory string, or a mapping of the fields above."""
        if isinstance(spec, str):
            return cls(name=name, path=spec)
        unknown = {k for k in spec if k.startswith("_") or k not in cls.__dataclass_fields__}
        unknown.discard("name")
        if unknown:
            raise ConfigError(f"medium {name}: unknown keys {sorted(unknown)}")
        return cls(name=name, **{k: v for k, v in spec.items() if k != "name"})

    def to_spec(self) -> dict:
        spec = {f.name: getattr(self, f.name) for f in fields(self) if not f.name.startswith("_")}
        if spec["inputs"] == "separate":  # as before the layout was a field: same job keys
            del spec["inputs"]
        return spec

    @property
    def own_filesystem(self) -> bool:
        return self.kind != "directory"

    def scheduler_disk(self) -> str | None:
        """The block device whose I/O scheduler orders this medium's I/O: on an emulated
        disk (attached), the loop device's own queue, the last before the budget; for
        another image, the disk under its file (or its folder, before it is made); for
        a block device, its disk, mounted or not; no disk for tmpfs; else the disk
        under the path. The idle calibration asks before attaching, the jobs after
        (an emulated disk's idle calibration sets no scheduler: wattzip.measure.idle)."""
        if self._disk is not None and self._loop:
            return os.path.basename(self._loop)
        if self.kind == "tmpfs":
            return None
        if self.kind == "block":
            return device_disk(self.device)
        if self.kind == "image":
            image = self.image if os.path.exists(self.image) else os.path.dirname(self.image)
            return scheduler_disk(image)
        return scheduler_disk(self.path)

    def share_budget(self, bytes_per_s: int | None) -> None:
        """Reads and writes of this image through one budget of `bytes_per_s` (None: no
        emulated disk), from the next attach() on."""
        if bytes_per_s is not None and self.kind != "image":
            raise ConfigError(f"medium {self.name}: one budget for reads and writes is "
                              "emulated on kind image only")
        self._budget_bytes_per_s = bytes_per_s

    @property
    def shares_budget(self) -> bool:
        return self._budget_bytes_per_s is not None

    def budget_applied_bytes_per_s(self) -> int | None:
        """The emulated disk's budget, read back from its daemon (None without one)."""
        return self._disk.applied_bytes_per_s() if self._disk else None

    def disk_moved_bytes(self) -> int | None:
        """Bytes read and written through the emulated disk so far (None without one)."""
        return sum(self._disk.moved_bytes()) if self._disk else None

    def check_budget_reachable(self) -> dict | None:
        """The emulated disk can deliver its budget here (wattzip.machine.onedisk.check_reachable),
        measured with the budget lifted; None without an emulated disk."""
        if self._disk is None:
            return None
        with self.unthrottled():
            return check_reachable(self.path, self._budget_bytes_per_s, backing=self.image)

    def helper_pids(self) -> list[int]:
        """Processes doing this medium's work during a run (the emulated disk's daemon):
        their CPU time is the run's own, not another process's load."""
        proc = self._disk._proc if self._disk is not None else None
        return [proc.pid] if proc is not None and proc.poll() is None else []

    def unthrottled(self):
        """The emulated disk without its budget for a while (staging inputs)."""
        return self._disk.unlimited() if self._disk else contextlib.nullcontext()

    @property
    def source(self) -> str:
        return {"image": self._loop or self.image, "block": self.device,
                "tmpfs": "tmpfs"}.get(self.kind, "")

    def is_mounted(self) -> bool:
        return mount_entry(self.path) is not None

    def attach(self) -> None:
        """Create and mount the medium (a fresh filesystem on an image), or make its folder;
        once per job (a second call before detach() changes nothing). Every loop device and
        mount is journaled first (wattzip.machine); what a killed job left is undone by the
        next command before this runs, so one found here is someone else's, never taken."""
        if self._attached:
            return
        # Folders root's alone as configured (trust): no link redirects mkfs, losetup, mount.
        trusted_folder(self._given[0], f"medium {self.name}'s path", resolved=self.path)
        if self.kind == "image":
            trusted_folder(os.path.dirname(self._given[1]), f"medium {self.name}'s image "
                           "folder", resolved=os.path.dirname(self.image))
        if not self.own_filesystem:
            self._attached = True
            return
        if self.is_mounted():
            raise MediumError(f"medium {self.name}: something is already mounted at "
                              f"{self.path} ({mount_entry(self.path)[0]}), and not by a "
                              "killed wattzip job; unmount it or choose another path")
        if os.listdir(self.path):
            raise MediumError(f"medium {self.name}: the mount point {self.path} is not empty; "
                              "mounting there would hide its files. Empty it or choose "
                              "another path")
        if self.kind == "tmpfs":
            check_memory(self.name, parse_size(self.size))
        if self.kind == "image":
            held = self._loops()
            if held:
                raise MediumError(f"medium {self.name}: the image {self.image} is held by "
                                  f"{', '.join(held)}, and not by a killed wattzip job; "
                                  "detach it (losetup -d) or choose another image")
            new = not os.path.lexists(self.image)
            if not new:
                check_ours(self.name, self.image)
            if self.fresh or new:
                make_image(self.image, parse_size(self.size))
                self._mkfs(self.image)
            evict([self.image])  # mkfs wrote through the host's cache; the loop will not
            backing = self.image
            if self._budget_bytes_per_s is not None:
                self._disk = OneDisk(self.image, self._budget_bytes_per_s)
                try:
                    backing = self._disk.start()
                finally:
                    self._changes += self._disk.changes
            self._changes.append(machine.note("loop", backing))
            self._loop = _output(["losetup", "--find", "--show", "--direct-io=on", backing],
                                 f"medium {self.name}: attach {backing} to a loop device")
        elif self.kind == "block" and self.format:
            self._mkfs(self.device)
        self._attached = True
        if self.kind != "tmpfs":  # a tmpfs is mounted mode=700
            self._make_root_private()
        self._changes.append(machine.note("mount", self.path, source=self.source))
        self.mount()
        trusted_folder(self.path, f"medium {self.name}'s mounted root", create=False)

    def _make_root_private(self) -> None:
        """The filesystem's root made 0700 before it is reachable: mounted first in a
        scratch folder only root may enter, chmod-ed there (it stays in the filesystem),
        and unmounted. At its path, then, no other user's shell can enter it and keep
        every later unmount busy. A block device not formatted by wattzip keeps 0700."""
        with scratch.folder("wattzip-premount") as private:
            change = machine.note("mount", private, source=self.source)
            try:
                self.mount(at=private)
                os.chmod(private, 0o700)
            finally:
                machine.undo([e for e in machine.pending() if e["id"] == change])

    def _mkfs(self, target: str) -> None:
        argv = [f"mkfs.{self.fs}", *_MKFS_QUIET[self.fs], *shlex.split(self.mkfs_options), target]
        _output(argv, f"medium {self.name}: format {target} as {self.fs}")

    def mount(self, at: str | None = None) -> None:
        """Mount the medium at its path (or `at`, a private folder)."""
        if not self.own_filesystem or (at is None and self.is_mounted()):
            return
        # No set-user-ID file or device node on the medium works (a later `suid` wins).
        options = ["nosuid", "nodev", *(o for o in self.mount_options.split(",") if o)]
        if self.kind == "tmpfs":  # its root root's alone, not open to all (1777)
            options[:0] = [f"size={parse_size(self.size)}", "mode=700"]
        fstype = "tmpfs" if self.kind == "tmpfs" else self.fs
        argv = ["mount", *(["-t", fstype] if fstype else []), "-o", ",".join(options),
                self.source, at or self.path]
        _output(argv, f"medium {self.name}: mount {self.source} at {at or self.path}")

    def unmount(self) -> None:
        """Unmount: every dirty byte reaches the device, and the filesystem's cache is emptied."""
        if self.own_filesystem and self.is_mounted():
            _output(["umount", self.path], f"medium {self.name}: unmount {self.path}")

    def cycle(self) -> None:
        """Unmount and mount again: a cold cache for this filesystem only."""
        self.unmount()
        self.mount()

    def detach(self) -> None:
        """Unmount after the job and free its loop device (the image file stays); a
        failure is an error naming what stays mounted or attached."""
        self._attached = False
        changes, self._changes = self._changes, []
        try:
            machine.undo([e for e in machine.pending() if e["id"] in changes])
        finally:
            if self._disk is not None:
                self._disk.wait_stopped()
            self._disk = None
            self._loop = None

    def _loops(self) -> list[str]:
        """The loop devices backed by the image."""
        if not os.path.exists(self.image):
            return []
        return _output(["losetup", "--associated", self.image, "--noheadings", "--output",
                        "NAME"], f"medium {self.name}: list loop devices").split()

    def describe(self) -> dict:
        """What the runs' provenance records of the medium while it is mounted."""
        entry = mount_entry(self.path) if self.own_filesystem else None
        info = {"medium_kind": self.kind, "flush": self.flush, "input_layout": self.inputs}
        if entry:
            info.update(target_device=entry[0], target_fs=entry[2], mount_options=entry[3])
        else:
            fs = filesystem_of(self.path)
            info.update(target_device=fs["source"], target_fs=fs["fstype"],
                        mount_options=fs.get("options"))
        if self.kind == "image":
            info["image"] = self.image
            if self._loop:
                dio = Path(f"/sys/block/{os.path.basename(self._loop)}/loop/dio")
                info["loop_direct_io"] = dio.exists() and dio.read_text().strip() == "1"
        return info


def make_image(image: str, size: int) -> None:
    """A sparse image of `size` bytes at `image`, marked as wattzip's; a link planted at
    the name is refused (O_NOFOLLOW), never followed."""
    try:
        fd = os.open(image, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise MediumError(f"the image {image} cannot be created ({exc.strerror}); a "
                          "symbolic link there is never followed") from None
    try:
        os.ftruncate(fd, 0)
        os.ftruncate(fd, size)
        try:
            os.setxattr(fd, IMAGE_MARK, b"1")
        except OSError:  # no xattrs here (NFS): the mark goes beside it, root's own file
            Path(image + ".wattzip").write_text(f"{os.fstat(fd).st_ino}\n")
    finally:
        os.close(fd)


def check_ours(name: str, image: str) -> None:
    """An existing image is wattzip's (marked when it was made), or a MediumError: a file
    of someone else's at that path is never truncated or formatted."""
    if not is_wattzip_image(image):
        raise MediumError(f"medium {name}: {image} exists and is not an image wattzip made; "
                          "it is never overwritten. Move it away or choose another image")


def device_disk(device: str) -> str | None:
    """The whole disk of a block device node (sdb for /dev/sdb1), as in /sys/block."""
    st = os.stat(device)
    if not stat.S_ISBLK(st.st_mode):
        raise ConfigError(f"{device} is not a block device")
    real = Path(f"/sys/dev/block/{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}").resolve()
    return real.parent.name if (real / "partition").exists() else real.name


def check_memory(name: str, size: int) -> None:
    """A tmpfs of `size` fits in the memory available now, or a MediumError: a bigger one
    would swap, or invoke the OOM killer, in the middle of the runs."""
    with open("/proc/meminfo") as f:
        info = {k: int(v.split()[0]) * 1024 for k, v in (line.split(":", 1) for line in f)}
    available = info.get("MemAvailable", info["MemFree"])
    if size > available:
        raise MediumError(f"medium {name}: a tmpfs of {size / 2**20:.0f} MiB exceeds the "
                          f"memory available ({available / 2**20:.0f} MiB); choose a smaller "
                          "size or another kind of medium")


def _mounts() -> list[tuple[str, str, str, str]]:
    """(source, mount point, type, options) of every mount, in mount order."""
    out = []
    with contextlib.suppress(OSError), open("/proc/self/mounts") as f:
        for line in f:
            source, mount, fstype, options = line.split()[:4]
            out.append((source, mount.replace("\\040", " "), fstype, options))
    return out


def mount_entry(path: str) -> tuple[str, str, str, str] | None:
    """(source, mount point, type, options) of the filesystem mounted exactly at path."""
    path = os.path.realpath(path)
    found = [m for m in _mounts() if m[1] == path]
    return found[-1] if found else None  # the last mount on top wins


COMMAND_TIMEOUT_S = 300  # a mkfs, mount or unmount that takes longer is stuck


def _output(argv: list[str], what: str) -> str:
    """A medium's command's output; a MediumError (never another exception) when it is
    missing, fails, or is still running after COMMAND_TIMEOUT_S."""
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, check=False,
                              timeout=COMMAND_TIMEOUT_S, process_group=0)
    except FileNotFoundError:
        raise MediumError(f"{what}: {argv[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise MediumError(f"{what}: {' '.join(argv)} was still running after "
                          f"{COMMAND_TIMEOUT_S} s, and was killed; check the device "
                          "(a stuck disk, a busy mount)") from None
    if proc.returncode != 0:
        raise MediumError(f"{what}: {' '.join(argv)} failed ({proc.returncode}): "
                          f"{(proc.stderr or proc.stdout).strip()[:400]}")
    return proc.stdout.strip()
