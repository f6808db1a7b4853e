"""Rule hpc14_cells: the HPC '14 tables' cells, set by the report's formatters."""

import sys

from wattzip.errors import said_alone
from wattzip.report import hpc14_cells

sys.stderr = open(snakemake.log[0], "w")
with said_alone():  # a user's error is its message in the log, shown on failure
    hpc14_cells.write(dict(snakemake.input.items()), snakemake.params.duty_codecs,
                      dict(snakemake.output.items()))
