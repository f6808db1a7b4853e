"""Run records: the contract between measure and analyze (design brief).

Journals hold one JSON object per run; runs.csv holds the same runs flat, the
factors spread into ``factor_<name>`` columns.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from wattzip import resources
from wattzip.errors import RecordError
from wattzip.run_record import (
    BOOLEAN_COLUMNS,
    FACTOR_PREFIX,
    NUMERIC_COLUMNS,
    RENAMED,
    RUN_COLUMNS,
    RUN_REQUIRED,
    SCHEMA_VERSION,
    RunRecord,
    flatten,
)

# The run record and runs.csv's columns: wattzip.run_record, re-exported here.
__all__ = ["BOOLEAN_COLUMNS", "FACTOR_PREFIX", "NUMERIC_COLUMNS", "RUN_COLUMNS", "RUN_REQUIRED",
           "SCHEMA_VERSION", "RunRecord", "flatten"]


def read_journal(path: str | os.PathLike, key: str | None = None,
                 required: tuple[str, ...] = ()) -> list[dict]:
    """The entries of one journal (those of `key` only, when given), each checked.

    The one reader of every journal (runs, idle windows). A last line without its
    newline is a write a kill cut short: it is left out, and the reader says so. Any
    other line that is not a JSON object holding the `required` fields is an error
    naming the file and the line: nothing is dropped silently.
    """
    p = Path(path)
    if not p.exists():
        return []
    data = p.read_bytes()
    lines = data.split(b"\n")
    out = []
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except (json.JSONDecodeError, UnicodeDecodeError):
            if number == len(lines):  # no newline after it: torn by a kill mid-write
                print(f"wattzip: {p}, line {number}: a torn last line (a write cut short "
                      "by a kill) is left out", file=sys.stderr)
                continue
            raise RecordError(f"{p}, line {number}: not a JSON record ({raw[:60]!r}); the "
                              "journal is damaged: move it aside to measure this job again, "
                              "or mend that line") from None
        if not isinstance(entry, dict):
            raise RecordError(f"{p}, line {number}: not a JSON object")
        if key is not None and entry.get("job_key", entry.get("key")) != key:
            continue  # another key's entry: its own reader checks its fields
        missing = [f for f in required if f not in entry]
        if missing:
            raise RecordError(f"{p}, line {number}: the record has no {', '.join(missing)}; "
                              "it was not written by this version of wattzip, or was edited")
        out.append(entry)
    return out


def append_journal(path: str | os.PathLike, entry: dict) -> None:
    """Append one entry durably. A torn last line (a write a kill cut short: its run is
    measured again, since only whole records count) is cut off first, and said so. A
    symbolic link at its name is never followed: another user's would turn root's
    appends against the file it names."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise RecordError(f"{path}: the journal cannot be opened ({exc.strerror}); a "
                          "symbolic link at its name is never followed: remove it") from None
    with os.fdopen(fd, "r+b") as f:
        data = f.read()
        if data and not data.endswith(b"\n"):
            keep = data.rfind(b"\n") + 1
            print(f"wattzip: {path}: cut off a torn last line ({data[keep:keep + 60]!r}), a "
                  "write a kill cut short; that run is measured again", file=sys.stderr)
            f.truncate(keep)
        f.seek(0, os.SEEK_END)
        f.write((json.dumps(entry, sort_keys=True) + "\n").encode())
        f.flush()
        os.fsync(f.fileno())


def last_measurement(entries: list[dict]) -> list[dict]:
    """A run journal's entries of its last measurement (the job_key of its last entry):
    the runs its job's output holds as verified. The runs of a measurement a drift made
    the job measure again (flagged in the output), and those of another meter identity
    or job setup left in the journal, are not among them."""
    if not entries:
        return []
    key = entries[-1].get("job_key")
    return [e for e in entries if e.get("job_key") == key]


def read_jsonl(paths: Iterable[str | os.PathLike]) -> list[dict]:
    """Every run of some job outputs or journals."""
    return [r for path in paths for r in read_journal(path, required=RUN_REQUIRED)]


