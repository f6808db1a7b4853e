"""The original papers' tables (package data, wattzip/data/reference/): a '# source:' line,
then CSV."""

from __future__ import annotations

import csv
import os
from importlib.resources.abc import Traversable
from pathlib import Path

from wattzip.latex import display_tex
from wattzip.records import write_csv_atomically


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


def write_with_tex(path: str | os.PathLike, out: str | os.PathLike) -> None:
    """A reference table as CSV with its cells' LaTeX (display_tex) beside them, so the R
    tables set the originals with the same formatter as the reproduced values."""
    _, rows = read_reference(path)
    for row in rows:
        row["display_tex"] = display_tex(row.get("display"))
    write_csv_atomically(rows, out, list(rows[0]) if rows else ["display", "display_tex"])
