"""Rule paper_macros: the paper's numbers and generated passages (wattzip.report)."""

import json
import sys

from wattzip import report

sys.stderr = open(snakemake.log[0], "w")
values = report.write(dict(snakemake.input.items()), snakemake.params.design,
                      dict(snakemake.output.items()))
print(json.dumps(values, indent=1), file=sys.stderr)
