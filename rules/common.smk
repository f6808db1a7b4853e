"""Lookups the rules make in the study's one model (wattzip.design) and its two trees of
outputs (wattzip.layout): the rehearsal's (rehearsal/<study>/, SIMULATED, built first)
and the measured one (results/<study>/, figures/<study>/). The analysing and reporting
rules serve both through the `root` and `figs` wildcards; glue, no design."""

import functools
import glob
import json
import os
import re
import shlex
import sys

from wattzip import layout, system
from wattzip.design import FACTORS, Job, Study

STUDY = Study.from_config(config)
TESTBEDS = STUDY.testbeds
MEASURED, REHEARSED = STUDY.root("results"), STUDY.root("rehearsal")
PRIMARY = STUDY.primary.name
CODECS, FILE_TYPES, REPEATS, DUTY = (
    STUDY.codecs,
    STUDY.file_types,
    STUDY.repeats,
    STUDY.duty,
)
DUTY_CODECS = list(DUTY.codecs) if DUTY else []
CROSSCHECK = STUDY.crosscheck
ANALYSIS_TABLES = layout.ANALYSIS_TABLES
REFERENCE_FILES = sorted(glob.glob("paper/reference/*.csv"))
layout.warn_old_layout("results", STUDY, sys.stderr)


def copied_in_testbeds():
    """Testbeds of this study whose runs.csv was copied in beside this machine's."""
    named = config.get("compare_testbeds")
    if named is not None:
        return [t for t in named if t not in TESTBEDS]
    found = glob_wildcards(f"{MEASURED}/{{testbed}}/runs.csv").testbed
    return sorted(t for t in set(found) if "/" not in t and t not in TESTBEDS)


TREES = {
    MEASURED: layout.Tree(STUDY, "results", copied_in_testbeds()),
    REHEARSED: layout.Tree(STUDY, "rehearsal"),
}


wildcard_constraints:
    root="|".join(map(re.escape, TREES)),
    figs="|".join(re.escape(t.figs) for t in TREES.values()),
    testbed=r"[A-Za-z0-9][A-Za-z0-9_-]*",
    setting=r"[^/]+",
    ftype=r"(?!dutycycle\b)[^/.]+",
    codec=r"[^/]+",


def this_testbed():
    """Wildcard constraint: only the study's own testbeds are measured (not copied-in ones)."""
    return "|".join(re.escape(t) for t in TESTBEDS)


def tree(wildcards):
    """The tree a rule's wildcards name, through root or figs."""
    if "root" in wildcards.keys():
        return TREES[wildcards.root]
    return next(t for t in TREES.values() if t.figs == wildcards.figs)


def in_root(name):
    """An input function: `name` ({testbed} filled in) in the rule's tree."""
    return lambda w: f"{tree(w).root}/{name}".format(**dict(w.items()))


def stage_flag(wildcards):
    return tree(wildcards).stage


def config_json(wildcards):
    """The merged config as JSON (a function: its braces are not wildcards), in its
    own order: the first listed value of each factor makes the primary setting."""
    return json.dumps(config)


def job_spec(wildcards):
    """A measurement job's own slice of the study, as one JSON document."""
    ftype = getattr(wildcards, "ftype", "dutycycle")
    job = Job(wildcards.testbed, wildcards.setting, ftype, wildcards.codec, MEASURED)
    return json.dumps(STUDY.job_spec(job), sort_keys=True)


def idle_spec(wildcards):
    return json.dumps(
        STUDY.idle_spec(wildcards.testbed, wildcards.setting), sort_keys=True
    )


def meter_spec(wildcards):
    return json.dumps(STUDY.meter_fields(wildcards.testbed), sort_keys=True)


def testbed_meter(wildcards):
    return TESTBEDS[wildcards.testbed].meter


def testbed_settings(wildcards):
    return STUDY.preflight_settings(wildcards.testbed)


def testbed_description(wildcards):
    return TESTBEDS[wildcards.testbed].description


def primary_target(wildcards):
    """The primary setting's target directory on a testbed (provenance, cross-check)."""
    return STUDY.settings[PRIMARY].medium_on(TESTBEDS[wildcards.testbed]).path


def crosscheck_unconditioned(wildcards):
    return STUDY.crosscheck_unconditioned(wildcards.testbed)


def settings_rows(wildcards):
    return STUDY.settings_rows()


