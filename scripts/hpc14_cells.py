"""Rule hpc14_cells: the HPC '14 tables' cells, set by the report's formatters."""

import sys

from wattzip.report import hpc14_cells

sys.stderr = open(snakemake.log[0], "w")
hpc14_cells.write(dict(snakemake.input.items()), snakemake.params.duty_codecs,
                  dict(snakemake.output.items()))
