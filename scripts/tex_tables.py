"""Rules tables_of_testbed and table_testbeds: the report's LaTeX tables
(wattzip.report.tex_tables)."""

import sys

from wattzip.errors import said_alone
from wattzip.report import tex_tables

sys.stderr = open(snakemake.log[0], "w")
with said_alone():  # a user's error is its message in the log, shown on failure
    written = tex_tables.WRITERS[snakemake.rule](
        dict(snakemake.input.items()), dict(snakemake.params.items()),
        dict(snakemake.output.items())
    )
print("\n".join(written), file=sys.stderr)