def input_sources(wildcards):
    sources = config.get("sources", {}).get(wildcards.ftype, [])
    return shlex.join(arg for source in sources for arg in ("--source", source))


def testbed_input_dir(wildcards):
    return TESTBEDS[wildcards.testbed].input_dir


def testbed_input_files(wildcards):
    return [f"{testbed_input_dir(wildcards)}/{ftype}.bin" for ftype in FILE_TYPES]


def testbed_manifests(wildcards):
    return [f"{MEASURED}/{wildcards.testbed}/inputs/{f}.bin.json" for f in FILE_TYPES]


def input_data(wildcards):
    return f"{testbed_input_dir(wildcards)}/{wildcards.ftype}.bin"


def expected_node(wildcards):
    return shlex.join(STUDY.node_flags(wildcards.testbed))


def previous_runs(wildcards):
    """Under the moderated design, the runs of the job measured just before this one
    (cheapest cells first, from the cached pilot: Study.measure_order), so the jobs run
    in that order; ancient, so a later pilot's order never reruns a finished job."""
    job = Job(
        wildcards.testbed, wildcards.setting, wildcards.ftype, wildcards.codec, MEASURED
    )
    before = STUDY.previous_job(job, pilot_seconds(wildcards.testbed))
    return [ancient(before.path("runs"))] if before else []


@functools.cache
def pilot_seconds(testbed):
    from wattzip.plan import cached_cell_seconds

    return cached_cell_seconds(STUDY, testbed)


def job_runs(wildcards):
    return [job.path("runs") for job in STUDY.jobs(wildcards.testbed)]


def slurm(key):
    """A testbed's Slurm option for the executor plugin (unused when run locally)."""

    def value(wildcards):
        s = TESTBEDS[wildcards.testbed].slurm or {}
        if key == "slurm_extra":  # its own node, alone on it
            node = f" --nodelist={s['nodelist']}" if s.get("nodelist") else ""
            return f"--exclusive{node} {s.get('extra', '')}".strip()
        return s.get(key.removeprefix("slurm_"), "")

    return value


SLURM = {k: slurm(k) for k in ("slurm_partition", "slurm_account", "slurm_extra")}
SLURM["constraint"] = slurm("constraint")


@functools.cache
def node_cpus(node):
    return system.slurm_node_cpus(node)


def testbed_threads(wildcards):
    """A measurement job claims every core of its testbed: through Slurm `slurm.cpus`,
    else the node's own count (scontrol); --exclusive gives it the node."""
    s = TESTBEDS[wildcards.testbed].slurm
    if s is not None:
        return s.get("cpus") or node_cpus(s["nodelist"]) or workflow.cores
    return workflow.cores


def analysis_settings(wildcards):
    """The settings table an analysis labels its rows with: made here for the study's
    testbeds, copied in beside runs.csv for others (which may come without one)."""
    path = f"{wildcards.root}/{wildcards.testbed}/settings.csv"
    return path if wildcards.testbed in TESTBEDS or os.path.exists(path) else []


def settings_flag(wildcards, input):
    return f"--settings {shlex.quote(input.settings)}" if input.settings else ""


def breakeven_original(i):
    return lambda w: layout.BREAKEVEN_ORIGINALS[w.original][i]


def breakeven_reference(wildcards):
    name = layout.BREAKEVEN_ORIGINALS[wildcards.original][0]
    return f"paper/generated/reference/{name}.csv"


def table_inputs(wildcards):
    return tree(wildcards).table_inputs(wildcards.testbed, wildcards.table)


def macro_inputs(wildcards):
    return tree(wildcards).macro_inputs()


def macro_params(wildcards):
    return tree(wildcards).report_params()


def paper_inputs(wildcards):
    return tree(wildcards).paper_inputs()


def testbed_breakevens(wildcards):
    t = tree(wildcards)
    return [f"{t.root}/{testbed}/breakeven.csv" for testbed in t.testbeds]


def testbed_summaries(wildcards):
    t = tree(wildcards)
    return [f"{t.root}/{testbed}/summary.csv" for testbed in t.testbeds]


def all_outputs():
    measured = layout.measured_outputs(STUDY)
    outputs = [f"{MEASURED}/{t}/{name}" for t in TESTBEDS for name in measured]
    return [f"{REHEARSED}/paper.pdf"] + outputs + TREES[MEASURED].outputs()


layout.print_study_summary(
    STUDY, f"{MEASURED}/{STUDY.first_testbed}/plan/estimate.json", sys.stderr
)
