"""Rule appendix: the claims-to-experiments appendix of one testbed (wattzip.report.appendix)."""

import sys

from wattzip.report import appendix

sys.stderr = open(snakemake.log[0], "w")
appendix.write(
    snakemake.input.claims, snakemake.input.runs,
    f"{snakemake.wildcards.root}/{snakemake.wildcards.testbed}", snakemake.wildcards.testbed,
    snakemake.params.configfiles, snakemake.output.markdown, snakemake.output.latex,
)