def read_json(path: str | os.PathLike, what: str, required: tuple[str, ...] = ()) -> dict:
    """A small JSON file (a manifest, an idle calibration), or an error naming it."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as exc:
        raise RecordError(f"{path}: cannot read the {what}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: the {what} is not JSON (line {exc.lineno}: {exc.msg}); "
                          "delete it so that the workflow makes it again") from None
    missing = [f for f in required if f not in data]
    if missing:
        raise RecordError(f"{path}: the {what} has no {', '.join(missing)}; delete it so "
                          "that the workflow makes it again")
    return data


def write_runs_csv(records: list[dict], out: str | os.PathLike) -> int:
    rows = [flatten(r) for r in records]
    extra = sorted({k for row in rows for k in row} - set(RUN_COLUMNS))
    write_csv_atomically(rows, out, list(RUN_COLUMNS) + extra)
    return len(rows)


def write_csv_atomically(rows: list[dict], out: str | os.PathLike, columns: list[str],
                         cell=None) -> None:
    """Write a table beside its place and rename it there: a reader (or a rerun after a
    kill) sees the old file or the whole new one, never a torn one."""
    cell = cell or _cell
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with open(partial, "w", newline="", encoding="utf-8", opener=nofollow) as f:
        writer = csv.DictWriter(f, columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: cell(row.get(k)) for k in columns})
        f.flush()
        os.fsync(f.fileno())
    os.replace(partial, out)


def write_table(rows: list[dict], path: str | os.PathLike) -> str:
    """An analysis table: every key of any row a column, floats to 6 significant digits,
    infinities as R's fread reads them, NaN and None empty; written atomically."""
    columns: list[str] = []
    for row in rows:
        columns += [k for k in row if k not in columns]
    write_csv_atomically(rows, path, columns, table_cell)
    return str(path)


def table_cell(value):
    if isinstance(value, float):
        if math.isinf(value):
            return "Inf" if value > 0 else "-Inf"
        return "" if math.isnan(value) else f"{value:.6g}"
    return _cell(value)


def nofollow(path: str, flags: int) -> int:
    """An opener for open(): a symbolic link at the name, planted by another user in a
    folder they can write, makes the open fail instead of writing where it points."""
    return os.open(path, flags | os.O_NOFOLLOW, 0o644)


def check_writable(label: str, path: str | os.PathLike) -> None:
    """That a file can be written where it goes, as it will be (beside its place, then
    renamed), tried and removed: a file that cannot be written fails before the work
    that makes it, not after."""
    path = os.fspath(path)
    if (os.path.isdir(path) or not os.path.basename(path)
            or not os.path.isdir(os.path.dirname(path) or ".")):
        raise RecordError(f"{label} {path}: not a file in an existing folder")
    partial = path + ".partial"
    try:
        with open(partial, "w", opener=nofollow):
            pass
        os.unlink(partial)
    except OSError as exc:
        raise RecordError(f"{label} {path}: cannot be written there ({exc.strerror})") from None


