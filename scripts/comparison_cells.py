"""Rules ratio_cells, breakeven_cells, testbed_cells: the cells of the tables beside the
originals, set by the report's formatter (wattzip.report.comparison_cells)."""

import sys

from wattzip.errors import said_alone
from wattzip.report import comparison_cells

sys.stderr = open(snakemake.log[0], "w")
with said_alone():  # a user's error is its message in the log, shown on failure
    comparison_cells.WRITERS[snakemake.rule](
        dict(snakemake.input.items()), dict(snakemake.params.items()), snakemake.output[0]
    )
