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
import re
import shutil
import subprocess
import tarfile
from collections.abc import Iterator
from pathlib import Path

from wattzip.errors import ConfigError

CHUNK = 1 << 20


def walk_files(root: str) -> Iterator[Path]:
    """Regular files under root in a fixed (sorted) order, symlinks skipped."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_file() and not path.is_symlink():
                yield path


def looks_text(head: bytes) -> bool:
    return b"\0" not in head


def looks_elf(head: bytes) -> bool:
    return head.startswith(b"\x7fELF")


def file_chunks(path: Path, accept) -> Iterator[bytes]:
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
    if not os.path.isdir(root):
        describe.append({"source": root, "missing": "not a directory"})
        return
    entry = {"source": root, "files": 0}
    describe.append(entry)
    for path in walk_files(root):
        produced = False
        for chunk in file_chunks(path, accept):
            produced = True
            yield chunk
        entry["files"] += produced


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


def _corpus_pieces(sources: list[str], accept, describe: list) -> Iterator[bytes]:
    cycle = 0
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
                yield chunk
        if produced == 0:
            raise ConfigError(f"the sources {sources} gave no bytes; name directories that exist")
        cycle += 1
        describe.append({"cycled_again": cycle})


def user_chunks(path: str, describe: list) -> Iterator[bytes]:
    p = Path(path)
    if not p.exists():
        raise ConfigError(f"user data {path!r} does not exist")
    describe.append({"source": str(p.resolve()), "kind": "user data"})
    files = [p] if p.is_file() else list(walk_files(str(p)))
    for f in files:
        yield from file_chunks(f, lambda head: True)


def user_data_size(path: str) -> int:
    p = Path(path)
    if p.is_file():
        return p.stat().st_size
    return sum(f.stat().st_size for f in walk_files(str(p)))
