"""What hyperfine 1.20's scripts/advanced_statistics.py computes from an --export-json
file, written anew for the tests: it reads the keys hyperfine's scripts read (results[]:
command, times; plot_parametrized's parameters, mean, stddev; and the memory per run), so
a `wattzip bench` export it reads is one hyperfine's scripts read."""

import argparse
import json

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("file", help="JSON file with benchmark results")
parser.add_argument("--time-unit", choices=["second", "millisecond"], default="second",
                    dest="unit")
args = parser.parse_args()
factor, unit = (1e3, "ms") if args.unit == "millisecond" else (1, "s")

with open(args.file) as f:
    results = json.load(f)["results"]

for b in results:
    ts = [t * factor for t in b["times"]]
    p05, p25, p75, p95 = (np.percentile(ts, q) for q in (5, 25, 75, 95))
    print(f"Command '{b['command']}'")
    print(f"  runs:   {len(ts):8d}")
    print(f"  mean:   {np.mean(ts):8.3f} {unit}")
    print(f"  stddev: {np.std(ts, ddof=1):8.3f} {unit}")
    print(f"  median: {np.median(ts):8.3f} {unit}")
    print(f"  min:    {np.min(ts):8.3f} {unit}")
    print(f"  max:    {np.max(ts):8.3f} {unit}")
    print(f"  P_05 .. P_95: {p05:.3f} {unit} .. {p95:.3f} {unit}")
    print(f"  IQR: {p75 - p25:.3f} {unit}")
    # plot_parametrized.py's and the memory's keys
    print(f"  parameters: {json.dumps(b.get('parameters', {}), sort_keys=True)}")
    print(f"  reported mean/stddev: {b['mean'] * factor:.3f} {b['stddev'] * factor:.3f}")
    print(f"  peak memory: {max(b['memory_usage_byte'])} bytes")
    print(f"  exit codes: {b['exit_codes']}")
