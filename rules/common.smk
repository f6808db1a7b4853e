"""Lookups the rules make in the study's one model (wattzip.design): glue, no design.

Two trees hold a study's outputs: its rehearsal's (rehearsal/<study>/, SIMULATED runs,
built first) and its measurements' (results/<study>/, figures/<study>/). The rules
that analyse and draw serve both through the `root` and `figs` wildcards; the rules
that touch the machine write only under results/<study>/.
"""

import csv
import functools
import glob
import json
import os
import re
import shlex
import sys

from wattzip import codec_registry, layout, system
from wattzip.design import FACTORS, Job, Study
from wattzip.errors import ConfigError

# The design, built once from the merged config: testbeds, settings, jobs, the primary.
STUDY = Study.from_config(config)
MEASURED = STUDY.root("results")
REHEARSED = STUDY.root("rehearsal")
# Each tree's figures: the measured ones in figures/<study>/, the rehearsal's in its tree.
FIGURES = {MEASURED: f"figures/{STUDY.name}", REHEARSED: f"{REHEARSED}/figures"}
STAGE_OF = {MEASURED: "results", REHEARSED: "rehearsal"}
TESTBEDS = STUDY.testbeds
# The first testbed's results fill the report's detailed sections; every testbed's
# figures, tables and verdicts are made, and the cross-testbed ones join them.
TESTBED = STUDY.first_testbed
# Several testbeds compare identical bytes: inputs are generated once and staged to each.
MULTI = STUDY.multi
FILE_TYPES = STUDY.file_types
CODECS = STUDY.codecs
FILE_SIZE = STUDY.file_size_bytes
REPEATS = STUDY.repeats
SETTINGS = STUDY.settings
PRIMARY = STUDY.primary.name
DUTY = STUDY.duty
DUTY_CODECS = list(DUTY.codecs) if DUTY else []
ANALYSIS_TABLES = layout.ANALYSIS_TABLES
REFERENCE_FILES = sorted(glob.glob("paper/reference/*.csv"))
CROSSCHECK = STUDY.crosscheck
layout.warn_old_layout("results", STUDY, sys.stderr)


wildcard_constraints:
    root="|".join(map(re.escape, STAGE_OF)),
    figs="|".join(map(re.escape, FIGURES.values())),
    testbed=r"[A-Za-z0-9][A-Za-z0-9_-]*",
    setting=r"[^/]+",
    ftype=r"(?!dutycycle\b)[^/.]+",
    codec=r"[^/]+",


def this_testbed():
    """Wildcard constraint: only the study's own testbeds are measured (not copied-in ones)."""
    return "|".join(re.escape(t) for t in TESTBEDS)


def root_of(wildcards):
    """The tree (measured or rehearsed) a rule's wildcards name, through root or figs."""
    if "root" in wildcards.keys():
        return wildcards.root
    return next(r for r, f in FIGURES.items() if f == wildcards.figs)


def in_root(name):
    """An input function: `name` in the rule's tree, the testbed's folder ({testbed})."""

    def path(wildcards):
        return f"{root_of(wildcards)}/{name}".format(**dict(wildcards.items()))

    return path


def stage_flag(wildcards):
    """What the analysis expects its runs to be: measured, or the rehearsal's simulated."""
    return STAGE_OF[root_of(wildcards)]


def config_json(wildcards):
    """The merged config as JSON (a function: its braces are not wildcards)."""
    return json.dumps(config, sort_keys=True)


def job_spec(wildcards):
    """A measurement job's own slice of the study, as one JSON document (wattzip.design)."""
    ftype = getattr(wildcards, "ftype", "dutycycle")
    job = Job(wildcards.testbed, wildcards.setting, ftype, wildcards.codec, MEASURED)
    return json.dumps(STUDY.job_spec(job), sort_keys=True)


def idle_spec(wildcards):
    """The idle calibration's slice: the testbed's meter and the setting's factors."""
    return json.dumps(
        STUDY.idle_spec(wildcards.testbed, wildcards.setting), sort_keys=True
    )


def meter_spec(wildcards):
    """A testbed's meter as wattzip's meter options (the study's keys, its own winning)."""
    return json.dumps(STUDY.meter_fields(wildcards.testbed), sort_keys=True)


def testbed_meter(wildcards):
    return TESTBEDS[wildcards.testbed].meter


def medium_of(testbed, setting):
    """A setting's medium on a testbed (its paths are the testbed's)."""
    return SETTINGS[setting].medium_on(TESTBEDS[testbed])


