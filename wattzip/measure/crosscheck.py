"""Time a sample of the study's commands with hyperfine and compare with the harness.

hyperfine is a timer users already trust; the ratio of its mean to the
harness's mean for the same command (cache dropped before each run, output
flushed with sync) shows the harness measures what it says it does. It compares
only a primary setting it can reproduce (a plain directory, the machine as it
is); otherwise it compares nothing and says why.
"""

from __future__ import annotations

import json
import os
import shlex
import statistics
import subprocess
from typing import TextIO

from wattzip import records
from wattzip.machine import trust
from wattzip.workload import codec_registry

COLUMNS = ("testbed", "file_type", "codec", "op", "command", "harness_mean_s", "harness_n",
           "hyperfine_mean_s", "hyperfine_sd_s", "hyperfine_n", "ratio_hyperfine_to_harness",
           "conditioned", "not_compared")


def not_compared(testbed: str, file_type: str, codecs: list[str], why: str) -> list[dict]:
    """The rows of codecs hyperfine did not time, each saying why."""
    return [{"testbed": testbed, "file_type": file_type, "codec": name, "op": "",
             "command": "", "harness_mean_s": "", "harness_n": 0, "hyperfine_mean_s": "",
             "hyperfine_sd_s": "", "hyperfine_n": 0, "ratio_hyperfine_to_harness": "",
             "conditioned": False, "not_compared": why} for name in codecs]


def _hyperfine(command: str, prepare: str, export: str, n_runs: int, log: TextIO):
    argv = ["hyperfine", "--runs", str(n_runs), "--prepare", prepare, "--export-json",
            export, "--style", "basic", command]
    print("$ " + shlex.join(argv), file=log, flush=True)
    subprocess.run(argv, stdout=log, stderr=log, check=True)
    with open(export) as f:
        result = json.load(f)["results"][0]
    os.unlink(export)
    return result["mean"], result.get("stddev") or 0.0, len(result["times"])


def _commands(codec, out: str, source: str, threads: int, drop: str) -> dict:
    """Each operation's shell command for hyperfine, and its --prepare. Threads 0 is
    every core it is given, as a job reads it (never `pigz -p 0`)."""
    q = shlex.quote
    threads = int(threads) or len(os.sched_getaffinity(0))
    compress = shlex.join(codec.compress_argv(out, threads)) + f" < {q(source)}"
    if not codec.writes_out_path:
        compress += f" > {q(out)}"
    decompress = shlex.join(codec.decompress_argv(out, threads))
    if not codec.reads_in_path:
        decompress += f" < {q(out)}"
    return {"compress-write": (f"{compress} && sync {q(out)}", f"rm -f {q(out)}; {drop}"),
            "decompress-read": (f"{decompress} > /dev/null", drop)}


def compare(testbed: str, manifest: dict, runs: list[dict], target: str, codecs: list[str],
            n_runs: int, threads: int, log: TextIO) -> list[dict]:
    """hyperfine's mean against the harness's for each codec's write and read. Its shell
    writes in `target` by name (`>`), so `target` is root's alone (wattzip.machine.trust):
    no other user can plant a link there for root's output to follow."""
    trust.trusted_folder(target, "the crosscheck's target_dir")
    drop = ("sync; echo 3 > /proc/sys/vm/drop_caches"
            if os.access("/proc/sys/vm/drop_caches", os.W_OK) else "sync")
    rows = []
    for name in codecs:
        codec = codec_registry.get(name)
        out = os.path.join(target, f"crosscheck-{name}{codec.suffix}")
        for op, (command, prepare) in _commands(codec, out, manifest["path"], threads,
                                                drop).items():
            export = os.path.join(target, f"crosscheck-{name}-{op}.json")
            mean_s, sd_s, n = _hyperfine(command, prepare, export, n_runs, log)
            own = [r["elapsed_s"] for r in runs if r["codec"] == name and r["op"] == op
                   and r["file_type"] == manifest["file_type"]]
            own_mean = statistics.fmean(own) if own else float("nan")
            rows.append({"testbed": testbed, "file_type": manifest["file_type"],
                         "codec": name, "op": op, "command": command,
                         "harness_mean_s": own_mean, "harness_n": len(own),
                         "hyperfine_mean_s": mean_s, "hyperfine_sd_s": sd_s,
                         "hyperfine_n": n, "conditioned": True, "not_compared": "",
                         "ratio_hyperfine_to_harness": mean_s / own_mean if own
                         else float("nan")})
            print(f"{name} {op}: hyperfine {mean_s:.3f} s, harness {own_mean:.3f} s",
                  file=log, flush=True)
        if os.path.exists(out):
            os.unlink(out)
    return rows


def run(testbed: str, manifest_path: str, runs_csv: str, setting: str, target: str,
        codecs: list[str], n_runs: int, threads: int, unconditioned: str, out: str,
        log: TextIO) -> None:
    """Rule crosscheck_hyperfine: compare, or say why not, and write the table."""
    with open(manifest_path) as f:
        manifest = json.load(f)
    if unconditioned:  # hyperfine would time other conditions: compare nothing, say why
        print(f"not compared: the primary setting has {unconditioned}, which hyperfine's "
              "runs on a plain directory would not reproduce", file=log)
        rows = not_compared(testbed, manifest["file_type"], codecs,
                            f"unconditioned: the primary setting has {unconditioned}")
    else:
        runs = [r for r in records.read_runs_csv(runs_csv)
                if r["verified"] and r["setting"] == setting]
        rows = compare(testbed, manifest, runs, target, codecs, n_runs, threads, log)
    records.write_csv_atomically(rows, out, list(COLUMNS))
