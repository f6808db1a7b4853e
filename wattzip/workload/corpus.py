"""Where the text and binary inputs come from: real files read in a fixed order.

Text is the Linux source tree (the paper's choice), then system directories; binary
is the kernel's modules, then shared libraries; user data is read as it is. Each
source says in the manifest what it gave (package and version, or file counts), and
the sources cycle when the size asks for more than they hold.
"""

from __future__ import annotations

import glob
import lzma
import os
import pwd
import re
import shutil
import socket
import stat
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path

from wattzip.errors import ConfigError
from wattzip.machine import trust

CHUNK = 1 << 20


# The opener: a small process that walks a source folder one name at a time, relative to
# the folder it holds open, never following a link (O_NOFOLLOW), and passes each regular
# file it opened to wattzip over a socket (SCM_RIGHTS). It runs as the user a source
# belongs to, so the kernel lets it open only what that user could read: no link or hard
# link they plant turns root's read against /etc/shadow. As root (a source that is root's
# all the way) it skips what another user owns and folders others can write. It imports
# nothing from wattzip (-I -S, from /): it runs as a user who may not read the checkout.
_OPENER = r"""
import os, socket, stat, sys
sock = socket.socket(fileno=int(sys.argv[1]))
top, as_root = int(sys.argv[2]), sys.argv[3] == "root"
DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC

def foreign(st):
    return as_root and (st.st_uid != 0 or stat.S_ISDIR(st.st_mode) and st.st_mode & 0o022
                        and not st.st_mode & stat.S_ISVTX)

def give(fd, rel):
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        return
    if foreign(st):
        sock.send(b"\0" + os.fsencode(rel))
    else:
        socket.send_fds(sock, [os.fsencode(rel)], [fd])

def walk(fd, rel):
    files, dirs = [], []
    for name in sorted(os.listdir(fd)):
        try:
            mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
        except OSError:
            continue
        (files if stat.S_ISREG(mode) else dirs if stat.S_ISDIR(mode) else []).append(name)
    for name in files:
        try:
            f = os.open(name, FILE, dir_fd=fd)
        except OSError:
            continue
        try:
            give(f, rel + name)
        finally:
            os.close(f)
    for name in dirs:
        try:
            d = os.open(name, DIR, dir_fd=fd)
        except OSError:
            continue
        try:
            if foreign(os.fstat(d)):
                sock.send(b"\0" + os.fsencode(rel + name + "/"))
            else:
                walk(d, rel + name + "/")
        finally:
            os.close(d)

try:
    if stat.S_ISDIR(os.fstat(top).st_mode):
        walk(os.open(".", DIR, dir_fd=top), "")
    else:  # the O_PATH descriptor's own file, opened with this user's rights
        f = os.open(f"/proc/self/fd/{top}", FILE & ~os.O_NOFOLLOW)
        give(f, os.path.basename(sys.argv[4]))
except BrokenPipeError:
    pass
except OSError as exc:
    sys.exit(f"{sys.argv[4]}: {exc.strerror} (read as uid {os.getuid()})")
"""

_WAY = os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC
_MAX_LINKS = 40


def _open_way(path: str) -> tuple[int, int]:
    """An O_PATH descriptor of `path`, walked from / one name at a time, and the uid to
    read it as: root when root owns every folder on the way and the source, else the one
    other user who owns some of them. A link on the way is followed only when root's; a
    folder on the way that group or others can write (unless sticky, like /tmp) is
    refused, since anyone could swap what follows; so are two other users on the way.
    FileNotFoundError and NotADirectoryError for a way that is not there."""
    way, hops = os.path.abspath(path), 0
    while True:
        parts = Path(way).parts[1:]
        fd = os.open("/", _WAY)
        owners: list[int] = []
        restart = None
        try:
            above = os.fstat(fd)
            for i, name in enumerate(parts):
                here = os.path.join("/", *parts[: i + 1])
                if above.st_mode & 0o022 and not above.st_mode & stat.S_ISVTX:
                    raise ConfigError(
                        f"source {path}: the folder {os.path.dirname(here)} is writable by "
                        f"others (mode {stat.S_IMODE(above.st_mode):o}), who could put a "
                        f"link at {here}; {_ADVICE}")
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    if st.st_uid != 0:
                        raise ConfigError(
                            f"source {path}: {here} is a symbolic link of "
                            f"{trust.owner(st.st_uid)}, never followed as root; name the "
                            f"folder it leads to, if that is what you mean")
                    hops += 1
                    if hops > _MAX_LINKS:
                        raise ConfigError(f"source {path}: too many symbolic links")
                    restart = os.path.normpath(os.path.join(
                        os.path.dirname(here), os.readlink(name, dir_fd=fd), *parts[i + 1:]))
                    break
                inner = os.open(name, _WAY, dir_fd=fd)
                os.close(fd)
                fd = inner
                above = os.fstat(fd)
                if stat.S_ISLNK(above.st_mode):
                    raise ConfigError(f"source {path}: {here} was replaced by a link while "
                                      "it was read; check who writes its folder")
                if above.st_uid != 0 and above.st_uid not in owners:
                    owners.append(above.st_uid)
            if restart is None and stat.S_ISDIR(above.st_mode) and above.st_mode & 0o022 \
                    and not above.st_mode & stat.S_ISVTX:
                raise ConfigError(f"source {path} is writable by others (mode "
                                  f"{stat.S_IMODE(above.st_mode):o}); {_ADVICE}")
        except BaseException:
            os.close(fd)
            raise
        if restart is None:
            break
        os.close(fd)
        way = restart
    if len(owners) > 1:
        os.close(fd)
        raise ConfigError(f"source {path}: folders on the way belong to "
                          f"{' and '.join(map(trust.owner, owners))}; {_ADVICE}")
    return fd, (owners[0] if owners else 0)


