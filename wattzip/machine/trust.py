"""What root may trust on a shared server: only what no other user could have written.

wattzip runs as root and writes where the config says: the inputs (input_dir), each
medium's folder, its image and its mount point. A folder another user made, or can
write, or any folder above it, lets that user plant a symbolic link where root is about
to write, format or mount, and so turn root's work against any file on the machine. So
every such folder is checked, when it is made and again when it is used: each folder on
the way to it, as given and resolved, is root's (or this process's user's), and none is
writable by others unless sticky like /tmp (whose entries only their owner may rename,
and the next one must be root's); the folder itself not even then. Group write counts as
another user's unless the group is root's alone (gid 0 with no other member, as Debian
has it): Snakemake makes its own records group-writable.
"""

from __future__ import annotations

import contextlib
import functools
import grp
import os
import pwd
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

from wattzip.errors import MachineError

FOLDER_MODE = 0o755  # a folder wattzip makes: root's, readable, written by root only


def owner(uid: int) -> str:
    try:
        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except KeyError:
        return f"uid {uid}"


@functools.cache
def _group_is_roots(gid: int) -> bool:
    """Only root is in group `gid`: gid 0, no member listed and no other user's own."""
    if gid != 0:
        return False
    try:
        members = grp.getgrgid(gid).gr_mem
    except KeyError:
        return False
    return not members and all(u.pw_uid == 0 for u in pwd.getpwall() if u.pw_gid == gid)


def untrusted(path: str | Path, st: os.stat_result, what: str,
              above: bool | None = None) -> str | None:
    """Why root cannot trust `path` (None: it can): owned by another user than root or
    this process's, or writable by others (by its group, unless only root is in it). A
    folder `above` another (by default, one called "folder above") may be writable by
    all if sticky, like /tmp."""
    above = what == "folder above" if above is None else above
    if st.st_uid not in (0, os.geteuid()):
        return f"{what} {path} is owned by {owner(st.st_uid)}, not by root"
    others_write = st.st_mode & (0o002 if _group_is_roots(st.st_gid) else 0o022)
    if (others_write and not stat.S_ISLNK(st.st_mode)  # a link's mode means nothing
            and not (above and st.st_mode & stat.S_ISVTX)):
        return f"{what} {path} is writable by others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _walk(path: str, create: bool, final: bool = True) -> str | None:
    """The first problem on the way to `path`, each prefix as the kernel sees it (lstat);
    a symbolic link on the way must be root's and leads to a way checked in turn.
    Missing folders are made (`create`), each only once the one above it is trusted."""
    parts = Path(path).parts
    for i in range(1, len(parts) + 1):
        prefix = os.path.join(*parts[:i])
        last = final and i == len(parts)
        if create and not os.path.lexists(prefix):
            with contextlib.suppress(FileExistsError):  # made meanwhile: checked below
                os.mkdir(prefix, FOLDER_MODE)
        st = os.lstat(prefix)
        if stat.S_ISLNK(st.st_mode):
            problem = (untrusted(prefix, st, "the symbolic link")
                       or _walk(os.path.realpath(prefix), False, last))
        elif not stat.S_ISDIR(st.st_mode):
            problem = f"{prefix} is not a folder"
        else:
            problem = untrusted(prefix, st, "the folder itself" if last
                                else "on the way, the folder", above=not last)
        if problem:
            return problem
    return None


def trusted_folder(path: str | os.PathLike, what: str, create: bool = True,
                   resolved: str | None = None, sticky: bool = False) -> str:
    """`path`, made if missing (each folder 0o755 at most) and trusted, resolved; else a
    MachineError naming the folder, its owner and what to do. Trusted: every folder on
    the way, as given and resolved, and every link on it, is root's; none is writable by
    others unless sticky (like /tmp), and `path` itself is not writable by others. With
    `resolved` (where `path` led when it was configured), it must lead there still. A
    `sticky` folder, one only to make private folders in, may be like /tmp itself."""
    given = os.path.join(os.getcwd(), os.fspath(path))  # not normalized: `..` as the kernel
    try:
        problem = _walk(given, create, final=not sticky)
        real = os.path.realpath(given)
        problem = problem or _walk(real, False, final=not sticky)
    except OSError as exc:
        raise MachineError(f"{what} {path} cannot be used: {exc.filename}: {exc.strerror}; "
                           "choose a folder root can make and write") from None
    if problem:
        raise MachineError(
            f"{what} {path} cannot be trusted: {problem}. wattzip runs as root, and a folder "
            "that another user owns or can write, or one above it, lets them turn root's "
            "writes against any file: choose a path whose folders only root can write "
            "(remove the folder for wattzip to make it as root, or `chown root` and "
            "`chmod go-w` it)")
    if resolved is not None and real != resolved:
        raise MachineError(f"{what} {path} now leads to {real}, not to {resolved} as when it "
                           "was configured: someone changed a link on the way; check them")
    return real


def trusted_file(path: str | os.PathLike, what: str) -> str:
    """`path` a regular file of root's that no one else can write, in a trusted folder
    (not made): the file read at its name later is the one checked now. Resolved."""
    folder = trusted_folder(os.path.dirname(os.path.join(os.getcwd(), os.fspath(path))),
                            f"the folder of {what}", create=False)
    real = os.path.join(folder, os.path.basename(path))
    try:
        st = os.lstat(real)
    except OSError as exc:
        raise MachineError(f"{what} {path} cannot be used: {exc.strerror}") from None
    problem = (untrusted(real, st, what) if stat.S_ISREG(st.st_mode)
               else f"{real} is not a regular file (a symbolic link is never followed)")
    if problem:
        raise MachineError(f"{what} {path} cannot be trusted: {problem}; wattzip runs as "
                           "root and reads only files no other user could have written")
    return real


