"""Which tables, figures and files a study produces, decided once from its model.

The workflow iterates these lists (as showyourwork's tree); no rule or script
decides for itself whether a figure or table exists.
"""

from __future__ import annotations

import csv
import glob
import hashlib
import json
import os
from pathlib import Path
from typing import TextIO

from wattzip.analysis.reference import DISAGREEMENTS
from wattzip.model import plan, repeat_design
from wattzip.model.study import Study
from wattzip.workload import codec_registry

ANALYSIS_TABLES = ("summary", "breakeven", "esav", "correlation", "claims", "comparison",
                   "pareto", "model_check")
PER_FILE_TYPE_FIGURES = ("energy", "time", "et")  # not an argv: see tests/test_envs.py
# Each reproduced break-even table: the original it stands beside, its metrics, its title.
BREAKEVEN_ORIGINALS = {
    "server": ("systor09_table4_breakeven_server", ["E", "ET"], "SYSTOR '09 Table 4, server"),
    "desktop": ("systor09_table5_breakeven_desktop", ["E", "ET"],
                "SYSTOR '09 Table 5, desktop"),
    "slides_server": ("systor09_slides_breakeven_server", ["E", "T"],
                      "SYSTOR '09 slides, server"),
    "slides_desktop": ("systor09_slides_breakeven_desktop", ["E", "T"],
                       "SYSTOR '09 slides, desktop"),
    "slides_laptop": ("systor09_slides_breakeven_laptop", ["E", "T"],
                      "SYSTOR '09 slides, laptop"),
}


PACKAGE = Path(__file__).resolve().parent.parent


def report_code(workflow_dir: str | os.PathLike, package: Path = PACKAGE) -> str:
    """A digest of the code that turns runs into the report: every file of this package
    (its modules and data) and of the workflow's scripts/. The rules from the analysis to
    the text carry it as a param, so any change to that code makes the study's tables,
    figures and text again, and no cell is left as older code set it: Snakemake sees a
    rule's own lines, not the scripts it runs nor the modules they import
    (snakemake/snakemake#2192). Measured runs carry no such param: code never measures again."""
    digest = hashlib.sha256()
    for root in (package, Path(workflow_dir) / "scripts"):
        files = sorted(p for p in root.rglob("*")
                       if p.is_file() and "__pycache__" not in p.parts)
        for path in files:
            name = f"{root.name}/{path.relative_to(root).as_posix()}"
            digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def has_hpc14(study: Study) -> bool:
    """Filesystem compression or a duty cycle: HPC '14's tables go into the report."""
    return any(codec_registry.get(c).filesystem for c in study.codecs) or bool(study.duty)


def has_level_sweep(study: Study) -> bool:
    """True when some tool runs at three or more levels (SYSTOR '11 sweep)."""
    levels: dict[str, set] = {}
    for codec in codec_registry.resolve(study.config["codecs"]):
        if codec.level.isdigit():
            levels.setdefault(codec.tool, set()).add(codec.level)
    return any(len(v) >= 3 for v in levels.values())


def timeline(study: Study) -> dict:
    """Which runs the power/I-O timeline shows: a few codecs on text (or the first type)."""
    file_type = "text" if "text" in study.file_types else study.file_types[0]
    preferred = [c for c in ("gz-9", "bz-9", "lzo-1") if c in study.codecs]
    return {"file_type": file_type, "codecs": (preferred or study.codecs)[:3]}


def testbed_figure_kinds(study: Study, own: bool) -> list[str]:
    """The whole-testbed figures: every testbed's, and those only the study's own
    testbeds have (their traces, factors and levels are this config's)."""
    kinds = ["esav", "ratio", "tradeoff", "pareto_energy", "pareto_time"]
    if not own:
        return kinds
    kinds += ["levels"] if has_level_sweep(study) else []
    kinds.append("timeline")
    kinds += [f"factor_{f}" for f in study.varied_factors]
    return kinds + (["bandwidth"] if "bandwidth" in study.varied_factors else [])


def tables_of_testbed(study: Study) -> list[str]:
    """A testbed's LaTeX tables (rule tables_of_testbed, wattzip.report.tex_tables)."""
    tables = ["ratios", "claims", "provenance"]
    tables += [f"breakeven_{name}" for name in BREAKEVEN_ORIGINALS]
    return tables + (["hpc14"] if has_hpc14(study) else [])


def paper_tables(study: Study) -> list[str]:
    """The first testbed's LaTeX tables the report inputs, and its appendix."""
    return tables_of_testbed(study) + ["appendix"]


def measured_outputs(study: Study) -> list[str]:
    """What the measurement stage leaves per testbed beside the analysis tables."""
    names = ["runs.csv", "overlap.txt", "provenance.json", "manifest.json",
             "plan/estimate.json", "appendix.md"]
    return names + (["crosscheck.csv"] if study.crosscheck["codecs"] else [])