_ADVICE = ("wattzip reads a source as the user it belongs to, and only one user may "
           "have had a say in it: copy the data into a folder of its owner's (or root's) "
           "that no one else can write")


def _credentials(uid: int) -> dict:
    """Popen's user, group and supplementary groups of `uid` (nobody's groups if it has
    no account)."""
    try:
        account = pwd.getpwuid(uid)
    except KeyError:
        return {"user": uid, "group": 65534, "extra_groups": []}
    return {"user": uid, "group": account.pw_gid,
            "extra_groups": os.getgrouplist(account.pw_name, account.pw_gid)}


class Source:
    """A source folder (or file) read as its owner could read it: `files()` yields each
    regular file's name inside it and a descriptor open for reading (the caller closes it).
    `read_as` is the uid it is read as; `skipped` counts what a root source held of
    another user's; `private` is True once a file read was not readable by everyone."""

    def __init__(self, path: str):
        self.path = path
        self.top, self.read_as = _open_way(path)
        self.is_dir = stat.S_ISDIR(os.fstat(self.top).st_mode)
        self.skipped = 0
        self.private = self.read_as != 0

    def close(self) -> None:
        if self.top >= 0:
            os.close(self.top)
            self.top = -1

    def describe(self) -> dict:
        entry = {"source": self.path}
        if self.read_as:
            entry["read_as"] = trust.owner(self.read_as)
        return entry

    def files(self) -> Iterator[tuple[str, int]]:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        python = os.path.realpath(sys.executable)
        try:
            proc = subprocess.Popen(
                [python, "-I", "-S", "-c", _OPENER, str(theirs.fileno()), str(self.top),
                 "root" if self.read_as == 0 else "user", self.path],
                pass_fds=(theirs.fileno(), self.top), cwd="/", stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                # Only root changes user: any other already reads as no more than itself.
                **(_credentials(self.read_as) if self.read_as and os.geteuid() == 0
                   else {}))
        finally:
            theirs.close()
        finished = False
        try:
            while True:
                name, fds, _, _ = socket.recv_fds(ours, 4096, 1)
                if not name and not fds:
                    finished = True
                    break
                if not fds:
                    self.skipped += 1
                    continue
                if not os.fstat(fds[0]).st_mode & stat.S_IROTH:
                    self.private = True
                yield os.fsdecode(name), fds[0]
        finally:
            ours.close()
            if not finished:  # the reader stopped early: the opener need not finish
                proc.kill()
            error = proc.communicate()[1].decode(errors="replace").strip()
        if proc.returncode:
            raise ConfigError(f"source {self.path} could not be read: {error}")


def open_source(path: str) -> Source | None:
    """The Source at `path`, None when there is nothing there (a ConfigError when it
    cannot be trusted)."""
    try:
        return Source(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def looks_text(head: bytes) -> bool:
    return b"\0" not in head


def looks_elf(head: bytes) -> bool:
    return head.startswith(b"\x7fELF")


def file_chunks(path: Path | int, accept) -> Iterator[bytes]:
    """The bytes of a file (a name, or a descriptor it closes) whose head `accept`s."""
    try:
        with open(path, "rb") as f:
            head = f.read(8192)
            if not head or not accept(head):
                return
            yield head
            while chunk := f.read(CHUNK):
                yield chunk
    except OSError:
        return


def dpkg_version(package: str) -> str | None:
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                             capture_output=True, text=True, check=False)
    except OSError:
        return None
    return out.stdout.strip() or None


def _linux_source_tarball() -> Path | None:
    found = sorted(glob.glob("/usr/src/linux-source-*.tar.*"))
    return Path(found[-1]) if found else None


