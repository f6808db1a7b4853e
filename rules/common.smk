"""The study's one model (wattzip.model.study) and the lookups its rules make in it
(wattzip.model.layout.RuleLookups): a testbed's meter, which tables and
figures each of the two trees holds, the rehearsal's (rehearsal/<study>/, SIMULATED,
built first) and the measured one (results/<study>/, figures/<study>/). Glue only:
what needs Snakemake's own objects (config, ancient, workflow.cores)."""

import glob
import sys

from wattzip.errors import said_alone
from wattzip.model import layout
from wattzip.model.layout import RuleLookups
from wattzip.model.study import Study
from wattzip.model.testbed import FACTORS
from wattzip.report import tex_tables

# A user's error in the study (a codec, a medium, a factor, the cross-check) is its
# message alone.
with said_alone():
    STUDY = Study(config)
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
    ANALYSIS_OPTIONS = STUDY.analysis_options
ANALYSIS_TABLES = layout.ANALYSIS_TABLES
REFERENCE_FILES = sorted(glob.glob("paper/reference/*.csv"))
REPORT_CODE = layout.report_code(workflow.basedir)


def copied_in_testbeds():
    """Testbeds of this study whose runs.csv was copied in beside this machine's."""
    named = config.get("compare_testbeds")
    if named is not None:
        return [t for t in named if t not in TESTBEDS]
    return layout.copied_in_testbeds(MEASURED, list(TESTBEDS), sys.stderr)


with said_alone():
    RULES = RuleLookups(STUDY, config, copied_in_testbeds(), tex_tables.names(STUDY))
SLURM = RULES.slurm
THREADS = RULES.threads(lambda: workflow.cores)  # read when a job asks: Slurm sets none


wildcard_constraints:
    root=RULES.root_pattern(),
    figs=RULES.figs_pattern(),
    testbed=r"[A-Za-z0-9][A-Za-z0-9_-]*",
    setting=r"[^/]+",
    ftype=r"(?!dutycycle\b)[^/.]+",
    codec=r"[^/]+",


def previous_runs(wildcards):
    """The runs of the job measured just before this one (the moderated design's order);
    ancient, so a later pilot's order never reruns a finished job."""
    return [ancient(path) for path in RULES.previous_job_runs(wildcards)]


# A measurement job's command, the same for a file type's job and a duty cycle's.
JOB_COMMAND = (
    "wattzip job --spec {input.spec:q} --manifest {input.manifest:q} "
    "--idle {input.idle:q} --journal {params.journal:q} --trace-dir {params.traces:q} "
    "--verify-cache {params.verified:q} --out {output:q} 2> {log:q}"
)


# A spec (wattzip.measure.spec) as the model gives it, written where its job reads it.
SPEC_COMMAND = "printf '%s\\n' {params.spec:q} > {output:q} 2> {log:q}"


def job_paths(part):
    """A job's journal, power traces and the testbed's verification cache, the job named
    by its part of the runs' path (a file type's wildcard, or dutycycle)."""
    return dict(
        journal=f"{MEASURED}/{{testbed}}/journal/{{setting}}/{part}/{{codec}}.jsonl",
        traces=f"{MEASURED}/{{testbed}}/traces/{{setting}}/{part}/{{codec}}",
        verified=f"{MEASURED}/{{testbed}}/journal/verified.jsonl",
    )


with said_alone():
    layout.print_study_summary(
        STUDY, f"{MEASURED}/{STUDY.first_testbed}/plan/estimate.json", sys.stderr
    )