def copied_in_testbeds(measured: str, own: list[str], out: TextIO) -> list[str]:
    """Testbeds of this study whose runs were copied in beside this machine's: the
    folders of `measured` (results/<study>/) whose runs.csv names that folder's testbed
    in every record. Any other folder holding a runs.csv (a backup, `tb.bak`; a copy
    renamed; a torn file) is no testbed: it is said, never reported."""
    found = []
    for path in sorted(glob.glob(os.path.join(glob.escape(measured), "*", "runs.csv"))):
        folder = os.path.dirname(path)
        name = os.path.basename(folder)
        if name in own:
            continue
        try:
            with open(path, newline="") as f:
                named = {row.get("testbed") for row in csv.DictReader(f)}
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            named = {f"none readable ({exc})"}
        if named == {name}:
            found.append(name)
        else:
            print(f"wattzip: {folder}/ is not a testbed's folder (its runs.csv names "
                  f"testbed {', '.join(sorted(map(str, named))) or 'none'}): not reported. "
                  "A testbed's runs copied in keep its name: results/<study>/<testbed>/",
                  file=out)
    return found


def old_layout_folders(results: str, study: Study) -> list[str]:
    """Folders of results/ in the layout before studies had names: results/<name>/runs.csv."""
    return sorted(os.path.dirname(p) for p in glob.glob(f"{results}/*/runs.csv"))


def warn_old_layout(results: str, study: Study, out: TextIO) -> None:
    """Say how to move results of the old layout; they are never read as this study's."""
    for folder in old_layout_folders(results, study):
        name = os.path.basename(folder)
        testbed = study.first_testbed
        print(f"wattzip: {folder}/ holds results in the layout before studies had names "
              f"(results/<testbed>/); they are not part of any report now. To keep them as "
              f"study '{name}' on testbed '{testbed}': mkdir -p results/{name}.old && "
              f"mv {folder} results/{name}.old/{testbed} && mv results/{name}.old {folder}",
              file=out)


def print_study_summary(study: Study, estimate_path: str, out: TextIO) -> None:
    """The study's size in one paragraph, and how long it takes here once planned."""
    testbed = study.first_testbed
    measured = [j for j in study.jobs(testbed) if j.file_type != "dutycycle"]
    # A write and a read per arm and repeat, each arm as the plan counts it.
    arms = [p for _, p in plan.measured_arms(study, measured)]
    lo, hi = sum(2 * p.min for p in arms), sum(2 * p.max for p in arms)
    runs = f"{lo}" if lo == hi else f"{lo}-{hi}"
    plain = ("(+ one plain arm per setting and file type)" if study.moderated_design else
             "(each with its own plain arm)" if study.verdict_design else "(+ plain baseline)")
    duty = ""
    if study.duty:
        duty = (f", and {len(study.settings) * len(study.duty.codecs)} duty-cycle job(s) of "
                f"{study.duty.phases} write phases each")
    print(f"wattzip study '{study.name}' on testbed '{testbed}': {len(study.file_types)} "
          f"file types x {len(study.codecs)} codecs {plain} x {len(study.settings)} "
          f"setting(s) = {len(measured)} measurement jobs, {runs} measured runs of "
          f"{study.config['file_size']} files{duty}; primary setting {study.primary.name} "
          f"({study.primary_rule}); rehearsed first in {study.root('rehearsal')}/",
          file=out)
    if os.path.exists(estimate_path):
        with open(estimate_path) as f:
            print(f"estimate: {json.load(f)['text']}", file=out)
    else:
        print("estimate: `.venv/bin/wattzip plan` says how long this takes here (a short "
              "pilot; the workflow runs it first)", file=out)


def report_params(study: Study, testbeds: list[str], stage: str, fig_dir: str) -> dict:
    """The study's design as the report's macros and passages state it."""
    return {
        "stage": stage, "study": study.name, "study_description": study.description,
        "testbed": study.first_testbed, "fig_dir": f"{fig_dir}/{study.first_testbed}",
        "testbeds_figure": f"{fig_dir}/testbeds.pdf" if len(testbeds) > 1 else "",
        "file_size": study.config["file_size"], "file_types": study.file_types,
        "codecs": study.codecs, "unmeasured_cells": study.scope.describe(),
        "repeats": study.repeats,
        "repeat_design": repeat_design.describe(study),
        "drift_check": repeat_design.drift_check(study), **repeat_design.intervals(study),
        "varied_factors": study.varied_factors, "factor_values": study.factor_values(),
        "emulated_input_layouts": study.emulated_input_layouts(),
        "hpc14": has_hpc14(study), "testbeds": testbeds,
        "descriptions": {t: study.testbeds[t].description for t in study.testbeds},
        "primary": study.primary.name, "primary_rule": study.primary_rule,
        "emulated_machine": study.machine.describe(),
        "primary_flush": study.primary.medium_spec.get("flush", "fsync"),
        "paper_setup": study.config["paper_setup"], "departures": study.departures(),
    }


