"""What the workflow's rules look up by their wildcards: a testbed's meter, a tree's
inputs (a job's spec the rules take from the model itself, Study.job_spec_text). Built
once from the study's model and its two trees of outputs, so that `rules/common.smk`
holds no decisions and every lookup can be tested without Snakemake. Input functions
take the rule's wildcards; params functions take `input` too, as Snakemake passes
them."""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
from collections.abc import Callable

from wattzip.machine import system
from wattzip.model import layout
from wattzip.model.jobs import Job
from wattzip.model.study import Study
from wattzip.workload import pinned


class RuleLookups:
    """The study's answers to its rules: `study` the model, `config` as Snakemake merged
    it, `copied_in` the testbeds whose runs.csv was copied in beside this machine's."""

    def __init__(self, study: Study, config: dict, copied_in: list[str]):
        self.study, self.config = study, config
        self.testbeds = study.testbeds
        self.measured, self.rehearsed = study.root("results"), study.root("rehearsal")
        self.trees = {self.measured: layout.Tree(study, "results", copied_in),
                      self.rehearsed: layout.Tree(study, "rehearsal")}
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

    def tree(self, wildcards) -> layout.Tree:
        """The tree a rule's wildcards name, through root or figs."""
        if hasattr(wildcards, "root"):
            return self.trees[wildcards.root]
        return next(t for t in self.trees.values() if t.figs == wildcards.figs)

    def in_root(self, name: str):
        """An input function: `name` ({testbed} filled in) in the rule's tree."""
        return lambda w: f"{self.tree(w).root}/{name}".format(**dict(w.items()))

    def stage_flag(self, wildcards) -> str:
        return self.tree(wildcards).stage

    def table_inputs(self, wildcards) -> dict:
        return self.tree(wildcards).table_inputs(wildcards.testbed)

    def table_outputs(self) -> dict[str, str]:
        """Rule tables_of_testbed's outputs: each of a testbed's tables by its name."""
        return {name: f"{{root}}/generated/{{testbed}}/{name}.tex"
                for name in layout.tables_of_testbed(self.study)}

    def macro_inputs(self, wildcards) -> dict:
        return self.tree(wildcards).macro_inputs()

    def macro_params(self, wildcards) -> dict:
        return self.tree(wildcards).report_params()

    def paper_inputs(self, wildcards) -> list[str]:
        return self.tree(wildcards).paper_inputs()

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
        measured = layout.measured_outputs(self.study)
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
