"""Rule preflight: every check before any measurement (wattzip.model.preflight), holding the
machine like a job; whatever it changed is undone however it ends."""

import json
import os
import sys

from wattzip import machine
from wattzip.errors import WattzipError
from wattzip.model import preflight

p = snakemake.params
with open(snakemake.log[0], "w") as log:
    try:
        with machine.session("preflight", snakemake.wildcards.testbed, os.getcwd()):
            report = preflight.run(
                p.codecs, p.settings, p.file_size, p.duty_phases, p.meter, p.input_dir,
                p.input_files, p.expect["node"], p.expect["host"], p.pinned,
            )
    except WattzipError as exc:
        print(f"preflight: {exc}", file=log, flush=True)
        print(f"wattzip preflight: {exc}", file=sys.stderr, flush=True)
        sys.exit(1)
    print(json.dumps(report, indent=2), file=log)
with open(snakemake.output[0], "w") as f:
    json.dump(report, f, indent=2)
