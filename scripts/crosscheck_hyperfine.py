"""Time a sample of the study's commands with hyperfine and compare with the harness.

hyperfine is a timer users already trust; the ratio of its mean to the
harness's mean for the same command (cache dropped before each run, output
flushed with sync) shows the harness measures what it says it does.
"""

import atexit
import contextlib
import json
import os
import shlex
import statistics
import subprocess

from wattzip import codec_registry, machine, records

log = open(snakemake.log[0], "w")
# It measures: alone on the machine, like every measurement job.
held = contextlib.ExitStack()
atexit.register(held.close)
held.enter_context(machine.session("crosscheck", snakemake.wildcards.testbed, os.getcwd()))
manifest = json.load(open(snakemake.input.manifest))
target = snakemake.params.target
os.makedirs(target, exist_ok=True)
threads = snakemake.params.threads
drop = (
    "sync; echo 3 > /proc/sys/vm/drop_caches"
    if os.access("/proc/sys/vm/drop_caches", os.W_OK)
    else "sync"
)
runs = [
    r
    for r in records.read_runs_csv(snakemake.input.runs)
    if r["verified"] and r["setting"] == snakemake.params.setting
]


def hyperfine(command, prepare, export):
    argv = [
        "hyperfine", "--runs", str(snakemake.params.runs), "--prepare", prepare,
        "--export-json", export, "--style", "basic", command,
    ]
    print("$ " + shlex.join(argv), file=log, flush=True)
    subprocess.run(argv, stdout=log, stderr=log, check=True)
    result = json.load(open(export))["results"][0]
    return result["mean"], result.get("stddev") or 0.0, len(result["times"])


rows = []
unconditioned = snakemake.params.unconditioned
if unconditioned:  # hyperfine would time other conditions: compare nothing, say why
    print(f"not compared: the primary setting has {unconditioned}, which hyperfine's runs "
          "on a plain directory would not reproduce", file=log)
for name in snakemake.params.codecs if not unconditioned else []:
    codec = codec_registry.get(name)
    out = os.path.join(target, f"crosscheck-{name}{codec.suffix}")
    q = shlex.quote
    compress = shlex.join(codec.compress_argv(out, threads)) + f" < {q(manifest['path'])}"
    if not codec.writes_out_path:
        compress += f" > {q(out)}"
    decompress = shlex.join(codec.decompress_argv(out, threads))
    if not codec.reads_in_path:
        decompress += f" < {q(out)}"
    commands = {
        "compress-write": (f"{compress} && sync {q(out)}", f"rm -f {q(out)}; {drop}"),
        "decompress-read": (f"{decompress} > /dev/null", drop),
    }
    for op, (command, prepare) in commands.items():
        export = os.path.join(target, f"crosscheck-{name}-{op}.json")
        mean_s, sd_s, n = hyperfine(command, prepare, export)
        own = [
            r["elapsed_s"]
            for r in runs
            if r["codec"] == name and r["op"] == op and r["file_type"] == manifest["file_type"]
        ]
        own_mean = statistics.fmean(own) if own else float("nan")
        rows.append(
            {
                "testbed": snakemake.wildcards.testbed,
                "file_type": manifest["file_type"],
                "codec": name,
                "op": op,
                "command": command,
                "harness_mean_s": own_mean,
                "harness_n": len(own),
                "hyperfine_mean_s": mean_s,
                "hyperfine_sd_s": sd_s,
                "hyperfine_n": n,
                "ratio_hyperfine_to_harness": mean_s / own_mean if own else float("nan"),
            }
        )
        os.unlink(export)
    if os.path.exists(out):
        os.unlink(out)

if unconditioned:
    rows = [{"testbed": snakemake.wildcards.testbed, "file_type": manifest["file_type"],
             "codec": name, "op": "", "command": "", "harness_mean_s": "", "harness_n": 0,
             "hyperfine_mean_s": "", "hyperfine_sd_s": "", "hyperfine_n": 0,
             "ratio_hyperfine_to_harness": "", "conditioned": False,
             "not_compared": f"unconditioned: the primary setting has {unconditioned}"}
            for name in snakemake.params.codecs]
for row in rows:
    row.setdefault("conditioned", True)
    row.setdefault("not_compared", "")
records.write_csv_atomically(rows, snakemake.output[0], list(rows[0]))
for row in rows if not unconditioned else []:
    print(
        f"{row['codec']} {row['op']}: hyperfine {row['hyperfine_mean_s']:.3f} s, "
        f"harness {row['harness_mean_s']:.3f} s, ratio {row['ratio_hyperfine_to_harness']:.3f}",
        file=log,
    )
