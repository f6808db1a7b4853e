"""The compression energy study: inputs, calibration, measurement, analysis, figures, paper."""

import os
import sys

from snakemake.utils import min_version, validate

from wattzip.errors import said_alone
from wattzip.machine import trust
from wattzip.model.config import validate_workflow

min_version("9.0")

# The rules' commands (wattzip) come from the environment this Snakemake runs
# in, so `.venv/bin/snakemake` works without activating the venv first.
os.environ.update(
    PATH=os.pathsep.join(
        filter(None, [os.path.dirname(sys.executable), os.environ.get("PATH")])
    )
)

# Root writes the study here and trusts what it reads back (its specs, journals, runs):
# only root may write this folder (wattzip.machine.trust), and what the workflow makes
# in it is no one else's to write, whatever the umask. Root runs this checkout's code,
# environment and config: no other user may be able to write any of them. Its tools
# come only from folders of root's PATH that no other user can write.
os.umask(os.umask(0) | 0o022)
# A user's error (wattzip.errors) while the Snakefile is read is its message alone, as
# every wattzip command prints it: never a traceback.
with said_alone():
    if os.geteuid() == 0:
        for checkout in {workflow.basedir, os.getcwd()}:
            trust.trusted_workflow(checkout, workflow.configfiles)
        trust.trusted_folder(os.getcwd(), "the workflow's folder", create=False)
        for left_out in trust.keep_path_trusted():
            print(f"wattzip: PATH: left out {left_out}", file=sys.stderr)


configfile: "config.yaml"


# wattzip's check first: a line per problem, naming the key, its file and the closest
# known key or value. Snakemake's, which would dump the whole schema, then fills in the
# schema's defaults.
with said_alone():
    validate_workflow(
        config, workflow.config_settings.configfiles, workflow.config_settings.config
    )
validate(config, "config/schema.yaml")


include: "rules/common.smk"


# What needs no testbed's hardware runs where the workflow runs (the shared filesystem);
# everything else goes to its testbed's node when the study runs through Slurm.
localrules:
    all,
    rehearsal,
    study_config,
    simulate_runs,
    manifest,
    job_spec,
    idle_spec,
    settings_table,
    runs_table,
    check_overlap,
    analyze,
    appendix,
    figures_per_file_type,
    figures_of_testbed,
    figure_levels,
    figure_factor,
    figure_bandwidth,
    figure_timeline,
    figure_testbeds,
    tables_of_testbed,
    table_testbeds,
    paper_macros,
    paper,


rule all:
    """The rehearsal, then everything the study measures and reports (every testbed)."""
    input:
        RULES.all_outputs(),


include: "rules/inputs.smk"
include: "rules/calibrate.smk"
include: "rules/measure.smk"
include: "rules/analyze.smk"
include: "rules/figures.smk"
include: "rules/paper.smk"
include: "rules/rehearse.smk"
