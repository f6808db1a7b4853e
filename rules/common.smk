"""Lookups the rules make in the study's one model (wattzip.design): glue, no design."""

import csv
import functools
import glob
import json
import os
import re
import shlex
import sys

from wattzip import codec_registry, system
from wattzip.design import FACTORS, Job, Study
from wattzip.errors import ConfigError

RESULTS = "results"
# The design, built once from the merged config: testbeds, settings, jobs, the primary.
STUDY = Study.from_config(config)
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


def input_dir_of(testbed):
    """Where a testbed's input files live: its own disk (never the shared filesystem)."""
    return TESTBEDS[testbed].input_dir


def factor_values():
    """Every factor's values in this study, in config order."""
    return STUDY.factor_values()


def varied_factors():
    """The factors that take two or more values in this study, in a fixed order."""
    return STUDY.varied_factors


ANALYSIS_TABLES = (
    "summary",
    "breakeven",
    "esav",
    "correlation",
    "claims",
    "comparison",
    "pareto",
    "model_check",
)
REFERENCE_FILES = sorted(glob.glob("paper/reference/*.csv"))
CROSSCHECK = STUDY.config["crosscheck"]
for _name in CROSSCHECK["codecs"]:
    if _name not in CODECS:
        raise ConfigError(
            f"crosscheck.codecs: {_name!r} is not among the study's codecs {CODECS}"
        )
if CROSSCHECK["codecs"] and CROSSCHECK["file_type"] not in FILE_TYPES:
    raise ConfigError(
        f"crosscheck.file_type: {CROSSCHECK['file_type']!r} is not among "
        f"the study's file_types {FILE_TYPES}"
    )


wildcard_constraints:
    testbed=r"[A-Za-z0-9][A-Za-z0-9_-]*",
    setting=r"[^/]+",
    ftype=r"(?!dutycycle\b)[^/.]+",
    codec=r"[^/]+",


def this_testbed():
    """Wildcard constraint: only the study's own testbeds are measured (not copied-in ones)."""
    return "|".join(re.escape(t) for t in TESTBEDS)


def meter_args(wildcards):
    """The meter options of the config (a testbed's own overriding them) as wattzip flags."""
    m = TESTBEDS[wildcards.testbed].meter
    args = ["--meter", ",".join(m["order"]), "--interval", str(m["interval_s"])]
    if m["require_measured"]:
        args.append("--require-measured")
    optional = {
        "--powercap-root": m.get("powercap_root"),
        "--wattsup-port": m.get("wattsup_port"),
        "--trace": m.get("trace_path"),
        "--trace-timezone": m.get("trace_timezone"),
        "--ipmi-command": m.get("ipmi_command"),
    }
    args += [x for flag, value in optional.items() if value for x in (flag, value)]
    if m.get("psys"):
        args.append("--psys")
    if m.get("model"):
        args += [
            "--model-idle-w",
            str(m["model"]["idle_power_w"]),
            "--model-max-w",
            str(m["model"]["max_power_w"]),
        ]
    return shlex.join(args)


def testbed_meter(wildcards):
    """A testbed's meter config (the study's meter keys, its own overriding them)."""
    return TESTBEDS[wildcards.testbed].meter


def medium_of(testbed, setting):
    """A setting's medium on a testbed (its paths are the testbed's)."""
    return SETTINGS[setting].medium_on(TESTBEDS[testbed])


def setting_args(wildcards):
    """The factors of a setting as wattzip flags, quoted for the shell."""
    s = SETTINGS[wildcards.setting]
    m = medium_of(wildcards.testbed, wildcards.setting)
    args = ["--setting", s.name, "--medium", m.name, "--target-dir", m.path]
    args += ["--io-scheduler", s.io_scheduler, "--governor", s.governor]
    args += ["--bandwidth", s.bandwidth]
    args += ["--medium-kind", m.kind, "--flush", m.flush, "--medium-inputs", m.inputs]
    optional = {
        "--medium-image": m.image,
        "--medium-device": m.device,
        "--medium-size": m.size,
        "--medium-fs": m.fs,
        "--mkfs-options": m.mkfs_options,
        "--mount-options": m.mount_options,
    }
    args += [x for flag, value in optional.items() if value for x in (flag, value)]
    if m.format:
        args.append("--format")
    return shlex.join(args)


def input_sources(wildcards):
    sources = config.get("sources", {}).get(wildcards.ftype, [])
    return shlex.join(arg for source in sources for arg in ("--source", source))


def copies(wildcards):
    return SETTINGS[wildcards.setting].copies


