"""Rule text_cells: a table of free text's cells, set by the report's formatter."""

import sys

from wattzip.errors import said_alone
from wattzip.report import text_cells

sys.stderr = open(snakemake.log[0], "w")
with said_alone():  # a user's error is its message in the log, shown on failure
    text_cells.write(snakemake.wildcards.table, dict(snakemake.input.items()),
                     snakemake.output[0])