def _linux_source_chunks(describe: list) -> Iterator[bytes]:
    tarball = _linux_source_tarball()
    if tarball is None:
        describe.append({"source": "linux-source", "missing": "no /usr/src/linux-source-*.tar.*; "
                         "apt-get install linux-source"})
        return
    package = re.sub(r"\.tar\..*$", "", tarball.name)
    describe.append({"source": "linux-source", "tarball": str(tarball), "package": package,
                     "version": dpkg_version(package)})
    # GNU tar writes the members' contents in archive order (-O), and xz
    # decodes the tarball's blocks on every core: C end to end, separate processes.
    tar, xz = shutil.which("tar"), shutil.which("xz")
    if tar and xz and tarball.name.endswith(".xz"):
        proc = subprocess.Popen([tar, "-I", f"{xz} -T0", "-xOf", str(tarball)],
                                stdout=subprocess.PIPE)
        try:
            while chunk := proc.stdout.read(CHUNK):
                yield chunk
        finally:
            proc.kill()
            proc.wait()
        return
    with tarfile.open(tarball, mode="r|*") as tar_stream:
        for member in tar_stream:
            if not member.isfile():
                continue
            f = tar_stream.extractfile(member)
            if f is None:
                continue
            while chunk := f.read(CHUNK):
                yield chunk


def _kernel_module_chunks(describe: list) -> Iterator[bytes]:
    modules = sorted(glob.glob("/lib/modules/*/**/*.ko*", recursive=True))
    describe.append({"source": "kernel-modules", "files": len(modules)})
    for name in modules:
        path = Path(name)
        if name.endswith(".ko"):
            yield from file_chunks(path, lambda head: True)
        elif name.endswith(".ko.xz"):
            with lzma.open(path) as f:
                yield f.read()
        elif name.endswith(".ko.zst"):
            out = subprocess.run(["zstd", "-dc", name], capture_output=True, check=False)
            if out.returncode == 0:
                yield out.stdout


def _directory_chunks(root: str, accept, describe: list) -> Iterator[bytes]:
    source = open_source(root)
    if source is None or not source.is_dir:
        describe.append({"source": root, "missing": "not a directory"})
        if source:
            source.close()
        return
    entry = {**source.describe(), "files": 0}
    describe.append(entry)
    try:
        for _, fd in source.files():
            produced = False
            for chunk in file_chunks(fd, accept):
                produced = True
                yield chunk
            entry["files"] += produced
    finally:
        source.close()
        _note_source(entry, source)


def _note_source(entry: dict, source: Source) -> None:
    if source.skipped:
        entry["skipped_of_other_users"] = source.skipped
    if source.private:
        entry["private"] = True


def _whole_chunks(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """Join small pieces (one per small file) into CHUNK-sized ones."""
    held: list[bytes] = []
    n = 0
    for piece in pieces:
        held.append(piece)
        n += len(piece)
        if n >= CHUNK:
            yield b"".join(held)
            held, n = [], 0
    if held:
        yield b"".join(held)


def chunks(sources: list[str], accept, describe: list) -> Iterator[bytes]:
    """Concatenate the sources in order; cycle again when they run out."""
    return _whole_chunks(_corpus_pieces(sources, accept, describe))


REPLAY_MAX = 8 * CHUNK  # sources this small are read once and their bytes cycled


def _corpus_pieces(sources: list[str], accept, describe: list) -> Iterator[bytes]:
    cycle = 0
    held: list[bytes] | None = []  # the first cycle's pieces, while they are few
    while True:
        produced = 0
        for source in sources:
            if source == "linux-source":
                it = _linux_source_chunks(describe if cycle == 0 else [])
            elif source == "kernel-modules":
                it = _kernel_module_chunks(describe if cycle == 0 else [])
            else:
                it = _directory_chunks(source, accept, describe if cycle == 0 else [])
            for chunk in it:
                produced += len(chunk)
                if held is not None and produced <= REPLAY_MAX:
                    held.append(chunk)
                else:
                    held = None
                yield chunk
        if produced == 0:
            raise ConfigError(f"the sources {sources} gave no bytes; name directories that exist")
        cycle += 1
        describe.append({"cycled_again": cycle})
        if held is not None:  # each source read again costs a process: replay the bytes
            while True:
                yield from held
                cycle += 1
                describe.append({"cycled_again": cycle})


def user_chunks(path: str, describe: list) -> Iterator[bytes]:
    """A user's file, or every regular file in a folder of theirs, read as they could."""
    source = open_source(path)
    if source is None:
        raise ConfigError(f"user data {path!r} does not exist")
    entry = {**source.describe(), "kind": "user data", "files": 0}
    describe.append(entry)
    try:
        for _, fd in source.files():
            entry["files"] += 1
            yield from file_chunks(fd, lambda head: True)
    finally:
        source.close()
        _note_source(entry, source)


def user_data_size(path: str) -> int:
    """The bytes user_chunks would give now."""
    source = open_source(path)
    if source is None:
        raise ConfigError(f"user data {path!r} does not exist")
    total = 0
    try:
        for _, fd in source.files():
            total += os.fstat(fd).st_size
            os.close(fd)
    finally:
        source.close()
    return total