def primary_target(wildcards):
    """The target directory of the primary setting on a testbed (provenance, cross-check)."""
    return medium_of(wildcards.testbed, PRIMARY).path


def crosscheck_unconditioned(wildcards):
    """Why hyperfine, which runs the commands on a plain directory with the machine as it
    is, would not time the primary setting as the harness did ("" when it would)."""
    s, m = SETTINGS[PRIMARY], medium_of(wildcards.testbed, PRIMARY)
    reasons = [
        f"{what} {value}"
        for what, value, plain in (
            ("medium", m.kind, m.kind == "directory"),
            ("I/O scheduler", s.io_scheduler, s.io_scheduler == "keep"),
            ("governor", s.governor, s.governor == "keep"),
            ("bandwidth", s.bandwidth, s.bandwidth_bytes_per_s is None),
            ("copies", s.copies, s.copies == 1),
        )
        if not plain
    ]
    return ", ".join(reasons)


def testbed_description(wildcards):
    return TESTBEDS[wildcards.testbed].description


def crosscheck_manifest(wildcards):
    return f"{RESULTS}/{wildcards.testbed}/inputs/{CROSSCHECK['file_type']}.bin.json"


def testbed_settings(wildcards):
    """Every setting of a testbed as plain values, for the pre-flight checks."""
    out = {}
    for name, s in SETTINGS.items():
        m = medium_of(wildcards.testbed, name)
        out[name] = {
            "medium": m.to_spec(),
            "target_dir": m.path,
            "io_scheduler": s.io_scheduler,
            "governor": s.governor,
            "copies": s.copies,
            "bandwidth": s.bandwidth,
        }
    return out


def settings_rows(wildcards):
    """settings.csv's rows: one per setting, a column per factor, the primary flagged."""
    return STUDY.settings_rows()


def testbed_input_dir(wildcards):
    return input_dir_of(wildcards.testbed)


def testbed_input_files(wildcards):
    return [f"{input_dir_of(wildcards.testbed)}/{ftype}.bin" for ftype in FILE_TYPES]


def testbed_manifests(wildcards):
    return expand(
        f"{RESULTS}/{wildcards.testbed}/inputs/{{ftype}}.bin.json", ftype=FILE_TYPES
    )


def input_data(wildcards):
    return f"{input_dir_of(wildcards.testbed)}/{wildcards.ftype}.bin"


def expected_node(wildcards):
    """The Slurm node (or host) a testbed's runs must come from, as wattzip flags."""
    testbed = TESTBEDS[wildcards.testbed]
    node = (testbed.slurm or {}).get("nodelist")
    args = (["--expect-node", node] if node else []) + (
        ["--expect-host", testbed.host] if testbed.host else []
    )
    return shlex.join(args)


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


def codec_threads():
    """Threads of multi-threaded codecs; 0 lets each job use every core of its node."""
    return STUDY.config["threads"]


def input_manifest(wildcards):
    return f"{RESULTS}/{wildcards.testbed}/inputs/{wildcards.ftype}.bin.json"


def repeat_plan(wildcards):
    """The measurement job's repeats, from the study model (wattzip.design)."""
    ftype = getattr(wildcards, "ftype", "dutycycle")
    job = Job(wildcards.testbed, wildcards.setting, ftype, wildcards.codec)
    return STUDY.repeat_plan(job)


def repeat_args(wildcards):
    """The job's repeats as wattzip flags: the paper's rule, or the verdict design's
    looks, against the job's own plain arm (with the verdicts' margin and workload)."""
    plan = repeat_plan(wildcards)
    args = ["--min-repeats", plan.min, "--max-repeats", plan.max, "--ci-target"]
    args.append(plan.ci_target)
    if plan.looks:
        verdict = STUDY.config["verdict"]
        args += ["--looks", ",".join(map(str, plan.looks))]
        args += ["--margin", verdict["margin"]]
        args += ["--reads-per-write", verdict["reads_per_write"]]
    if plan.looks and STUDY.moderated_design:
        args.append("--moderated")
        args += ["--prior-journals", f"{RESULTS}/{wildcards.testbed}/journal/{wildcards.setting}"]
    return shlex.join(map(str, args))


def previous_runs(wildcards):
    """Under the moderated design, the runs of the job measured just before this one
    (cheapest cells first, from the cached pilot when `wattzip plan` made one:
    wattzip.design.Study.measure_order), so that the jobs run in that order; ancient,
    so a later pilot's order never makes a finished job run again."""
    job = Job(wildcards.testbed, wildcards.setting, wildcards.ftype, wildcards.codec)
    before = STUDY.previous_job(job, _pilot_seconds(wildcards.testbed))
    return [ancient(before.path("runs"))] if before else []


