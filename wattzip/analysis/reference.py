"""The original papers' tables (package data, wattzip/data/reference/): a '# source:' line,
then CSV."""

from __future__ import annotations

import csv
import os
from importlib.resources.abc import Traversable
from pathlib import Path

from wattzip.latex import display_tex


def read_reference(path: str | os.PathLike | Traversable) -> tuple[str, list[dict]]:
    """A reference CSV: its '# source:' line and its rows."""
    path = Path(path) if isinstance(path, str | os.PathLike) else path
    lines = path.read_text(encoding="utf-8").splitlines()
    source = ""
    body = []
    for line in lines:
        if line.startswith("#"):
            source = line.lstrip("# ").removeprefix("source:").strip()
        elif line.strip():
            body.append(line)
    return source, list(csv.DictReader(body))


def read_with_tex(path: str | os.PathLike | Traversable) -> list[dict]:
    """A reference table's rows, each cell's LaTeX (display_tex) beside it, so the tables
    set the originals with the same formatter as the reproduced values."""
    _, rows = read_reference(path)
    return [{**row, "display_tex": display_tex(row.get("display"))} for row in rows]
