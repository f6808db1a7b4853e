"""A command's private scratch folder (perf's FIFOs and counts, the drift reference's
input, the plan's pilot): root's alone, in the temporary folder or a trusted one,
journaled before it is made and removed after, so that an exception or a kill leaks
none: the next command removes what a killed one left (wattzip.machine.undoers)."""

from __future__ import annotations

import contextlib
import os
import secrets
import tempfile
from collections.abc import Iterator

from wattzip import machine
from wattzip.errors import MachineError
from wattzip.machine import trust


def _fresh_name(prefix: str) -> str:
    return f"{prefix}-{secrets.token_hex(8)}"


def make(prefix: str, parent: str | None = None) -> tuple[str, str]:
    """A new folder `<prefix>-<random>` (prefix wattzip-…) in `parent` (by default the
    temporary folder), and its journal entry's id. It is journaled before the mkdir, so
    a kill between the two leaves a name to undo, never a folder no one knows of; a name
    someone else took is never removed as ours."""
    if parent is None:
        parent = tempfile.gettempdir()
        problem = trust.untrusted(parent, os.stat(parent), "the temporary folder", above=True)
        if problem:  # writable by others and not sticky: our folder could be swapped
            raise MachineError(f"{problem}; set TMPDIR to a folder like /tmp (sticky) or "
                               "root's")
    else:
        parent = trust.trusted_folder(parent, "the scratch folder's parent", sticky=True)
    for _ in range(100):
        path = os.path.join(parent, _fresh_name(prefix))
        change = machine.note("dir", path)
        try:
            os.mkdir(path, 0o700)  # fails on anything at the name, a link included
        except FileExistsError:
            machine.undone(change)
            continue
        return path, change
    raise MachineError(f"no new folder could be made in {parent}: every name tried was taken")


def remove(change: str) -> None:
    """The folder of `change` removed, and its entry with it."""
    machine.undo([e for e in machine.pending() if e["id"] == change])


@contextlib.contextmanager
def folder(prefix: str, parent: str | None = None) -> Iterator[str]:
    """make() for the block's length."""
    path, change = make(prefix, parent)
    try:
        yield path
    finally:
        remove(change)
