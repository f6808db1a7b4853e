"""Rule crosscheck_hyperfine: hyperfine's times beside the harness's (wattzip.measure.crosscheck),
alone on the machine like every measurement."""

import os

from wattzip import machine
from wattzip.errors import said_alone
from wattzip.measure import crosscheck

# A user's error (a missing hyperfine, the machine held) is its message alone.
with said_alone(), open(snakemake.log[0], "w") as log, machine.session(
    "crosscheck", snakemake.wildcards.testbed, os.getcwd()
):
    crosscheck.run(
        snakemake.wildcards.testbed, snakemake.input.manifest, snakemake.input.runs,
        snakemake.params.setting, snakemake.params.target, snakemake.params.codecs,
        snakemake.params.runs, snakemake.params.threads, snakemake.params.unconditioned,
        snakemake.output[0], log,
    )
