"""Rule appendix: the claims-to-experiments appendix of one testbed (wattzip.report.appendix)."""

import sys

from wattzip.errors import said_alone
from wattzip.report import appendix

sys.stderr = open(snakemake.log[0], "w")
with said_alone():  # a user's error is its message in the log, shown on failure
    appendix.write(
        snakemake.input.claims, snakemake.input.runs,
        f"{snakemake.wildcards.root}/{snakemake.wildcards.testbed}",
        snakemake.wildcards.testbed, snakemake.params.configfiles,
        snakemake.output.markdown, snakemake.output.latex,
    )
