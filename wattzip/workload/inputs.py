"""The study's input files: zero, text, binary, random and beyond (SYSTOR '09 4.2).

Every generator streams fixed-size chunks, so memory stays bounded for any
size, writes exactly the requested number of bytes, and returns a manifest
entry that says where the bytes came from.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from wattzip import __version__, records
from wattzip.errors import ConfigError
from wattzip.machine import system, trust
from wattzip.workload import corpus, pinned

CHUNK = corpus.CHUNK
IN_FLIGHT = 4  # chunks queued for hashing and writing: bounds the memory
MIX_BLOCK = 128 << 10
PAPER_TYPES = ("zero", "text", "binary", "random")
DEFAULT_TEXT_SOURCES = ("linux-source", "/usr/include", "/usr/share/perl", "/usr/lib/python3")
DEFAULT_BINARY_SOURCES = ("kernel-modules", "/usr/lib/x86_64-linux-gnu", "/usr/lib", "/usr/bin")


def mix_fraction(file_type: str) -> float | None:
    """'mix-30' -> 0.30, the fraction of highly redundant blocks; None otherwise."""
    match = re.fullmatch(r"mix-(\d{1,3})", file_type)
    if not match:
        return None
    pct = int(match.group(1))
    if pct > 100:
        raise ConfigError(f"file type {file_type!r}: the redundant share must be 0..100")
    return pct / 100


def validate_type(file_type: str) -> None:
    if (file_type in (*PAPER_TYPES, "urandom", "user", "repeated", *pinned.SHIPPED)
            or mix_fraction(file_type) is not None):
        return
    raise ConfigError(
        f"unknown file type {file_type!r}; valid: zero, text, binary, random, urandom, "
        f"repeated, user, {', '.join(pinned.SHIPPED)}, mix-N (N% highly redundant blocks, "
        "e.g. mix-50)"
    )


def declaration(file_type: str, declared: str | None) -> pinned.Declaration | None:
    """The corpus a file type's source must match (wattzip.workload.pinned): a shipped
    one's (silesia), the user's declaration of their own data, or None (not pinned)."""
    if file_type in pinned.SHIPPED:
        if declared:
            raise ConfigError(f"file type {file_type}: its declaration ships with wattzip "
                              "and is not replaced; declare your own corpus for 'user'")
        return pinned.shipped(file_type)
    if declared and file_type != "user":
        raise ConfigError(f"file type {file_type}: only 'user' data (or a shipped corpus) "
                          "is pinned by a declaration")
    return pinned.load(declared) if declared else None


class GenerationProgress:
    """Prints a line to stderr at most once a second on long work."""

    def __init__(self, label: str, total: int, stream=None):
        self.label, self.total, self.stream = label, total, stream or sys.stderr
        self.start = self.last = time.monotonic()

    def update(self, done: int) -> None:
        now = time.monotonic()
        if now - self.last >= 1.0:
            self.last = now
            self._print(done, now)

    def finish(self, done: int) -> None:
        self._print(done, time.monotonic())

    def _print(self, done: int, now: float) -> None:
        rate = done / max(now - self.start, 1e-9) / 2**20
        pct = 100 * done / self.total if self.total else 100
        print(f"{self.label}: {done / 2**20:.0f}/{self.total / 2**20:.0f} MiB ({pct:.0f}%) "
              f"{rate:.0f} MiB/s", file=self.stream, flush=True)


# --- byte sources -----------------------------------------------------------


def _zero_chunks() -> Iterator[bytes]:
    block = bytes(CHUNK)
    while True:
        yield block


def _repeated_chunks() -> Iterator[bytes]:
    """What `yes` writes: HPC '14's "repeated" data pattern."""
    block = b"y\n" * (CHUNK // 2)
    while True:
        yield block


def _pcg64(seed: int):
    """numpy's PCG64: fast, and its raw bit stream is stable across numpy versions."""
    import numpy as np

    return np.random.PCG64(seed)


