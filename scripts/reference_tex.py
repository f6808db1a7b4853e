"""An original paper's table with the LaTeX of its cells, for the R tables."""

import sys

from wattzip.analysis.reference import write_with_tex

sys.stderr = open(snakemake.log[0], "w")

write_with_tex(snakemake.input[0], snakemake.output[0])