def trusted_paths(paths: Mapping[str, str | os.PathLike | None]) -> None:
    """The study's files a root command reads or writes (its spec, manifest, journals,
    runs), by what each is: one that exists must be a trusted_file, and the folder of
    one still to be written a trusted_folder (made if missing). In the study's folder
    only root may have written them: a journal, a spec or a link planted there would
    feed root's numbers, commands or writes."""
    for what, path in paths.items():
        if path is None:
            continue
        if os.path.lexists(path):
            trusted_file(path, what)
        else:
            trusted_folder(os.path.dirname(os.path.join(os.getcwd(), os.fspath(path))),
                           f"the folder of {what}")


SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def trusted_search_path(value: str | None) -> tuple[str, list[str]]:
    """PATH kept to the folders root may run tools from, and why each other entry went.

    Root finds every compressor, dd, R and latexmk on PATH: a folder of it that another
    user can write (or a relative entry, the current folder) would choose the tool whose
    time and energy are measured, or run anything as root. Kept: absolute folders trusted
    as trusted_folder trusts one; a folder that does not exist is left out unsaid."""
    kept, dropped = [], []
    for entry in (value or "").split(os.pathsep):
        if not os.path.isabs(entry):
            dropped.append(f"{entry or '(empty)'}: not an absolute folder")
            continue
        if not os.path.isdir(entry):
            continue
        try:
            problem = _walk(entry, False) or _walk(os.path.realpath(entry), False)
        except OSError as exc:
            problem = f"{exc.filename}: {exc.strerror}"
        if problem:
            dropped.append(f"{entry}: {problem}")
        elif entry not in kept:
            kept.append(entry)
    return os.pathsep.join(kept), dropped


def keep_path_trusted() -> list[str]:
    """As root, this process's PATH (which its tools inherit) cut to trusted_search_path;
    what was left out, for the caller to say."""
    if os.geteuid() != 0:
        return []
    kept, dropped = trusted_search_path(os.environ.get("PATH"))
    if not kept:  # an empty PATH is the current folder's: the system's folders instead
        kept, _ = trusted_search_path(SYSTEM_PATH)
        dropped.append(f"every folder; the system's are used: {kept}")
    os.environ["PATH"] = kept
    return dropped


# What of a workflow's checkout root runs or reads as code: the rules and their scripts,
# the Snakefile, the config (its commands, mkfs options and devices are code too), the
# profiles and environments, and what Snakemake keeps between runs.
WORKFLOW_CODE = ("Snakefile", "rules", "scripts", "figures", "paper", "config.yaml", "config",
                 "profiles", "envs", "wattzip", ".snakemake")


def _first_untrusted_in(top: str) -> str | None:
    """The first entry under `top` (itself included, links not followed, in sorted
    order) that another user owns or can write: one os.lstat per entry, no process."""
    try:
        st = os.lstat(top)
    except FileNotFoundError:
        return None
    problem = untrusted(top, st, "the file" if not stat.S_ISDIR(st.st_mode) else "the folder",
                        above=False)
    if problem or not stat.S_ISDIR(st.st_mode):
        return problem
    for folder, dirs, files in os.walk(top):
        dirs.sort()
        for name in sorted(files) + dirs:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except FileNotFoundError:  # gone meanwhile: nothing to run
                continue
            kind = ("the symbolic link" if stat.S_ISLNK(st.st_mode)
                    else "the folder" if stat.S_ISDIR(st.st_mode) else "the file")
            problem = untrusted(path, st, kind, above=False)
            if problem:
                return problem
    return None


def trusted_workflow(directory: str | os.PathLike, configfiles=(),
                     environment: str | None = None) -> None:
    """As root, a MachineError naming the first file of the workflow at `directory` that
    another user owns or can write: its folder (and those above it), its code, config and
    Snakemake state (WORKFLOW_CODE), the config files given, the Python environment it
    runs in and the wattzip package it imports. Root would run what they changed.
    A walk of the tree with lstat (a checkout and its .venv: some 20,000 entries, a
    fraction of a second)."""
    top = os.path.abspath(directory)
    package = str(Path(__file__).resolve().parents[1])  # the wattzip imported, wherever
    where = [os.path.join(top, name) for name in WORKFLOW_CODE]
    where += [os.path.abspath(os.fspath(f)) for f in configfiles]
    where += [os.path.abspath(environment or sys.prefix), package]
    roots = sorted({top, *(p for p in where if not _below(p, top))})
    try:
        problem = None
        for root in roots:  # the folders on the way to each, as trusted_folder checks them
            if os.path.exists(root):
                problem = problem or _walk(root if os.path.isdir(root)
                                           else os.path.dirname(root), False)
        for path in where:
            problem = problem or _first_untrusted_in(path)
    except OSError as exc:
        problem = f"{exc.filename}: {exc.strerror}"
    if problem:
        fix = " ".join([top, *sorted(r for r in roots if r != top)])  # the checkout first
        raise MachineError(
            f"the workflow {top} cannot be trusted: {problem}. As root it runs this "
            "checkout's code (Snakefile, rules, scripts, the wattzip package), its Python "
            "environment and its config, and another user who can change any of them "
            "runs what they like as root. Make the whole tree root's: "
            f"`chown -R root: {fix}` and `chmod -R go-w {fix}` (and the folders above "
            "it root's, not writable by others), or run the workflow as that user")


def _below(path: str, top: str) -> bool:
    return os.path.commonpath([os.path.abspath(path), top]) == top
