"""Rule text_cells: a table of free text's cells, set by the report's formatter."""

import sys

from wattzip.report import text_cells

sys.stderr = open(snakemake.log[0], "w")
text_cells.write(snakemake.wildcards.table, dict(snakemake.input.items()), snakemake.output[0])