@functools.cache
def _pilot_seconds(testbed):
    from wattzip.plan import cached_cell_seconds

    return cached_cell_seconds(STUDY, testbed)


def job_runs(wildcards):
    """Every measurement job's runs of this testbed (and its duty-cycle runs)."""
    return [job.path("runs") for job in STUDY.jobs(wildcards.testbed)]


def duty_args():
    """The duty cycle's shape as wattzip job flags."""
    if not DUTY:
        return ""
    return shlex.join(
        [
            "--duty-phases",
            str(DUTY.phases),
            "--duty-compute-s",
            str(DUTY.compute_s),
            "--duty-compute",
            DUTY.compute,
        ]
    )


def duty_manifest(wildcards):
    return f"{RESULTS}/{wildcards.testbed}/inputs/{DUTY.file_type}.bin.json"


def has_hpc14():
    """Filesystem compression or a duty cycle: HPC '14's tables go into the report."""
    fs = any(codec_registry.get(c).filesystem for c in CODECS)
    return fs or bool(DUTY)


def other_testbeds():
    """Testbeds whose runs.csv was copied in beside this machine's."""
    named = config.get("compare_testbeds")
    if named is not None:
        return [t for t in named if t not in TESTBEDS]
    found = glob_wildcards(f"{RESULTS}/{{testbed}}/runs.csv").testbed
    return sorted(t for t in set(found) if "/" not in t and t not in TESTBEDS)


def analysis_settings(wildcards):
    """The settings table a testbed's analysis labels its rows with: made here for this
    study's testbeds, copied in beside runs.csv for the others (a copied-in testbed of a
    single setting may come without one)."""
    path = f"{RESULTS}/{wildcards.testbed}/settings.csv"
    return path if wildcards.testbed in TESTBEDS or os.path.exists(path) else []


def settings_flag(wildcards, input):
    return f"--settings {shlex.quote(input.settings)}" if input.settings else ""


def all_testbeds():
    return list(TESTBEDS) + other_testbeds()


BREAKEVEN_ORIGINALS = {
    "server": (
        "systor09_table4_breakeven_server",
        ["E", "ET"],
        "SYSTOR '09 Table 4, server",
    ),
    "desktop": (
        "systor09_table5_breakeven_desktop",
        ["E", "ET"],
        "SYSTOR '09 Table 5, desktop",
    ),
    "slides_server": (
        "systor09_slides_breakeven_server",
        ["E", "T"],
        "SYSTOR '09 slides, server",
    ),
    "slides_desktop": (
        "systor09_slides_breakeven_desktop",
        ["E", "T"],
        "SYSTOR '09 slides, desktop",
    ),
    "slides_laptop": (
        "systor09_slides_breakeven_laptop",
        ["E", "T"],
        "SYSTOR '09 slides, laptop",
    ),
}
PAPER_TABLES = ["ratios", "claims", "provenance"] + [
    f"breakeven_{name}" for name in BREAKEVEN_ORIGINALS
]


def _timeline():
    """Which runs the power/I-O timeline shows: a few codecs on text (or the first type)."""
    file_type = "text" if "text" in FILE_TYPES else FILE_TYPES[0]
    preferred = [c for c in ("gz-9", "bz-9", "lzo-1") if c in CODECS]
    return {"file_type": file_type, "codecs": (preferred or CODECS)[:3]}


TIMELINE = _timeline()


def output_dir(wildcards, output):
    """The folder of a rule's first output (for tools that take a folder)."""
    return os.path.dirname(output[0])


def breakeven_reference(wildcards):
    return f"paper/generated/reference/{BREAKEVEN_ORIGINALS[wildcards.original][0]}.csv"


def breakeven_metrics(wildcards):
    return BREAKEVEN_ORIGINALS[wildcards.original][1]


def breakeven_title(wildcards):
    return BREAKEVEN_ORIGINALS[wildcards.original][2]


def table_inputs(wildcards):
    """Each table of a testbed reads one analysis table (ratios also the originals)."""
    base = f"{RESULTS}/{wildcards.testbed}"
    return {
        "ratios": {
            "summary": f"{base}/summary.csv",
            "table3": "paper/generated/reference/systor09_table3_ratios.csv",
            "table1": "paper/generated/reference/systor11_table1_ratios.csv",
        },
        "claims": {"claims": f"{base}/claims.csv"},
        "provenance": {"provenance": f"{base}/provenance.csv"},
    }[wildcards.table]


