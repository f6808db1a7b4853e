"""Join the per-file manifest entries into the testbed's input manifest."""

import json
import sys

sys.stderr = open(snakemake.log[0], "w")
entries = [json.load(open(path)) for path in snakemake.input]
with open(snakemake.output[0], "w") as f:
    json.dump({"testbed": snakemake.wildcards.testbed, "inputs": entries}, f, indent=2)
print(f"{len(entries)} input files", file=sys.stderr)
