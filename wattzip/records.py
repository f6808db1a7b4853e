"""Run records: the contract between measure and analyze (design brief).

Journals hold one JSON object per run; runs.csv holds the same runs flat, the
factors spread into ``factor_<name>`` columns.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import os
from collections.abc import Iterable
from pathlib import Path

from wattzip.errors import RecordError

RUN_COLUMNS = (
    "testbed", "setting", "file_type", "input_bytes", "input_sha256", "codec", "tool", "level",
    "mount_option",
    "op", "repeat", "started_at", "ended_at", "elapsed_s", "meter_interval_s", "user_s",
    "sys_s", "wait_s", "cpu_utilization", "energy_j", "idle_power_w", "energy_passive_j",
    "energy_active_j", "meter_source", "meter_scope", "meter_method", "meter_flags", "samples",
    "output_bytes", "verified", "exit_code", "failure", "own_blocks", "tools_warmed",
    "threads", "copies", "phases", "copy_buffer_bytes", "medium_kind", "flush", "target_device",
    "target_fs", "mount_options", "loop_direct_io", "scheduler_disk", "io_scheduler_in_effect",
    "governor_in_effect",
    "bandwidth_bytes_per_s", "hostname", "slurm_node", "slurm_job_id", "tool_version", "trace",
)
NUMERIC_COLUMNS = frozenset({
    "input_bytes", "repeat", "elapsed_s", "meter_interval_s", "user_s", "sys_s", "wait_s",
    "cpu_utilization", "energy_j", "idle_power_w", "energy_passive_j", "energy_active_j",
    "samples", "output_bytes", "exit_code", "threads", "copies", "phases", "copy_buffer_bytes",
    "bandwidth_bytes_per_s",
})
BOOLEAN_COLUMNS = frozenset({"verified", "own_blocks", "tools_warmed", "loop_direct_io"})
FACTOR_PREFIX = "factor_"


def read_jsonl(paths: Iterable[str | os.PathLike]) -> list[dict]:
    runs = []
    for path in paths:
        for line in Path(path).read_text().splitlines():
            if line.strip():
                try:
                    runs.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a torn last line from a killed job
    return runs


def flatten(record: dict) -> dict:
    row = {k: record.get(k) for k in RUN_COLUMNS}
    factors = record.get("factors") or {}
    row["setting"] = factors.get("setting", record.get("setting", "default"))
    row["copies"] = factors.get("copies", record.get("copies", 1))
    for name, value in sorted(factors.items()):
        if name not in ("setting",):
            row[FACTOR_PREFIX + name] = value
    return row


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
    with open(partial, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, columns, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: cell(row.get(k)) for k in columns})
        f.flush()
        os.fsync(f.fileno())
    os.replace(partial, out)


def write_text_atomically(path: str | os.PathLike, text: str) -> None:
    """A small file (JSON) written beside its place and renamed there, never torn."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(partial, path)


SETTINGS_COLUMNS = ("setting", "medium", "io_scheduler", "governor", "copies",
                    "bandwidth_bytes_per_s", "dutycycle", "primary")


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
    """runs.csv back into records with numbers and booleans restored."""
    out = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            rec: dict = {}
            for k, v in row.items():
                if v == "":
                    rec[k] = None
                elif k in NUMERIC_COLUMNS:
                    rec[k] = float(v) if "." in v or "e" in v.lower() else int(v)
                elif k in BOOLEAN_COLUMNS:
                    rec[k] = v == "true"
                else:
                    rec[k] = v
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
