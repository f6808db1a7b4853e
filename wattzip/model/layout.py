"""The workflow's file tree and its rules' lookups, decided once from the study's model.

Which tables, figures and files a study produces: the workflow iterates these lists
(as showyourwork's tree); no rule or script decides for itself whether a figure or
table exists. RuleLookups answers what the rules look up by their wildcards (a
testbed's meter, a tree's inputs; a job's spec the rules take from the model itself,
Study.job_spec_text), so that `rules/common.smk` holds no decisions and every lookup
can be tested without Snakemake. Input functions take the rule's wildcards; params
functions take `input` too, as Snakemake passes them.
"""

from __future__ import annotations

import csv
import functools
import glob
import hashlib
import json
import os
import re
import shlex
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from wattzip.machine import system
from wattzip.model import plan, repeat_design
from wattzip.model.jobs import Job
from wattzip.model.study import Study
from wattzip.workload import codec_registry, pinned

ANALYSIS_TABLES = ("summary", "breakeven", "esav", "correlation", "claims", "comparison",
                   "pareto", "model_check", "codec_io", "lzbench", "threads")
# The whole testbed's figures drawn by a rule of their own, when the study has what they
# show (testbed_figure_kinds); every other scripts/fig_<name>.R is drawn by rule
# figures_per_file_type or figures_of_testbed, as its header line says (figure_scripts).
OWN_RULE_FIGURES = ("levels", "timeline", "factor", "threads", "bandwidth", "testbeds")
FIGURE_HEADER = "# wattzip-figure:"
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
SCRIPTS = PACKAGE.parent / "scripts"  # the workflow's, beside the package in a checkout


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


def figure_scripts(scripts: Path = SCRIPTS) -> dict[str, dict[str, dict]]:
    """The figures of scripts/fig_<name>.R that no rule of its own draws, by what each is
    drawn for: "file_type" (<name>_<file type>.pdf, rule figures_per_file_type) or
    "testbed" (<name>.pdf, rule figures_of_testbed); each figure by its name, with its
    script and the wildcards it adds. A script is its own declaration: a line

        # wattzip-figure: per=file_type metric=energy,et name={metric}

    says it is drawn per file type (per=testbed, the default: once per testbed), once per
    metric (the `metric` wildcard it reads) and named by `name` ({metric}: the metric;
    without it, <name>_<metric>, or <name> without metrics). No line: once per testbed."""
    out: dict[str, dict[str, dict]] = {"file_type": {}, "testbed": {}}
    for path in sorted(scripts.glob("fig_*.R")):
        name = path.stem.removeprefix("fig_")
        if name in OWN_RULE_FIGURES:
            continue
        declared = {"per": "testbed", "metric": "", "name": ""}
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith(FIGURE_HEADER):
                for word in line.removeprefix(FIGURE_HEADER).split():
                    key, _, value = word.partition("=")
                    if key not in declared or not value:
                        raise ValueError(f"{path}: {line!r}: {word!r} is not one of "
                                         "per=, metric=, name=")
                    declared[key] = value
        if declared["per"] not in out:
            raise ValueError(f"{path}: per={declared['per']}: per=file_type or per=testbed")
        metrics = [m for m in declared["metric"].split(",") if m] or [None]
        template = declared["name"] or (f"{name}_{{metric}}" if metrics[0] else name)
        for metric in metrics:
            out[declared["per"]][template.format(metric=metric)] = {
                "script": path.name, **({"wildcards": {"metric": metric}} if metric else {})}
    return out


def testbed_figures(scripts: Path = SCRIPTS) -> dict[str, dict]:
    """The figures of every testbed (rule figures_of_testbed), each by its name."""
    return figure_scripts(scripts)["testbed"]


def file_type_figures(scripts: Path = SCRIPTS) -> dict[str, dict]:
    """The figures of each file type (rule figures_per_file_type), each by its name."""
    return figure_scripts(scripts)["file_type"]