def write_text_atomically(path: str | os.PathLike, text: str) -> None:
    """A small file (JSON) written beside its place and renamed there, never torn."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w", encoding="utf-8", opener=nofollow) as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(partial, path)


# The factors of SYSTOR '11's design as every table's columns carry them (the bandwidth
# in bytes/s), in the order a setting's name lists them (data/factors.csv).
FACTOR_COLUMNS = tuple(f["column"] for f in resources.factor_table())
SETTINGS_COLUMNS = ("setting", *FACTOR_COLUMNS, "dutycycle", "primary")


def read_settings_csv(path: str | os.PathLike) -> dict[str, dict]:
    """settings.csv (the study model's settings) by setting name, typed."""
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = set(SETTINGS_COLUMNS) - set(reader.fieldnames or [])
        if missing:
            raise RecordError(f"{path}: no column(s) {sorted(missing)}; it is not a "
                             "settings table written by the workflow (rule settings_table)")
        out = {}
        for row in reader:
            row["copies"] = int(row["copies"])
            bw = row["bandwidth_bytes_per_s"]
            row["bandwidth_bytes_per_s"] = int(bw) if bw else None
            row["primary"] = row["primary"] == "true"
            out[row["setting"]] = row
    if sum(r["primary"] for r in out.values()) != 1:
        raise RecordError(f"{path}: exactly one setting must be primary")
    return out


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def read_runs_csv(path: str | os.PathLike) -> list[dict]:
    """runs.csv back into records with numbers and booleans restored; a damaged row (a
    torn copy, an edit) is an error naming the file, line and column."""
    out = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        for line, row in enumerate(reader, 2):
            if None in row or None in row.values():
                raise RecordError(f"{path}, line {line}: {len(reader.fieldnames)} columns "
                                  "expected; the file is torn or edited: make it again "
                                  "(snakemake deletes and rewrites it from the journals)")
            rec: dict = {}
            for k, v in ((RENAMED.get(k, k), v) for k, v in row.items()):
                try:
                    if v == "":
                        rec[k] = None
                    elif k in NUMERIC_COLUMNS:
                        rec[k] = float(v) if "." in v or "e" in v.lower() else int(v)
                    elif k in BOOLEAN_COLUMNS:
                        if v not in ("true", "false"):
                            raise ValueError(v)
                        rec[k] = v == "true"
                    else:
                        rec[k] = v
                except ValueError:
                    raise RecordError(f"{path}, line {line}, column {k}: {v!r} is not a "
                                      f"{'number' if k in NUMERIC_COLUMNS else 'boolean'}"
                                      ) from None
            if rec.get("schema_version") is None:  # a runs.csv from before the version
                rec["schema_version"] = 1
            out.append(rec)
    return out


def load_runs(paths: Iterable[str | os.PathLike]) -> list[dict]:
    """Runs from any mix of runs.csv and journal .jsonl files, flattened."""
    rows = []
    for path in paths:
        if str(path).endswith(".csv"):
            rows.extend(read_runs_csv(path))
        else:
            rows.extend(flatten(r) for r in read_jsonl([path]))
    return rows


def check_no_overlap(rows: list[dict], log) -> str:
    """Every pair of runs whose measured intervals overlap, logged, then an error; or the
    line that says there were none."""
    overlaps = find_overlaps(rows)
    for x, y in overlaps:
        log(f"OVERLAP: {x['file_type']}/{x['codec']} {x['op']} r{x['repeat']} "
            f"[{x['started_at']} .. {x['ended_at']}] and {y['file_type']}/{y['codec']} "
            f"{y['op']} r{y['repeat']} [{y['started_at']} .. {y['ended_at']}]")
    if overlaps:
        raise RecordError(f"{len(overlaps)} pair(s) of measured runs overlap in time; their "
                          "numbers are not trustworthy. Run measurement jobs one at a time")
    return f"no overlap among {len(rows)} runs"


def find_overlaps(records: list[dict]) -> list[tuple[dict, dict]]:
    """Pairs of runs of one testbed whose measured intervals overlap."""
    def stamp(s: str) -> float:
        return dt.datetime.fromisoformat(s).timestamp()

    timed = sorted(
        (stamp(r["started_at"]), stamp(r["ended_at"]), r)
        for r in records if r.get("started_at") and r.get("ended_at")
    )
    overlaps = []
    by_testbed: dict[str, list] = {}
    for item in timed:
        by_testbed.setdefault(item[2].get("testbed"), []).append(item)
    for items in by_testbed.values():
        latest_end, latest = None, None
        for start, end, rec in items:
            if latest_end is not None and start < latest_end:
                overlaps.append((latest, rec))
            if latest_end is None or end > latest_end:
                latest_end, latest = end, rec
    return overlaps


def measured_span(runs: Iterable[dict]) -> tuple[float, float, dt.datetime | None,
                                                dt.datetime | None]:
    """The seconds inside the runs' measured regions, the seconds from the first start to
    the last end, and those two moments (0, 0, None, None without a timed run): read once
    for the report's time, its date and each claim's duration."""
    timed = [r for r in runs if r.get("started_at") and r.get("ended_at")]
    if not timed:
        return 0.0, 0.0, None, None
    first = min(dt.datetime.fromisoformat(r["started_at"]) for r in timed)
    last = max(dt.datetime.fromisoformat(r["ended_at"]) for r in timed)
    return (sum(float(r["elapsed_s"]) for r in timed), (last - first).total_seconds(),
            first, last)


STAGES = {"results": False, "rehearsal": True}  # each tree, and whether its runs are simulated


def check_stage(runs: list[dict], stage: str) -> bool:
    """Whether the runs are a rehearsal's (simulated), read from the runs themselves; runs
    of the other kind than the tree `stage` holds are refused, never analysed or reported:
    rehearsal/ holds simulated runs, results/ measured ones, and the two never mix."""
    want = STAGES[stage]
    kinds = {str(r.get("simulated", "")).lower() == "true" for r in runs}
    if kinds - {want}:
        found = "measured runs" if want else "SIMULATED runs of a rehearsal"
        raise RecordError(f"the {stage} tree holds {found}: measured and simulated runs "
                          "never share an analysis or a report (rehearsal/ holds the "
                          "simulated ones, results/ the measured ones)")
    return want


def check_testbed(runs: list[dict], testbed: str, paths: list[str]) -> None:
    """A testbed's folder holds that testbed's runs: a results folder copied in from
    another machine under a new name would label one machine's runs with another's."""
    found = sorted({str(r.get("testbed")) for r in runs} - {testbed})
    if found:
        raise RecordError(
            f"{', '.join(map(str, paths))}: runs of testbed {', '.join(found)} in the folder "
            f"of testbed {testbed}. A folder copied from another machine keeps its "
            f"testbed's name: results/<study>/{found[0]}/ (or rename the testbed in its "
            "runs.csv and settings.csv as well)")
