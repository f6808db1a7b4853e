"""The original papers' tables (package data, wattzip/data/reference/): a '# source:' line,
then CSV."""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping
from importlib.resources.abc import Traversable
from pathlib import Path

from wattzip.errors import RecordError
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


DISAGREEMENTS = "seed_disagreements"  # the seeds' disagreements, by the cells they touch


def _cell(rows: list[dict], codec: str, file_type: str, metric: str) -> dict | None:
    """A reference table's cell (a ratio table's cells are of metric CR)."""
    return next((r for r in rows if (r["codec"], r["file_type"], r.get("metric", "CR"))
                 == (codec, file_type, metric)), None)


def disagreement_notes(declared: list[dict], tables: Mapping[str, list[dict]],
                       table: str | None = None) -> dict[tuple, str]:
    """The seeds' disagreements (seed_disagreements.csv's rows, `declared`) over the
    reference tables (`tables`: each one's rows by its name), keyed by (table, codec, file
    type, metric), or by (codec, file type, metric) for one `table`: what the other seed
    says, both values read from their tables. A row naming a cell neither table has is
    an error of the data file, not a disagreement to leave out."""
    out = {}
    for d in declared:
        if table is not None and d["source_table"] != table:
            continue
        mine = _cell(tables[d["source_table"]], d["codec"], d["file_type"], d["metric"])
        other = _cell(tables[d["other_table"]], d["other_codec"], d["file_type"],
                      d["metric"])
        if mine is None or other is None:
            raise RecordError(f"{DISAGREEMENTS}.csv: no cell {d['codec']} / "
                              f"{d['other_codec']} {d['file_type']} {d['metric']} in "
                              f"{d['source_table']} or {d['other_table']}")
        key = (d["codec"], d["file_type"], d["metric"])
        out[key if table is not None else (d["source_table"], *key)] = (
            f"{d['codec']} on {d['file_type']}, {d['metric']} {mine['display']}: {d['why']} "
            f"({d['other_label']}: {other['display']})")
    return out