def input_sources(wildcards):
    sources = config.get("sources", {}).get(wildcards.ftype, [])
    return shlex.join(arg for source in sources for arg in ("--source", source))


def primary_target(wildcards):
    """The target directory of the primary setting on a testbed (provenance, cross-check)."""
    return medium_of(wildcards.testbed, PRIMARY).path


def crosscheck_unconditioned(wildcards):
    return STUDY.crosscheck_unconditioned(wildcards.testbed)


def testbed_description(wildcards):
    return TESTBEDS[wildcards.testbed].description


def testbed_settings(wildcards):
    """Every setting of a testbed as plain values, for the pre-flight checks."""
    return STUDY.preflight_settings(wildcards.testbed)


def settings_rows(wildcards):
    """settings.csv's rows: one per setting, a column per factor, the primary flagged."""
    return STUDY.settings_rows()


def testbed_input_dir(wildcards):
    return TESTBEDS[wildcards.testbed].input_dir


def testbed_input_files(wildcards):
    return [f"{testbed_input_dir(wildcards)}/{ftype}.bin" for ftype in FILE_TYPES]


def testbed_manifests(wildcards):
    return expand(
        f"{MEASURED}/{wildcards.testbed}/inputs/{{ftype}}.bin.json", ftype=FILE_TYPES
    )


def input_data(wildcards):
    return f"{testbed_input_dir(wildcards)}/{wildcards.ftype}.bin"


def expected_node(wildcards):
    """The Slurm node (or host) a testbed's runs must come from, as wattzip flags."""
    return shlex.join(STUDY.node_flags(wildcards.testbed))


# Every job that touches a testbed's hardware runs on that testbed's node, alone on
# it, when the workflow runs through Slurm (profiles/slurm); locally these are unused.
def slurm_partition(wildcards):
    return (TESTBEDS[wildcards.testbed].slurm or {}).get("partition", "")


def slurm_constraint(wildcards):
    return (TESTBEDS[wildcards.testbed].slurm or {}).get("constraint", "")


def slurm_account(wildcards):
    return (TESTBEDS[wildcards.testbed].slurm or {}).get("account", "")


def slurm_extra(wildcards):
    slurm = TESTBEDS[wildcards.testbed].slurm or {}
    node = f" --nodelist={slurm['nodelist']}" if slurm.get("nodelist") else ""
    return f"--exclusive{node} {slurm.get('extra', '')}".strip()


@functools.cache
def node_cpus(node):
    return system.slurm_node_cpus(node)


def testbed_threads(wildcards):
    """A measurement job claims the whole machine: every core of its testbed. Through
    Slurm, --exclusive gives it the node, and the step is confined to the cores it asks
    for: `slurm.cpus`, else the node's own count (scontrol), so codecs get every core.
    """
    slurm = TESTBEDS[wildcards.testbed].slurm
    if slurm is not None:
        return slurm.get("cpus") or node_cpus(slurm["nodelist"]) or workflow.cores
    return workflow.cores


def job_runs(wildcards):
    """Every measurement job's runs of this testbed (and its duty-cycle runs)."""
    return [job.path("runs") for job in STUDY.jobs(wildcards.testbed)]


def other_testbeds():
    """Testbeds of this study whose runs.csv was copied in beside this machine's."""
    named = config.get("compare_testbeds")
    if named is not None:
        return [t for t in named if t not in TESTBEDS]
    found = glob_wildcards(f"{MEASURED}/{{testbed}}/runs.csv").testbed
    return sorted(t for t in set(found) if "/" not in t and t not in TESTBEDS)


def testbeds_of(root):
    """The testbeds a tree's report covers: the rehearsal simulates the study's own."""
    return list(TESTBEDS) + (other_testbeds() if root == MEASURED else [])


def analysis_settings(wildcards):
    """The settings table a testbed's analysis labels its rows with: made here for this
    study's testbeds, copied in beside runs.csv for the others (a copied-in testbed of a
    single setting may come without one)."""
    path = f"{wildcards.root}/{wildcards.testbed}/settings.csv"
    return path if wildcards.testbed in TESTBEDS or os.path.exists(path) else []


def settings_flag(wildcards, input):
    return f"--settings {shlex.quote(input.settings)}" if input.settings else ""


def testbed_file_types(root, testbed):
    """File types of a testbed: this config's, or those in a copied-in runs.csv."""
    if testbed in TESTBEDS:
        return FILE_TYPES
    with open(f"{root}/{testbed}/runs.csv", newline="") as f:
        return sorted({row["file_type"] for row in csv.DictReader(f)})


