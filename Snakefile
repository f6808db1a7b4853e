"""The compression energy study: inputs, calibration, measurement, analysis, figures, paper."""

import os
import sys

from snakemake.utils import min_version, validate

from wattzip.machine import trust

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
if os.geteuid() == 0:
    for checkout in {workflow.basedir, os.getcwd()}:
        trust.trusted_workflow(checkout, workflow.configfiles)
    trust.trusted_folder(os.getcwd(), "the workflow's folder", create=False)
    for left_out in trust.keep_path_trusted():
        print(f"wattzip: PATH: left out {left_out}", file=sys.stderr)


configfile: "config.yaml"


validate(config, "config/schema.yaml")


include: "rules/common.smk"


# What needs no testbed's hardware runs where the workflow runs (the shared filesystem);
# everything else goes to its testbed's node when the study runs through Slurm.
localrules:
    all,
    rehearsal,
    simulate_runs,
    manifest,
    job_spec,
    idle_spec,
    settings_table,
    runs_table,
    check_overlap,
    analyze,
    appendix,
    figure_per_file_type,
    figure_of_testbed,
    figure_pareto,
    figure_factor,
    figure_bandwidth,
    figure_timeline,
    figure_testbeds,
    table_of_testbed,
    table_breakeven,
    table_testbeds,
    hpc14_cells,
    text_cells,
    ratio_cells,
    breakeven_cells,
    testbed_cells,
    table_hpc14,
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
include: "rules/tables.smk"
include: "rules/paper.smk"
include: "rules/rehearse.smk"