class Tree:
    """One tree of a study's outputs: the measured one (results/<study>/, figures in
    figures/<study>/) or the rehearsal's (rehearsal/<study>/, its figures inside). The
    paths of everything the analysing and reporting rules read and write in it."""

    def __init__(self, study: Study, stage: str, copied_in: list[str] = ()):
        self.study, self.stage = study, stage
        self.root = study.root(stage)
        self.figs = (f"figures/{study.name}" if stage == "results"
                     else f"{self.root}/figures")
        # The rehearsal simulates the study's own testbeds; results of other machines
        # copied into results/<study>/ join the measured report only.
        self.testbeds = list(study.testbeds) + (list(copied_in) if stage == "results" else [])

    def file_types(self, testbed: str) -> list[str]:
        """A testbed's file types: the study's, or those of a copied-in runs.csv."""
        if testbed in self.study.testbeds:
            return self.study.file_types
        with open(f"{self.root}/{testbed}/runs.csv", newline="") as f:
            return sorted({row["file_type"] for row in csv.DictReader(f)})

    def figures(self, testbed: str) -> list[str]:
        kinds = testbed_figure_kinds(self.study, testbed in self.study.testbeds)
        out = [f"{self.figs}/{testbed}/{kind}.pdf" for kind in kinds]
        return out + [f"{self.figs}/{testbed}/{kind}_{ftype}.pdf"
                      for kind in PER_FILE_TYPE_FIGURES for ftype in self.file_types(testbed)]

    def paper_inputs(self) -> list[str]:
        """What the report \\inputs: its first testbed's tables and figures."""
        first = self.study.first_testbed
        out = [f"{self.root}/generated/{first}/{t}.tex" for t in paper_tables(self.study)]
        out += [f"{self.root}/generated/testbeds.tex", f"{self.root}/generated/macros.tex"]
        if len(self.testbeds) > 1:  # every testbed side by side, beside their table
            out.append(f"{self.figs}/testbeds.pdf")
        return out + self.figures(first)

    def outputs(self) -> list[str]:
        """Every analysis table, figure and the report of the tree."""
        out = [f"{self.root}/{t}/{name}.csv" for t in self.testbeds for name in ANALYSIS_TABLES]
        for testbed in self.testbeds:
            out += self.figures(testbed)
        if len(self.testbeds) > 1:
            out.append(f"{self.figs}/testbeds.pdf")
        return out + [f"{self.root}/paper.pdf"]

    def table_inputs(self, testbed: str) -> dict[str, str]:
        """What a testbed's tables are made from: its analysis tables, and the originals'
        each by its name in paper/reference/."""
        inputs = {name: f"{self.root}/{testbed}/{name}.csv"
                  for name in ("summary", "breakeven", "claims", "provenance")}
        originals = ["systor09_table3_ratios", "systor11_table1_ratios", DISAGREEMENTS]
        originals += [reference for reference, _, _ in BREAKEVEN_ORIGINALS.values()]
        if has_hpc14(self.study):
            originals += ["hpc14_table2_patterns", "hpc14_table3_write_only",
                          "hpc14_table4_write_compute"]
        return inputs | {name: f"paper/reference/{name}.csv" for name in originals}

    def macro_inputs(self) -> dict:
        base = f"{self.root}/{self.study.first_testbed}"
        inputs: dict = {name: f"{base}/{name}.csv" for name in
                        ("summary", "breakeven", "correlation", "claims", "runs",
                         "model_check")}
        inputs.update(provenance=f"{base}/provenance.json", manifest=f"{base}/manifest.json",
                      idle=f"{base}/idle/{self.study.primary.name}.json",
                      estimate=f"{base}/plan/estimate.json",
                      table3="paper/reference/systor09_table3_ratios.csv",
                      breakeven_originals=[f"paper/reference/{reference}.csv" for
                                           reference, _, _ in BREAKEVEN_ORIGINALS.values()],
                      original_design="paper/reference/systor09_design.csv",
                      summaries=[f"{self.root}/{t}/summary.csv" for t in self.testbeds])
        if self.study.crosscheck["codecs"]:
            inputs["crosscheck"] = f"{base}/crosscheck.csv"
        return inputs

    def report_params(self) -> dict:
        """The design as the report states it; its figures as the report, built in the
        tree's own folder, reaches them."""
        return report_params(self.study, self.testbeds, self.stage,
                             os.path.relpath(self.figs, self.root))