def testbed_file_types(testbed):
    """File types of a testbed: this config's, or those in a copied-in runs.csv."""
    if testbed in TESTBEDS:
        return FILE_TYPES
    with open(f"{RESULTS}/{testbed}/runs.csv", newline="") as f:
        return sorted({row["file_type"] for row in csv.DictReader(f)})


def has_level_sweep():
    """True when some tool runs at three or more levels (SYSTOR '11 sweep)."""
    levels = {}
    for codec in codec_registry.resolve(config["codecs"]):
        if codec.level.isdigit():
            levels.setdefault(codec.tool, set()).add(codec.level)
    return any(len(v) >= 3 for v in levels.values())


def testbed_figures(testbed):
    kinds = ["esav", "ratio", "tradeoff", "pareto_energy", "pareto_time"] + (
        ["levels"] if testbed in TESTBEDS and has_level_sweep() else []
    )
    figures = [f"figures/{testbed}/{kind}.pdf" for kind in kinds]
    figures += expand(
        "figures/{testbed}/{kind}_{ftype}.pdf",
        testbed=testbed,
        kind=["time", "energy", "et"],
        ftype=testbed_file_types(testbed),
    )
    if testbed in TESTBEDS:
        figures.append(f"figures/{testbed}/timeline.pdf")
        figures += [f"figures/{testbed}/factor_{f}.pdf" for f in varied_factors()]
        if "bandwidth" in varied_factors():
            figures.append(f"figures/{testbed}/bandwidth.pdf")
    return figures


def paper_figures():
    return testbed_figures(TESTBED)


def paper_tables():
    tables = PAPER_TABLES + ["appendix"] + (["hpc14"] if has_hpc14() else [])
    return expand(
        "paper/generated/{testbed}/{table}.tex", testbed=TESTBED, table=tables
    ) + ["paper/generated/testbeds.tex"]


def macro_inputs(wildcards):
    base = f"{RESULTS}/{TESTBED}"
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
    inputs["summaries"] = expand(f"{RESULTS}/{{t}}/summary.csv", t=all_testbeds())
    return inputs


def all_outputs():
    outputs = expand(
        "{results}/{testbed}/{name}",
        results=RESULTS,
        testbed=list(TESTBEDS),
        name=[
            "runs.csv",
            "overlap.txt",
            "provenance.json",
            "manifest.json",
            "plan/estimate.json",
            "appendix.md",
        ]
        + (["crosscheck.csv"] if CROSSCHECK["codecs"] else []),
    )
    outputs += expand(
        "{results}/{testbed}/{table}.csv",
        results=RESULTS,
        testbed=all_testbeds(),
        table=ANALYSIS_TABLES,
    )
    for testbed in all_testbeds():
        outputs += testbed_figures(testbed)
    if len(all_testbeds()) > 1:
        outputs.append("figures/testbeds.pdf")
    outputs.append(f"{RESULTS}/paper.pdf")
    return outputs


def _study_summary():
    measured = [j for j in STUDY.jobs(TESTBED) if j.file_type != "dutycycle"]
    plans = [STUDY.repeat_plan(j) for j in measured]
    # A write and a read per arm and repeat (two arms under the verdict design).
    lo = sum(2 * p.arms * p.min for p in plans)
    hi = sum(2 * p.arms * p.max for p in plans)
    runs = f"{lo}" if lo == hi else f"{lo}-{hi}"
    plain = "(+ plain baseline)"
    if STUDY.verdict_design:
        plain = "(each with its own plain arm)"
    print(
        f"wattzip study '{TESTBED}': {len(FILE_TYPES)} file types x {len(CODECS)} codecs "
        f"{plain} x {len(SETTINGS)} setting(s) = {len(measured)} measurement "
        f"jobs, {runs} measured runs of {config['file_size']} files"
        + (
            f", and {len(SETTINGS) * len(DUTY_CODECS)} duty-cycle job(s) of "
            f"{DUTY.phases} write phases each"
            if DUTY
            else ""
        )
        + f"; primary setting {PRIMARY} ({STUDY.primary_rule})",
        file=sys.stderr,
    )
    estimate = f"{RESULTS}/{TESTBED}/plan/estimate.json"
    if os.path.exists(estimate):
        with open(estimate) as f:
            print(f"estimate: {json.load(f)['text']}", file=sys.stderr)
    else:
        print(
            "estimate: `.venv/bin/wattzip plan` says how long this takes here "
            "(a short pilot; the workflow runs it first)",
            file=sys.stderr,
        )


_study_summary()
