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

from wattzip import resources
from wattzip.errors import ConfigError, MissingToolError, did_you_mean


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

    @property
    def streams(self) -> bool:
        """Whether the codec alone can be run from the page cache to /dev/null (the
        codec-only operations): a tool that compresses to standard output. Not a tool
        that writes its output file itself (7-Zip), nor the kernel's compression, which
        has no command of its own."""
        return not self.filesystem and not self.writes_out_path


def _fill(arg: str, out: str = "", inp: str = "", threads: int = 1) -> str:
    return arg.replace("{out}", out).replace("{in}", inp).replace("{threads}", str(threads))


# How a family of the data file may be described (wattzip/data/codecs.yaml says what
# each key means); a filesystem family's entries are written and read by the plain copy.
FAMILY_KEYS = {"short", "name", "tool", "package", "levels", "paper_levels", "sets",
               "compress", "decompress", "version_argv", "version_pattern", "suffix",
               "ok_exit_codes", "multithreaded", "note", "filesystem", "mount_options"}
FILESYSTEM_COPY = ("dd", "bs=131072", "status=none")


def _entries(data: dict) -> list[Codec]:
    """The registry's entries from its data file, in its order; each tool must have its
    rehearsal model there too."""
    entries = [codec for family in data["families"] for codec in _family(family)]
    unmodelled = sorted({c.tool for c in entries} - set(data["rehearsal"]))
    if unmodelled:
        raise ConfigError(f"codecs.yaml: no rehearsal model (`rehearsal:`) of the tools "
                          f"{unmodelled}")
    return entries


def _family(f: dict) -> list[Codec]:
    """One family's entries: one per level (or per mount option of a filesystem)."""
    unknown = set(f) - FAMILY_KEYS
    if unknown:
        raise ConfigError(f"codecs.yaml: family {f.get('name') or f.get('short')!r} has "
                          f"unknown keys {sorted(unknown)}; known: {sorted(FAMILY_KEYS)}")
    common = {k: f[k] for k in ("tool", "package", "suffix", "note", "multithreaded",
                                "version_pattern", "filesystem") if k in f}
    common.update(version_argv=tuple(f["version_argv"]),
                  ok_exit_codes=frozenset(f.get("ok_exit_codes", (0,))))
    if f.get("filesystem"):
        return [Codec(name=f"{f['short']}-{option.replace(':', '-')}",
                      level=option.partition(":")[2] or "-", compress=FILESYSTEM_COPY,
                      decompress=FILESYSTEM_COPY, sets=tuple(f["sets"]),
                      mount_option=f"compress-force={option}", **common)
                for option in f["mount_options"]]
    out = []
    for level in f["levels"]:
        paper = ("paper",) if level in f.get("paper_levels", ()) else ()
        out.append(Codec(name=f.get("name") or f"{f['short']}-{level}", level=str(level),
                         compress=_with_level(f["compress"], level),
                         decompress=_with_level(f["decompress"], level),
                         sets=(*paper, *f["sets"]), **common))
    return out


def _with_level(argv: list[str], level) -> tuple[str, ...]:
    return tuple(str(a).replace("{level}", str(level)) for a in argv)


_DATA = resources.load_yaml(resources.data().joinpath("codecs.yaml").read_text())
REGISTRY: dict[str, Codec] = {c.name: c for c in _entries(_DATA)}
# SIMULATED: each tool's model for the rehearsal (wattzip.model.rehearsal), never measured.
REHEARSAL_MODELS: dict[str, dict[str, float]] = {
    tool: {k: float(v) for k, v in model.items()} for tool, model in _DATA["rehearsal"].items()}
SET_NAMES = ("paper", "levels", "modern", "parallel", "fs", "all")


def get(name: str) -> Codec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown codec {name!r}{did_you_mean(name, REGISTRY) or ';'} valid codecs: "
            f"{', '.join(REGISTRY)}"
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
            hint = did_you_mean(item, [*SET_NAMES, *REGISTRY])
            raise ConfigError(
                f"unknown codec or codec set {item!r}{hint}{' The' if hint else '; the'} "
                f"sets: {', '.join(SET_NAMES)}; the codecs: {', '.join(REGISTRY)}"
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