def _random_bytes(bitgen, n: int) -> bytes:
    return bitgen.random_raw(n // 8).astype("<u8", copy=False).tobytes()


def _random_chunks(seed: int) -> Iterator[bytes]:
    bitgen = _pcg64(seed)
    while True:
        yield _random_bytes(bitgen, CHUNK)


def _urandom_chunks() -> Iterator[bytes]:
    with open("/dev/urandom", "rb", buffering=0) as f:
        while True:
            yield f.read(CHUNK)


def _mix_chunks(seed: int, redundant_fraction: float) -> Iterator[bytes]:
    """Blocks in a fixed interleave so every prefix holds the same share of zeros."""
    bitgen = _pcg64(seed)
    zero_block = bytes(MIX_BLOCK)
    i = 0
    while True:
        redundant = int((i + 1) * redundant_fraction) > int(i * redundant_fraction)
        yield zero_block if redundant else _random_bytes(bitgen, MIX_BLOCK)
        i += 1


# --- generation -------------------------------------------------------------


def _numpy_version() -> str:
    import numpy as np

    return np.__version__


def _chunks_for(file_type: str, seed: int, sources: list[str] | None, describe: list,
                corpus_pin: pinned.Declaration | None = None):
    if corpus_pin is not None:
        if not sources:
            raise ConfigError(f"file type {file_type!r} needs a source: the folder of the "
                              f"unpacked corpus {corpus_pin.name}")
        return pinned.chunks(corpus_pin, sources[0], describe)
    frac = mix_fraction(file_type)
    if file_type == "zero":
        describe.append({"source": "zero bytes, written (not sparse)"})
        return _zero_chunks()
    if file_type == "repeated":
        describe.append({"source": "'y\\n' repeated, as yes(1) writes (HPC '14 Table II)"})
        return _repeated_chunks()
    if file_type == "random":
        describe.append({"source": "numpy PCG64(seed).random_raw, little-endian",
                         "numpy": _numpy_version(), "seed": seed})
        return _random_chunks(seed)
    if file_type == "urandom":
        describe.append({"source": "/dev/urandom (not reproducible)"})
        return _urandom_chunks()
    if frac is not None:
        describe.append({"source": f"{MIX_BLOCK}-byte blocks, {frac:.0%} zero, rest numpy "
                         "PCG64(seed)", "numpy": _numpy_version(), "seed": seed,
                         "redundant_fraction": frac})
        return _mix_chunks(seed, frac)
    if file_type == "text":
        return corpus.chunks(list(sources or DEFAULT_TEXT_SOURCES), corpus.looks_text, describe)
    if file_type == "binary":
        return corpus.chunks(list(sources or DEFAULT_BINARY_SOURCES), corpus.looks_elf,
                             describe)
    if file_type == "user":
        if not sources:
            raise ConfigError("file type 'user' needs a source: a file or directory of your data")
        return corpus.user_chunks(sources[0], describe)
    validate_type(file_type)
    raise AssertionError(file_type)


def _write_hashed(chunks, size: int, fd: int, digest, bar) -> int:
    """Write the first `size` bytes of `chunks` to `fd`, hashing them into `digest`; the
    bytes written. Producing, hashing and writing overlap: one ordered worker thread each
    for the hash and the write (both release the GIL), a few chunks in flight."""
    written = 0
    hasher, writer = ThreadPoolExecutor(1), ThreadPoolExecutor(1)
    in_flight: deque = deque()
    try:
        for chunk in chunks:
            piece = chunk[: size - written]
            in_flight.append((hasher.submit(digest.update, piece),
                              writer.submit(_write_all, fd, piece)))
            while len(in_flight) > IN_FLIGHT:
                for future in in_flight.popleft():
                    future.result()
            written += len(piece)
            if bar:
                bar.update(written)
            if written >= size:
                break
        for futures in in_flight:
            for future in futures:
                future.result()
    finally:
        hasher.shutdown()
        writer.shutdown()
    return written


def generate(file_type: str, size: int | None, out: str | os.PathLike, seed: int = 1,
             sources: list[str] | None = None, progress: bool = True,
             declared: str | None = None) -> dict:
    """Write exactly `size` bytes of `file_type` to `out`; return its manifest entry.

    The file appears under its name only when complete (written to a temporary
    name, flushed, then renamed), so an interrupted generation leaves nothing
    that looks finished.  `size` None means all of a user's data. Its folder is made
    root's, or refused when another user could write it (wattzip.machine.trust).
    A pinned corpus (silesia, or user data with a `declared` corpus) is checked file by
    file first and taken whole (wattzip.workload.pinned).
    """
    validate_type(file_type)
    corpus_pin = declaration(file_type, declared)
    if corpus_pin is not None:
        if size not in (None, corpus_pin.total):
            raise ConfigError(f"file type {file_type}: the corpus {corpus_pin.name} is "
                              f"measured whole, {corpus_pin.total} bytes; set file_size to "
                              f"{corpus_pin.total}B, not {size} bytes")
        size = corpus_pin.total
    if size is None:
        if file_type != "user":
            raise ConfigError(f"file type {file_type!r} needs a size")
        size = corpus.user_data_size((sources or [""])[0])
    if size < 1:
        raise ConfigError(f"{file_type}: an input of at least 1 byte is needed, not {size}"
                          + (" (the sources hold no data)" if file_type == "user" else ""))
    out = Path(out)
    if out.is_dir() or not out.name:
        raise ConfigError(f"{out}: a folder; give the input file's path")
    trust.trusted_folder(out.parent, "the input's folder (input_dir)")
    tmp = out.with_name(out.name + ".partial")
    describe: list = []
    digest = hashlib.sha256()
    # Root's alone until whole, and then readable by all only if every byte was: an input
    # read from a user's files, or from a file of root's others cannot read, stays 0600.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    os.fchmod(fd, 0o600)  # a .partial left by a killed generation too
    try:
        free = shutil.disk_usage(out.parent).free
        if free < size:
            raise ConfigError(f"{out.parent} has {free / 2**30:.2f} GiB free; the {file_type} "
                              f"file needs {size / 2**30:.2f} GiB. Free space or set "
                              "input_dir elsewhere")
        bar = GenerationProgress(f"gen {file_type}", size) if progress else None
        written = _write_hashed(_chunks_for(file_type, seed, sources, describe, corpus_pin),
                                size, fd, digest, bar)
        if written < size:
            raise ConfigError(f"{file_type}: the sources gave {written} bytes, {size} needed")
        os.fsync(fd)
        if not any(isinstance(d, dict) and d.get("private") for d in describe):
            os.fchmod(fd, 0o644)
    except BaseException:
        os.close(fd)
        tmp.unlink(missing_ok=True)  # a failed generation leaves nothing behind
        raise
    os.close(fd)
    os.replace(tmp, out)
    if bar:
        bar.finish(written)
    return {
        "file_type": file_type,
        "path": str(out),
        "size_bytes": written,
        "sha256": digest.hexdigest(),
        "seed": seed if file_type in ("random",) or mix_fraction(file_type) is not None else None,
        "sources": describe,
        "generator": f"wattzip {__version__}",
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def sha256_file(path: str | os.PathLike) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def copy_through_user_space(src: str | os.PathLike, dst: str | os.PathLike,
                            sha256: str | None = None) -> str:
    """Copy with read and write (never copy_file_range or a reflink); the copy's sha256.

    Written to a .partial file (root's alone until whole) and renamed, so a killed copy
    is never taken for whole; with `sha256`, a copy of other bytes is removed instead,
    a ConfigError (a link in the source's place copies nothing to where others read).
    """
    digest = hashlib.sha256()
    partial = Path(f"{dst}.partial")
    with open(src, "rb", opener=_no_link) as fin, open(partial, "wb", opener=_private) as fout:
        while chunk := fin.read(CHUNK):
            digest.update(chunk)
            fout.write(chunk)
        fout.flush()
        os.fsync(fout.fileno())
        if sha256 is None or digest.hexdigest() == sha256:
            # readable by all only when the source is: a private input stays root's
            public = os.fstat(fin.fileno()).st_mode & stat.S_IROTH
            os.fchmod(fout.fileno(), 0o644 if public else 0o600)
    if sha256 is not None and digest.hexdigest() != sha256:
        partial.unlink()
        # The digest of what was read is not said: it may be a file the source's name
        # was turned to, and its digest would tell another user what root can read.
        raise ConfigError(f"{dst}: the copy of {src} does not have the sha256 {sha256} "
                          "its manifest names: this testbed would not measure the same "
                          "bytes as the others")
    os.replace(partial, dst)
    return digest.hexdigest()


def _no_link(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK)


def _private(path: str, flags: int) -> int:
    fd = os.open(path, flags | os.O_NOFOLLOW, 0o600)
    os.fchmod(fd, 0o600)  # a .partial left by a killed copy too
    return fd


def write_manifest_entry(entry: dict, path: str | os.PathLike) -> None:
    records.write_text_atomically(path, json.dumps(entry, indent=2) + "\n")


def stage(master_manifest: str, out: str, manifest: str) -> dict:
    """Copy a master input to this machine's disk (kept when already there, whole); its
    bytes must be the master's, or this testbed would not measure the same input."""
    # Root copies what the manifest names, where others may read the copy: the manifest
    # and the master must be root's files in folders only root can write, never links.
    master = records.read_json(trust.trusted_file(master_manifest, "the master input's manifest"),
                               "master input's manifest", ("path", "size_bytes", "sha256"))
    source = trust.trusted_file(master["path"], "the master input")
    trust.trusted_folder(Path(out).parent, "input_dir")
    trust.trusted_paths({"the staged input's manifest": manifest})
    if not (os.path.lexists(out) and trust.trusted_file(out, "the staged input")
            and os.path.getsize(out) == master["size_bytes"]
            and sha256_file(out) == master["sha256"]):
        copy_through_user_space(source, out, master["sha256"])
    entry = {**master, "path": os.path.abspath(out), "staged_from": master["path"],
             "host": system.host_identity()}
    write_manifest_entry(entry, manifest)
    return entry
