"""Rule paper_macros: the paper's numbers and generated passages (wattzip.report)."""

import json
import sys

from wattzip import report
from wattzip.errors import said_alone

sys.stderr = open(snakemake.log[0], "w")
with said_alone():  # a user's error is its message in the log, shown on failure
    values = report.write(dict(snakemake.input.items()), snakemake.params.design,
                          dict(snakemake.output.items()))
print(json.dumps(values, indent=1), file=sys.stderr)
