"""The original papers' tables as kept in paper/reference/: a '# source:' line, then CSV."""

from __future__ import annotations

import csv
import os
from pathlib import Path


def read_reference(path: str | os.PathLike) -> tuple[str, list[dict]]:
    """A reference CSV: its '# source:' line and its rows."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    source = ""
    body = []
    for line in lines:
        if line.startswith("#"):
            source = line.lstrip("# ").removeprefix("source:").strip()
        elif line.strip():
            body.append(line)
    return source, list(csv.DictReader(body))
