"""The package's own data: the config schema, the claims registry and the original papers'
tables, read with importlib.resources so that an installed wattzip never needs a checkout.

The workflow reaches the same files through the checkout's links (config/schema.yaml,
paper/reference/, scripts/factors.csv, scripts/labels.csv, scripts/tool_order.csv), so
the package, the rules and the R scripts read one copy.
"""

from __future__ import annotations

import copy
import csv
import functools
import io
import os
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import yaml

# A folder of reference tables: the package's own, or one a caller names (--reference).
ReferenceDir = str | os.PathLike | Traversable


def data() -> Traversable:
    return resources.files("wattzip") / "data"


def factor_table() -> list[dict[str, str]]:
    """The study's factors, in the order a setting's name lists them (data/factors.csv):
    the config's key, the column every run and table carries, the report's title, and
    the factor's part of a setting's name. The R scripts read the same file
    (scripts/theme.R)."""
    text = (data() / "factors.csv").read_text(encoding="utf-8")
    return list(csv.DictReader(io.StringIO(text)))


@functools.cache
def operations() -> dict[str, dict[str, str]]:
    """Every operation a run measures, by name, in the order tables list them
    (data/operations.csv: the one place they are declared): its arm (plain, codec, or the
    duty cycle), its direction (write, read), its region (io: cold caches and the flush
    inside it, SYSTOR '09's; codec: the codec alone, from the page cache to /dev/null;
    duty), the I/O operation a codec-only one splits, and what it does. The R scripts read
    the same file through scripts/operations.csv."""
    text = (data() / "operations.csv").read_text(encoding="utf-8")
    return {row["op"]: row for row in csv.DictReader(io.StringIO(text))}


def operations_where(**wanted: str) -> tuple[str, ...]:
    """The operations whose columns hold the wanted values, in the table's order:
    operations_where(region="io", arm="plain") is ("plain-write", "plain-read")."""
    return tuple(op for op, row in operations().items()
                 if all(row[k] == v for k, v in wanted.items()))


@functools.cache
def tool_order() -> list[str]:
    """The tools in the paper's order, by which every table and figure orders the codecs
    (data/tool_order.csv; the R scripts read the same file through scripts/tool_order.csv)."""
    text = (data() / "tool_order.csv").read_text(encoding="utf-8")
    return [row["tool"] for row in csv.DictReader(io.StringIO(text))]


@functools.cache
def label(name: str) -> str:
    """The words that mark what is not measured ("simulated", "estimated"), as every
    figure, table, note and record says them (data/labels.csv; the R scripts read the
    same file through scripts/labels.csv)."""
    text = (data() / "labels.csv").read_text(encoding="utf-8")
    return {row["label"]: row["text"] for row in csv.DictReader(io.StringIO(text))}[name]


def load_yaml(text: str):
    """YAML as yaml.safe_load parses it (the same safe subset), by libyaml where PyYAML has
    it: about 8x faster. Every wattzip command reads the schema, and every analysis the
    claims, so the pure-Python parser cost each of them about a second."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


@functools.cache
def _shipped_schema() -> dict:
    """The package's schema, parsed once per process (read-only: callers get copies)."""
    return load_yaml((data() / "schema.yaml").read_text(encoding="utf-8"))


def load_schema(path: str | Path | None = None) -> dict:
    """The config schema: the package's own (package data), or the file at `path`."""
    if path is None:
        return copy.deepcopy(_shipped_schema())
    return load_yaml(Path(path).read_text())


def schema_default(key: str):
    """The schema's default of a config key ("verdict.margin"): the one place the command
    line's defaults come from, so a command run alone decides as a study would."""
    node = _shipped_schema()
    for part in key.split("."):
        node = node["properties"][part]
    return copy.deepcopy(node["default"])


def reference_dir(given: ReferenceDir | None = None) -> Traversable:
    """The folder of the original papers' tables and claims.yaml: `given`, or the package's."""
    if given is None:
        return data() / "reference"
    return Path(given) if isinstance(given, str | os.PathLike) else given


def reference_file(name: str, given: ReferenceDir | None = None) -> Traversable:
    """One file of the reference folder, e.g. "claims.yaml" or "systor09_table3_ratios.csv"."""
    return reference_dir(given) / name
