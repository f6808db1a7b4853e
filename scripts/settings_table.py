"""settings.csv: the study's settings from its model, a column per factor (rule settings_table)."""

import sys

from wattzip.records import write_csv_atomically

sys.stderr = open(snakemake.log[0], "w")
rows = snakemake.params.rows
write_csv_atomically(rows, snakemake.output[0], list(rows[0]))
print(f"{len(rows)} settings to {snakemake.output[0]}", file=sys.stderr)