def testbed_figure_kinds(study: Study, own: bool) -> list[str]:
    """The whole-testbed figures: every testbed's, and those only the study's own
    testbeds have (their traces, factors and levels are this config's)."""
    kinds = list(testbed_figures())
    if not own:
        return kinds
    kinds += ["levels"] if has_level_sweep(study) else []
    kinds.append("timeline")
    kinds += [f"factor_{f}" for f in study.varied_factors]
    kinds += ["threads"] if "threads" in study.varied_factors else []
    return kinds + (["bandwidth"] if "bandwidth" in study.varied_factors else [])


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
                      for kind in file_type_figures() for ftype in self.file_types(testbed)]

    def outputs(self) -> list[str]:
        """Every analysis table, figure and the report of the tree."""
        out = [f"{self.root}/{t}/{name}.csv" for t in self.testbeds for name in ANALYSIS_TABLES]
        out += [f"{self.root}/{t}/lzbench.md" for t in self.testbeds]
        for testbed in self.testbeds:
            out += self.figures(testbed)
        if len(self.testbeds) > 1:
            out.append(f"{self.figs}/testbeds.pdf")
        return out + [f"{self.root}/paper.pdf"]


class RuleLookups:
    """The study's answers to its rules: `study` the model, `config` as Snakemake merged
    it, `copied_in` the testbeds whose runs.csv was copied in beside this machine's."""

    def __init__(self, study: Study, config: dict, copied_in: list[str],
                 tables: Sequence[str] = ()):
        self.study, self.config = study, config
        self.tables = list(tables)  # a testbed's LaTeX tables (wattzip.report.tex_tables)
        self.testbeds = study.testbeds
        self.measured, self.rehearsed = study.root("results"), study.root("rehearsal")
        self.trees = {self.measured: Tree(study, "results", copied_in),
                      self.rehearsed: Tree(study, "rehearsal")}
        self._pilot: dict[str, dict] = {}
        self.slurm = {key: self._slurm(key) for key in
                      ("slurm_partition", "slurm_account", "slurm_extra", "constraint")}

    # --- wildcard constraints ---------------------------------------------------------

    def root_pattern(self) -> str:
        return "|".join(map(re.escape, self.trees))

    def figs_pattern(self) -> str:
        return "|".join(re.escape(t.figs) for t in self.trees.values())

    def this_testbed(self) -> str:
        """Only the study's own testbeds are measured (not copied-in ones)."""
        return "|".join(re.escape(t) for t in self.testbeds)

    # --- the two trees ---------------------------------------------------------------

    def tree(self, wildcards) -> Tree:
        """The tree a rule's wildcards name, through root or figs."""
        if hasattr(wildcards, "root"):
            return self.trees[wildcards.root]
        return next(t for t in self.trees.values() if t.figs == wildcards.figs)

    def in_root(self, name: str):
        """An input function: `name` ({testbed} filled in) in the rule's tree."""
        return lambda w: f"{self.tree(w).root}/{name}".format(**dict(w.items()))

    def stage_flag(self, wildcards) -> str:
        return self.tree(wildcards).stage

    def table_inputs(self, wildcards) -> dict[str, str]:
        """What a testbed's tables are made from: its analysis tables and provenance, and
        every original's table (paper/reference/), each by its name."""
        root = f"{self.tree(wildcards).root}/{wildcards.testbed}"
        inputs = {name: f"{root}/{name}.csv" for name in (*ANALYSIS_TABLES, "provenance")}
        return inputs | {path.stem: f"paper/reference/{path.name}"
                         for path in sorted((PACKAGE / "data" / "reference").glob("*.csv"))}

    def table_outputs(self) -> dict[str, str]:
        """Rule tables_of_testbed's outputs: each of a testbed's tables by its name."""
        return {name: f"{{root}}/generated/{{testbed}}/{name}.tex" for name in self.tables}

    def macro_inputs(self, wildcards) -> dict:
        tree = self.tree(wildcards)
        base = f"{tree.root}/{self.study.first_testbed}"
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
                      summaries=[f"{tree.root}/{t}/summary.csv" for t in tree.testbeds])
        if self.study.crosscheck["codecs"]:
            inputs["crosscheck"] = f"{base}/crosscheck.csv"
        return inputs

    def macro_params(self, wildcards) -> dict:
        """The design as the report states it; its figures as the report, built in the
        tree's own folder, reaches them."""
        tree = self.tree(wildcards)
        return report_params(self.study, tree.testbeds, tree.stage,
                             os.path.relpath(tree.figs, tree.root))

    def paper_inputs(self, wildcards) -> list[str]:
        """What the report \\inputs: its first testbed's tables and figures."""
        tree, first = self.tree(wildcards), self.study.first_testbed
        out = [f"{tree.root}/generated/{first}/{t}.tex" for t in [*self.tables, "appendix"]]
        out += [f"{tree.root}/generated/testbeds.tex", f"{tree.root}/generated/macros.tex"]
        if len(tree.testbeds) > 1:  # every testbed side by side, beside their table
            out.append(f"{tree.figs}/testbeds.pdf")
        return out + tree.figures(first)

    def testbed_tables(self, name: str):
        """An input function: `name` (e.g. breakeven.csv) of every testbed of the tree."""
        return lambda w: [f"{self.tree(w).root}/{t}/{name}" for t in self.tree(w).testbeds]

    def analysis_settings(self, wildcards):
        """The settings table an analysis labels its rows with: made here for the study's
        testbeds, copied in beside runs.csv for others (which may come without one)."""
        path = f"{wildcards.root}/{wildcards.testbed}/settings.csv"
        return path if wildcards.testbed in self.testbeds or os.path.exists(path) else []

    @staticmethod
    def settings_flag(wildcards, input) -> str:
        return f"--settings {shlex.quote(input.settings)}" if input.settings else ""

    def all_outputs(self) -> list[str]:
        """The rehearsal's report first, then everything the study measures and reports."""
        measured = measured_outputs(self.study)
        outputs = [f"{self.measured}/{t}/{name}" for t in self.testbeds for name in measured]
        return [f"{self.rehearsed}/paper.pdf"] + outputs + self.trees[self.measured].outputs()

    # --- one job's, one testbed's slice of the study -----------------------------------

    def config_json(self, wildcards) -> str:
        """The merged config as JSON, in its own order: the first listed value of each
        factor makes the primary setting, so its keys are never sorted."""
        return json.dumps(self.config)

    def meter_config(self, wildcards) -> str:
        """A testbed's `meter:` config as JSON (wattzip provenance --meter-config)."""
        return json.dumps(self.testbeds[wildcards.testbed].meter, sort_keys=True)

    def machine_config(self, wildcards) -> str:
        """The config's `machine:` as JSON (wattzip provenance --machine)."""
        return json.dumps(self.study.config["machine"], sort_keys=True)

    def testbed_meter(self, wildcards) -> dict:
        return self.testbeds[wildcards.testbed].meter

    def testbed_settings(self, wildcards) -> dict:
        return self.study.preflight_settings(wildcards.testbed)

    def testbed_description(self, wildcards) -> str:
        return self.testbeds[wildcards.testbed].description

    def primary_target(self, wildcards) -> str:
        """The primary setting's target directory on a testbed (provenance, cross-check)."""
        return self.study.primary.placed_medium_on(self.testbeds[wildcards.testbed])["path"]

    def primary_medium(self, wildcards) -> str:
        """The primary setting's medium on a testbed as a job's spec holds it (JSON):
        provenance describes an image or tmpfs as the jobs see it."""
        return json.dumps(self.study.primary.placed_medium_on(self.testbeds[wildcards.testbed]))

    def crosscheck_unconditioned(self, wildcards) -> str:
        return self.study.crosscheck_unconditioned(wildcards.testbed)

    def settings_rows(self, wildcards) -> list[dict]:
        return self.study.settings_rows()

    def input_sources(self, wildcards) -> str:
        """`wattzip gen`'s sources of a file type, and the declaration that pins them."""
        sources = self.config.get("sources", {}).get(wildcards.ftype, [])
        declared = self.config.get("pinned", {}).get(wildcards.ftype)
        return shlex.join([*(arg for source in sources for arg in ("--source", source)),
                           *(["--pinned", declared] if declared else [])])

    def pinned_corpora(self, wildcards=None) -> dict:
        """The study's pinned file types (wattzip.workload.pinned), for the pre-flight: each
        one's source folder and its declaration (None: the one wattzip ships)."""
        sources, declared = self.config.get("sources", {}), self.config.get("pinned", {})
        return {f: {"source": (sources.get(f) or [None])[0], "declared": declared.get(f)}
                for f in self.study.file_types if f in pinned.SHIPPED or f in declared}

    def input_dir(self, wildcards) -> str:
        return self.testbeds[wildcards.testbed].input_dir

    def input_files(self, wildcards) -> list[str]:
        return [f"{self.input_dir(wildcards)}/{f}.bin" for f in self.study.file_types]

    def manifests(self, wildcards) -> list[str]:
        return [f"{self.measured}/{wildcards.testbed}/inputs/{f}.bin.json"
                for f in self.study.file_types]

    def input_data(self, wildcards) -> str:
        return f"{self.input_dir(wildcards)}/{wildcards.ftype}.bin"

    def expect(self, wildcards) -> dict:
        return self.study.expect(wildcards.testbed)

    def job_runs(self, wildcards) -> list[str]:
        return [job.path("runs") for job in self.study.jobs(wildcards.testbed)]

    def previous_job_runs(self, wildcards) -> list[str]:
        """Under the moderated design, the runs of the job measured just before this one
        (cheapest cells first, from the cached pilot: Study.measure_order)."""
        job = Job(wildcards.testbed, wildcards.setting, wildcards.ftype, wildcards.codec,
                  self.measured)
        before = self.study.previous_job(job, self._pilot_seconds(wildcards.testbed))
        return [before.path("runs")] if before else []

    def _pilot_seconds(self, testbed: str):
        """The cached pilot's seconds per cell, read once per testbed."""
        from wattzip.model.plan import cached_cell_seconds

        if testbed not in self._pilot:
            self._pilot[testbed] = cached_cell_seconds(self.study, testbed)
        return self._pilot[testbed]

    # --- where a job runs --------------------------------------------------------------

    def _slurm(self, key: str):
        """A testbed's Slurm option for the executor plugin (unused when run locally)."""

        def value(wildcards):
            s = self.testbeds[wildcards.testbed].slurm or {}
            if key == "slurm_extra":  # its own node, alone on it; the plugin's sbatch
                # line runs in a shell, so every word of the config is quoted
                node = [f"--nodelist={s['nodelist']}"] if s.get("nodelist") else []
                return shlex.join(["--exclusive", *node, *shlex.split(s.get("extra", ""))])
            return s.get(key.removeprefix("slurm_"), "")

        return value

    def threads(self, cores: Callable[[], int]):
        """An input function: a measurement job claims every core of its testbed, through
        Slurm `slurm.cpus`, else the node's own count (scontrol), else the workflow's
        cores. `cores` is asked only then: a Slurm run defines no total."""

        def value(wildcards):
            s = self.testbeds[wildcards.testbed].slurm
            if s is not None:
                return s.get("cpus") or _node_cpus(s["nodelist"]) or cores()
            return cores()

        return value


@functools.cache
def _node_cpus(node: str) -> int | None:
    return system.slurm_node_cpus(node)
