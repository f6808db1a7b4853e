"""Rule study_config: the merged config in one file, what `wattzip simulate` and `wattzip
plan` read (--config-file): a file, so no command line holds the config and a failed
job's command shows none of it."""

import sys

from wattzip.records import write_text_atomically

sys.stderr = open(snakemake.log[0], "w")
write_text_atomically(snakemake.output[0], snakemake.params.config + "\n")
print(f"the merged config to {snakemake.output[0]}", file=sys.stderr)
