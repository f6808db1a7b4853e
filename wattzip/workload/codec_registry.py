"""The codec registry: every tool invocation of the study, defined once.

An entry's compress argv reads the original bytes on standard input; its
output goes to standard output unless the argv names ``{out}`` (7-Zip cannot
stream a 7z archive).  Its decompress argv reads the compressed file on
standard input unless it names ``{in}``, and always writes the original bytes
to standard output.  ``{threads}`` is replaced by the thread count of
multi-threaded tools.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from wattzip.errors import ConfigError, MissingToolError


@dataclass(frozen=True)
class Codec:
    """One tool at one level, as the paper names it (``gz-6``)."""

    name: str
    tool: str
    level: str
    compress: tuple[str, ...]
    decompress: tuple[str, ...]
    package: str
    version_argv: tuple[str, ...]
    version_pattern: str = r"(\d+(?:\.\d+)+)"
    suffix: str = ""
    # Exit codes that still mean success: ncompress exits 2 when the output
    # grew (random data), yet it wrote a valid stream.
    ok_exit_codes: frozenset[int] = frozenset({0})
    multithreaded: bool = False
    note: str = ""
    sets: tuple[str, ...] = field(default=())
    # Filesystem-level compression: the filesystem the medium must have and the mount
    # option that turns it on; its compress-write is a plain write onto that mount.
    filesystem: str = ""
    mount_option: str = ""

    @property
    def binary(self) -> str:
        return self.compress[0]

    def compress_argv(self, out_path: str, threads: int = 1) -> list[str]:
        return [_fill(a, out=out_path, threads=threads) for a in self.compress]

    def decompress_argv(self, in_path: str, threads: int = 1) -> list[str]:
        return [_fill(a, inp=in_path, threads=threads) for a in self.decompress]

    @property
    def writes_out_path(self) -> bool:
        """True when the tool writes its output file itself (no stdout)."""
        return any("{out}" in a for a in self.compress)

    @property
    def reads_in_path(self) -> bool:
        return any("{in}" in a for a in self.decompress)


def _fill(arg: str, out: str = "", inp: str = "", threads: int = 1) -> str:
    return arg.replace("{out}", out).replace("{in}", inp).replace("{threads}", str(threads))


def _entries() -> list[Codec]:
    """Build the registry; sets say which named study each entry belongs to."""
    entries: list[Codec] = []

    def add(name, tool, level, compress, decompress, package, version_argv, sets, **kw):
        entries.append(
            Codec(
                name=name,
                tool=tool,
                level=str(level),
                compress=tuple(compress),
                decompress=tuple(decompress),
                package=package,
                version_argv=tuple(version_argv),
                sets=tuple(sets),
                **kw,
            )
        )

    paper_levels = {"gzip": (1, 6, 9), "lzop": (1, 3, 9), "bzip2": (1, 9)}
    for tool, short, package, suffix in (
        ("gzip", "gz", "gzip", ".gz"),
        ("lzop", "lzo", "lzop", ".lzo"),
        ("bzip2", "bz", "bzip2", ".bz2"),
    ):
        version_argv = [tool, "--version"] if tool != "bzip2" else ["bzip2", "--help"]
        for level in range(1, 10):
            sets = ["levels", "all"]
            if level in paper_levels[tool]:
                sets.insert(0, "paper")
            add(
                f"{short}-{level}",
                tool,
                level,
                [tool, f"-{level}", "-c"],
                [tool, "-d", "-c"],
                package,
                version_argv,
                sets,
                suffix=suffix,
            )
    for bits in (10, 16):
        add(
            f"c-{bits}",
            "compress",
            bits,
            ["compress", "-c", "-b", str(bits)],
            ["compress", "-d", "-c"],
            "ncompress",
            ["compress", "-V"],
            ["paper", "all"],
            suffix=".Z",
            ok_exit_codes=frozenset({0, 2}),
        )
    add(
        "ppmd",
        "7zz",
        "PPMd",
        ["7zz", "a", "-t7z", "-m0=PPMd", "-mmt=1", "-bd", "-bso0", "-bsp0", "-siinput", "{out}"],
        ["7zz", "e", "-so", "-bd", "-bso0", "-bse0", "-bsp0", "{in}"],
        "7zip",
        ["7zz"],
        ["paper", "all"],
        version_pattern=r"7-Zip \(z\) (\S+)",
        suffix=".7z",
        note="PPMd (var. H) as implemented in 7-Zip; Debian ships no stand-alone ppmd binary",
    )
    # The modern field: (short name, tool, levels, compress flags before/after the level,
    # decompress argv, package, version pattern, suffix)
    vee = r"v(\d+(?:\.\d+)+)"
    modern = [
        ("zstd", "zstd", (1, 3, 9, 19), ["-{level}", "-T1", "-q", "-c"], ["zstd", "-d", "-q", "-c"],
         "zstd", vee, ".zst"),
        ("lz4", "lz4", (1, 9), ["-{level}", "-q", "-c"], ["lz4", "-d", "-q", "-c"], "lz4", vee,
         ".lz4"),
        ("xz", "xz", (1, 6, 9), ["-{level}", "-T1", "-c"], ["xz", "-d", "-c"], "xz-utils",
         Codec.version_pattern, ".xz"),
        ("br", "brotli", (1, 5, 9, 11), ["-q", "{level}", "-c"], ["brotli", "-d", "-c"],
         "brotli", Codec.version_pattern, ".br"),
    ]
    for short, tool, levels, flags, decomp, package, pattern, suffix in modern:
        for level in levels:
            add(f"{short}-{level}", tool, level,
                [tool, *(f.replace("{level}", str(level)) for f in flags)], decomp, package,
                [tool, "--version"], ["modern", "all"], version_pattern=pattern, suffix=suffix)
    parallel = [
        ("pigz-6", "pigz", 6, ["pigz", "-6", "-p", "{threads}", "-c"], ["pigz", "-d", "-c"],
         "pigz", ["pigz", "--version"], ".gz"),
        ("zstdmt-3", "zstd", 3, ["zstd", "-3", "-T{threads}", "-q", "-c"],
         ["zstd", "-d", "-q", "-c"], "zstd", ["zstd", "--version"], ".zst"),
        ("pbzip2-9", "pbzip2", 9, ["pbzip2", "-9", "-p{threads}", "-c"],
         ["pbzip2", "-d", "-p{threads}", "-c"], "pbzip2", ["pbzip2", "--version"], ".bz2"),
        ("lbzip2-9", "lbzip2", 9, ["lbzip2", "-9", "-n", "{threads}", "-c"],
         ["lbzip2", "-d", "-n", "{threads}", "-c"], "lbzip2", ["lbzip2", "--version"], ".bz2"),
        ("xzmt-6", "xz", 6, ["xz", "-6", "-T{threads}", "-c"], ["xz", "-d", "-T{threads}", "-c"],
         "xz-utils", ["xz", "--version"], ".xz"),
    ]
    for name, tool, level, comp, decomp, package, version_argv, suffix in parallel:
        pattern = r"v(\d+(?:\.\d+)+)" if tool == "zstd" else r"(\d+(?:\.\d+)+)"
        add(name, tool, level, comp, decomp, package, version_argv, ["parallel", "all"],
            suffix=suffix, multithreaded=True, version_pattern=pattern)
    return entries


def _filesystem_entries() -> list[Codec]:
    """btrfs transparent compression (HPC '14's ZFS compression, the 2008 thesis's
    compressed block device): written and read by the plain copy, compressed by the
    kernel on a mount with compress-force, against compression off on the same btrfs."""
    copy = ("dd", "bs=131072", "status=none")
    options = ([(f"zlib-{n}", f"zlib:{n}") for n in (1, 3, 6, 9)] + [("lzo", "lzo")]
               + [(f"zstd-{n}", f"zstd:{n}") for n in (1, 3, 9, 15)])
    return [Codec(name=f"btrfs-{name}", tool="btrfs", level=option.partition(":")[2] or "-",
                  compress=copy, decompress=copy, package="btrfs-progs",
                  version_argv=("uname", "-r"), sets=("fs",), filesystem="btrfs",
                  mount_option=f"compress-force={option}",
                  note="the kernel's btrfs compression; the ratio is measured on disk "
                       "(compsize)") for name, option in options]


REGISTRY: dict[str, Codec] = {c.name: c for c in _entries() + _filesystem_entries()}
SET_NAMES = ("paper", "levels", "modern", "parallel", "fs", "all")


def get(name: str) -> Codec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown codec {name!r}; valid codecs: {', '.join(REGISTRY)}"
        ) from None


def resolve(selection: list[str] | str) -> list[Codec]:
    """Expand set names and entry names into codecs, in order, without duplicates."""
    items = [selection] if isinstance(selection, str) else list(selection)
    chosen: dict[str, Codec] = {}
    for item in items:
        if item in SET_NAMES:
            for codec in REGISTRY.values():
                if item in codec.sets:
                    chosen.setdefault(codec.name, codec)
        elif item in REGISTRY:
            chosen.setdefault(item, REGISTRY[item])
        else:
            raise ConfigError(
                f"unknown codec or codec set {item!r}; sets: {', '.join(SET_NAMES)}; "
                f"codecs: {', '.join(REGISTRY)}"
            )
    return list(chosen.values())


def binary_path(codec: Codec) -> str | None:
    return shutil.which(codec.binary)


def require(codec: Codec) -> str:
    """Return the binary's path or say which Debian package provides it."""
    path = binary_path(codec)
    if path is None:
        raise MissingToolError(
            f"codec {codec.name}: the binary {codec.binary!r} is not installed; "
            f"install it with: apt-get install {codec.package}"
        )
    return path


@functools.cache
def _version_output(argv: tuple[str, ...]) -> str:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return proc.stdout + proc.stderr


def plain_copy_version() -> str | None:
    """The version of dd, the user-space copy of the plain baseline."""
    match = re.search(r"(\d+(?:\.\d+)+)", _version_output(("dd", "--version")))
    return match.group(1) if match else None


def version(codec: Codec) -> str | None:
    """The tool's own version string, or None when it is not installed."""
    if binary_path(codec) is None:
        return None
    match = re.search(codec.version_pattern, _version_output(codec.version_argv))
    return match.group(1) if match else "unknown"


def describe(c: Codec) -> dict:
    """A codec entry as `wattzip codecs` lists it: its commands, package and version here."""
    return {"name": c.name, "tool": c.tool, "level": c.level, "compress": list(c.compress),
            "decompress": list(c.decompress), "package": c.package,
            "available": binary_path(c) is not None, "version": version(c),
            "sets": list(c.sets), "note": c.note}
