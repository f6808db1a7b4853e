"""The cells of the HPC '14 tables beside the originals, and the tables' notes (the
originals' values in them), set here with the report's formatters (wattzip.latex);
wattzip.report.tex_tables orders and lays them out.

Tables I/II: each codec's write of a file against the plain write of the same file on
the same medium. Tables III/IV: the duty-cycle runs (write phases between compute phases).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from wattzip.analysis.reference import read_reference
from wattzip.latex import fixed_tex, interval_tex, mean_tex, number, tex
from wattzip.report import legends

WRITES = ("compress-write", "plain-write")
DUTY_OP = "write-compute"
SPREAD = (r"$\pm$: the half-width of the mean over the repeats at \HalfWidthConfidencePct{} "
          "(none where one run); a ratio to off is the ratio of the two means, with Fieller's "
          "interval at the same confidence in brackets (none where an arm has one run).")
FILESYSTEM_NOTE = (r"Ratio on disk for btrfs (compsize). CPU \% is (user + sys) / elapsed of "
                   "the writing commands; the paper's is the server's.")
DUTY_NOTE = "Power is the mean energy over the mean time."
CAPTIONS = {
    "filesystem": ("Write of each file with compression in user space or in btrfs, against "
                   "compression off (plain) on the same medium (HPC '14 Tables I and II)."),
    "duty": ("Write phases between compute phases, each run one whole workload (HPC '14 "
             "Tables III and IV)."),
}


def _quotient(a: float, b: float) -> float:
    return a / b if b else math.nan


def _identity(row: Mapping) -> dict:
    """The cells every row has: the codec (with its tool and level, by which the table
    orders it), its ratio as the analysis set it (compression_ratio_tex), whether energy
    is estimated, and whether the runs are a rehearsal's (simulated: the table then says
    so)."""
    return {"codec": row["codec"], "tool": row["tool"], "level": row["level"],
            "ratio": row["compression_ratio_tex"],
            "estimated": row["meter_method"] == "estimated",
            "simulated": row.get("simulated") == "true"}


def _against_off(row: Mapping, stem: str) -> str:
    """A ratio to off as the analysis gave it (wattzip.analysis.ratio_to_off), with
    Fieller's interval."""
    return interval_tex(row[stem], row[f"{stem}_lo"], row[f"{stem}_hi"], 2)


def filesystem_rows(summary: list[dict], duty_codecs: Iterable[str]) -> list[dict]:
    """Tables I/II: the writes of plain, of every btrfs codec and of the duty cycle's
    codecs, each against plain's write of the same file (runtime / off)."""
    writes = [r for r in summary if r["op"] in WRITES]
    off = {r["file_type"] for r in writes if r["codec"] == "plain"}
    shown = {"plain", *duty_codecs, *(r["codec"] for r in summary if r["tool"] == "btrfs")}
    return [{"file_type": r["file_type"], **_identity(r),
             "cpu_percent": mean_tex(r["mean_cpu_utilization"], r["hw_cpu_utilization"], 0,
                                     scale=100),
             "runtime_vs_off": _against_off(r, "elapsed_vs_off"),
             "energy_j": mean_tex(r["mean_energy_j"], r["hw_energy_j"], 1)}
            for r in writes if r["codec"] in shown and r["file_type"] in off]


def duty_rows(summary: list[dict]) -> list[dict]:
    """Tables III/IV: each duty-cycle run's time, mean power and energy, and its energy
    against plain's run of the same workload (energy / off)."""
    duty = [r for r in summary if r["op"] == DUTY_OP]
    return [{**_identity(r),
             "time_s": mean_tex(r["mean_elapsed_s"], r["hw_elapsed_s"], 2),
             "power_w": fixed_tex(_quotient(number(r["mean_energy_j"]),
                                            number(r["mean_elapsed_s"])), 1),
             "energy_j": mean_tex(r["mean_energy_j"], r["hw_energy_j"], 1),
             "energy_vs_off": _against_off(r, "energy_vs_off")}
            for r in duty]


def _setup(rows: list[dict]) -> str:
    return tex("; ".join(dict.fromkeys(r["setup"] for r in rows)))


def _runs(rows: list[dict]) -> str:
    """Tables III/IV's runs: time, power and energy of each algorithm."""
    return "; ".join(f"{tex(r['algorithm'])} {fixed_tex(r['time_s'], 0)} s, "
                     f"{fixed_tex(r['power_w'], 0)} W, {fixed_tex(r['energy_wh'], 1)} Wh"
                     for r in rows)


def originals(table2, table3, table4) -> dict[str, str]:
    """The originals' values for the tables' notes, one sentence per table: Table II's
    patterns; Table III (write only) and Table IV (with computation, idle timer off)."""
    _, patterns = read_reference(table2)
    _, write_only = read_reference(table3)
    _, with_computation = read_reference(table4)
    pattern_cells = "; ".join(
        f"{tex(r['pattern'])} {tex(r['algorithm'])} {fixed_tex(r['ratio'], 2)} / "
        f"{fixed_tex(r['cpu_util_pct'], 1)}\\% / {fixed_tex(r['runtime_ratio'], 2)}"
        for r in patterns)
    computing = [r for r in with_computation if r["idle3_timer"] == "disabled"]
    return {"filesystem": f"Originals ({_setup(patterns)}): {pattern_cells}.",
            "duty": f"Originals ({_setup(write_only)}): write only {_runs(write_only)}; "
                    f"with computation {_runs(computing)}."}


def notes_rows(originals: Mapping[str, str], filesystem: list[dict],
               duty: list[dict]) -> list[dict]:
    """Each table's caption and note: what its cells are, the originals' values, and
    whether its energy is estimated."""
    return [{"part": part, "caption": CAPTIONS[part], "text": legends.note(
                lead, SPREAD, originals[part],
                legends.estimated_energy(any(r["estimated"] for r in rows)))}
            for part, lead, rows in (("filesystem", FILESYSTEM_NOTE, filesystem),
                                     ("duty", DUTY_NOTE, duty))]
