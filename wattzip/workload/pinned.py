"""A pinned corpus: files declared by name, size and sha256, checked before use.

A declaration (YAML: `name`, `source`, where its numbers come from, and `files`, each a
`name`, `size` and `sha256`) says which bytes a study measures. The folder a source
names must hold every declared file with exactly those bytes, or nothing is generated,
so nothing is measured: a missing or changed file is refused by its name. Two labs
whose declarations agree measured the same bytes. The input is the declared files
concatenated in the declared order, whole; other files in the folder are not read.

The Silesia corpus's declaration ships with wattzip (data/corpora/silesia.yaml, its
sources cited there): its file type is `silesia`. Any other corpus a user declares pins
the `user` file type (config `pinned`, `wattzip gen --pinned`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml

from wattzip import resources
from wattzip.errors import ConfigError
from wattzip.workload import corpus

# The file types whose declaration ships with wattzip: {file type: declaration file}.
SHIPPED = {"silesia": "silesia.yaml"}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Declaration:
    """A corpus as declared: its name, where its numbers come from, its files in order
    as (name, size in bytes, sha256)."""

    name: str
    source: str
    files: tuple[tuple[str, int, str], ...]
    path: str

    @property
    def total(self) -> int:
        return sum(size for _, size, _ in self.files)


def shipped(file_type: str) -> Declaration:
    """The declaration wattzip ships for a pinned file type (silesia)."""
    file = resources.data() / "corpora" / SHIPPED[file_type]
    return parse(resources.load_yaml(file.read_text(encoding="utf-8")),
                 f"wattzip/data/corpora/{SHIPPED[file_type]}")


def load(path: str | os.PathLike) -> Declaration:
    """A user's declaration file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"corpus declaration {path}: {exc.strerror}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"corpus declaration {path}: not YAML ({exc})") from None
    return parse(data, str(path))


def parse(data: object, path: str) -> Declaration:
    """A declaration's document, checked: every file named once (a plain name, no
    folder), a size of at least 0 bytes and a sha256 of 64 hex digits."""
    def refuse(why: str) -> ConfigError:
        return ConfigError(f"corpus declaration {path}: {why}; it holds name, source and "
                           "files, each file a name, size (bytes) and sha256")

    if not isinstance(data, dict) or not isinstance(data.get("files"), list) \
            or not data["files"]:
        raise refuse("no list of files")
    files, seen = [], set()
    for i, f in enumerate(data["files"]):
        if not isinstance(f, dict) or set(f) != {"name", "size", "sha256"}:
            raise refuse(f"file {i + 1} is not a name, size and sha256")
        name, size, digest = str(f["name"]), f["size"], str(f["sha256"]).lower()
        if not _NAME.fullmatch(name) or name in seen:
            raise refuse(f"file name {name!r} is not a plain name or is named twice")
        if not isinstance(size, int) or isinstance(size, bool) or size < 0:
            raise refuse(f"{name}: size {size!r} is not a number of bytes")
        if not _SHA256.fullmatch(digest):
            raise refuse(f"{name}: sha256 {digest!r} is not 64 hex digits")
        seen.add(name)
        files.append((name, size, digest))
    return Declaration(str(data.get("name") or Path(path).stem), str(data.get("source", "")),
                       tuple(files), path)


def _digest(fd: int) -> str:
    """The sha256 of what the descriptor holds, read from its start."""
    h, offset = hashlib.sha256(), 0
    while chunk := os.pread(fd, corpus.CHUNK, offset):
        h.update(chunk)
        offset += len(chunk)
    return h.hexdigest()


@contextlib.contextmanager
def _opened(declaration: Declaration, folder: str):
    """(the source, {declared name: descriptor}) once every declared file was found in
    `folder` (read as its owner could, wattzip.workload.corpus) with its declared size and
    sha256; a ConfigError naming each file missing or changed otherwise."""
    source = corpus.open_source(folder)
    if source is None or not source.is_dir:
        if source:
            source.close()
        raise ConfigError(f"corpus {declaration.name}: {folder} is not a folder; point the "
                          f"source at the unpacked corpus ({len(declaration.files)} files)")
    found: dict[str, int] = {}
    try:
        wanted = {name for name, _, _ in declaration.files}
        for rel, fd in source.files():
            if rel in wanted and rel not in found:
                found[rel] = fd
            else:
                os.close(fd)
        problems = []
        for name, size, digest in declaration.files:
            if name not in found:
                problems.append(f"{name} is missing")
                continue
            got = os.fstat(found[name]).st_size
            if got != size:
                problems.append(f"{name} has {got} bytes, not {size}")
            elif (sha := _digest(found[name])) != digest:
                problems.append(f"{name} has sha256 {sha}, not {digest}")
        if problems:
            raise ConfigError(
                f"corpus {declaration.name} in {folder} is not the declared one "
                f"({declaration.path}): {'; '.join(problems)}. Nothing is measured on "
                "other bytes: unpack the corpus again from its source")
        yield source, found
    finally:
        for fd in found.values():
            os.close(fd)
        source.close()


def _described(declaration: Declaration, source: corpus.Source) -> dict:
    entry = {**source.describe(), "kind": "pinned corpus", "corpus": declaration.name,
             "declaration": declaration.path, "declared_by": declaration.source,
             "files": [name for name, _, _ in declaration.files], "bytes": declaration.total}
    corpus._note_source(entry, source)
    return entry


def check(declaration: Declaration, folder: str) -> dict:
    """What the pre-flight records of a pinned corpus found as declared (a ConfigError
    naming each file missing or changed otherwise)."""
    with _opened(declaration, folder) as (source, _):
        return _described(declaration, source)


def chunks(declaration: Declaration, folder: str, describe: list) -> Iterator[bytes]:
    """The declared files' bytes in order, once all were found as declared (before any
    byte; a ConfigError naming each file missing or changed otherwise)."""
    with _opened(declaration, folder) as (source, found):
        describe.append(_described(declaration, source))
        for name, size, digest in declaration.files:
            # Hashed again as it is read, and checked before its last chunk goes out:
            # a file changed since its check is refused, not written into the input.
            h, offset = hashlib.sha256(), 0
            while offset < size:
                chunk = os.pread(found[name], min(corpus.CHUNK, size - offset), offset)
                h.update(chunk)
                offset += len(chunk)
                if not chunk or offset == size and h.hexdigest() != digest:
                    raise ConfigError(f"corpus {declaration.name}: {name} changed while it "
                                      "was read; nothing is measured on other bytes")
                yield chunk