def testbed_figures(root, testbed):
    """Every figure of one testbed in one tree (wattzip.layout decides which exist)."""
    own = testbed in TESTBEDS
    kinds = layout.testbed_figure_kinds(STUDY, own)
    figs = FIGURES[root]
    figures = [f"{figs}/{testbed}/{kind}.pdf" for kind in kinds]
    figures += expand(
        "{figs}/{testbed}/{kind}_{ftype}.pdf",
        figs=figs,
        testbed=testbed,
        kind=layout.PER_FILE_TYPE_FIGURES,
        ftype=testbed_file_types(root, testbed),
    )
    return figures


def paper_inputs(wildcards):
    """What the report of one tree \\inputs: its first testbed's figures and tables."""
    root = wildcards.root
    tables = layout.paper_tables(STUDY)
    out = [f"{root}/generated/{TESTBED}/{table}.tex" for table in tables]
    out += [f"{root}/generated/testbeds.tex", f"{root}/generated/macros.tex"]
    return out + testbed_figures(root, TESTBED)


def breakeven_reference(wildcards):
    name = layout.BREAKEVEN_ORIGINALS[wildcards.original][0]
    return f"paper/generated/reference/{name}.csv"


def breakeven_metrics(wildcards):
    return layout.BREAKEVEN_ORIGINALS[wildcards.original][1]


def breakeven_title(wildcards):
    return layout.BREAKEVEN_ORIGINALS[wildcards.original][2]


def table_inputs(wildcards):
    """Each table of a testbed reads one analysis table (ratios also the originals)."""
    base = f"{wildcards.root}/{wildcards.testbed}"
    return {
        "ratios": {
            "summary": f"{base}/summary.csv",
            "table3": "paper/generated/reference/systor09_table3_ratios.csv",
            "table1": "paper/generated/reference/systor11_table1_ratios.csv",
        },
        "claims": {"claims": f"{base}/claims.csv"},
        "provenance": {"provenance": f"{base}/provenance.csv"},
    }[wildcards.table]


def testbed_breakevens(wildcards):
    return [f"{wildcards.root}/{t}/breakeven.csv" for t in testbeds_of(wildcards.root)]


def testbed_summaries(wildcards):
    root = root_of(wildcards)
    return [f"{root}/{t}/summary.csv" for t in testbeds_of(root)]


def macro_inputs(wildcards):
    base = f"{wildcards.root}/{TESTBED}"
    inputs = {
        name: f"{base}/{name}.csv"
        for name in ("summary", "breakeven", "correlation", "claims", "runs")
    }
    inputs["provenance"] = f"{base}/provenance.json"
    inputs["manifest"] = f"{base}/manifest.json"
    inputs["idle"] = f"{base}/idle/{PRIMARY}.json"
    inputs["estimate"] = f"{base}/plan/estimate.json"
    inputs["model_check"] = f"{base}/model_check.csv"
    inputs["table3"] = "paper/reference/systor09_table3_ratios.csv"
    inputs["table4"] = "paper/reference/systor09_table4_breakeven_server.csv"
    if CROSSCHECK["codecs"]:
        inputs["crosscheck"] = f"{base}/crosscheck.csv"
    inputs["summaries"] = testbed_summaries(wildcards)
    return inputs


def macro_params(wildcards):
    """The study's design as the report's macros state it (one dict, from the model);
    its figures' folder as the report (built in the tree's folder) reaches it."""
    root = wildcards.root
    figs = os.path.relpath(FIGURES[root], root)
    return layout.report_params(STUDY, testbeds_of(root), STAGE_OF[root], figs)


def tree_outputs(root):
    """Everything one tree holds for the study: analysis tables, figures, the report."""
    testbeds = testbeds_of(root)
    outputs = expand(
        "{root}/{testbed}/{table}.csv",
        root=root,
        testbed=testbeds,
        table=ANALYSIS_TABLES,
    )
    for testbed in testbeds:
        outputs += testbed_figures(root, testbed)
    if len(testbeds) > 1:
        outputs.append(f"{FIGURES[root]}/testbeds.pdf")
    return outputs + [f"{root}/paper.pdf"]


def all_outputs():
    outputs = expand(
        "{root}/{testbed}/{name}",
        root=MEASURED,
        testbed=list(TESTBEDS),
        name=layout.measured_outputs(STUDY),
    )
    return [f"{REHEARSED}/paper.pdf"] + outputs + tree_outputs(MEASURED)


layout.print_study_summary(
    STUDY, f"{MEASURED}/{TESTBED}/plan/estimate.json", sys.stderr
)
