"""The rehearsal: plausible SIMULATED runs from a study's design, before it measures.

The workflow builds the whole report from these runs first (rehearsal/<study>/), with
the same rules as the measured one, so that a study that would fail at a figure, a
table or the PDF fails before its first input is generated. Every record says
`simulated: true`; the analysis refuses to mix such runs with measured ones, and
every figure, table and page made from them says SIMULATED.

The model is deliberately simple: each tool's speed and ratio from a data file
(the `rehearsal:` part of wattzip/data/codecs.yaml), a disk of fixed speed (or the setting's
emulated bandwidth), a few per cent of noise, and energy labelled as the study's
meter would label it: measured by the first measuring backend of meter.order when
the study requires a meter, else estimated by the CPU-utilization model.
"""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import random
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from wattzip import records, run_record
from wattzip.analysis import stopping
from wattzip.errors import MachineError
from wattzip.machine import system, trust
from wattzip.measure import crosscheck
from wattzip.measure.interleaving import with_shared_plain
from wattzip.meters import METERS, coefficients
from wattzip.model import checks
from wattzip.model.jobs import Job
from wattzip.model.study import Study
from wattzip.resources import label, operations, operations_where
from wattzip.workload import codec_registry

THREADS = 4  # the simulated testbed's hardware threads
DISK_READ_MB_S, DISK_WRITE_MB_S = 400.0, 300.0  # its disk, where no bandwidth is emulated
NOISE_CV = 0.03
START = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
SIMULATED_HOW = label("simulated")  # the provenance's note, the idle calibration's stop


def _steps(level: str) -> int:
    """How far above its tool's first level a level is (0 for levels that are not 1-9)."""
    return min(max(int(level) - 1, 0), 8) if level.isdigit() and int(level) <= 9 else 0


def _ratio(model: dict, file_type: str, level: str) -> float:
    kind = {"repeated": "zero", "urandom": "random", "user": "text",
            "silesia": "text"}.get(file_type, file_type)
    if kind.startswith("mix-"):  # N% highly compressible, the rest random
        share = int(kind.split("-")[1]) / 100
        return 1 / (share / model["ratio_text"] + (1 - share) / model["ratio_random"])
    base = model.get(f"ratio_{kind}", model["ratio_binary"])
    return base * (1 + model["ratio_per_level"] * _steps(level)) if base > 1 else base


class Simulator:
    """Runs of one testbed of a study, deterministic for the study and testbed."""

    def __init__(self, study: Study, testbed: str):
        self.study, self.testbed = study, testbed
        self.rng = random.Random(f"{study.name}/{testbed}")
        self.models = codec_registry.REHEARSAL_MODELS
        self.clock = START
        meter = study.testbeds[testbed].meter
        measured = [m for m in meter["order"] if m in checks.MEASURED_METERS]
        self.meter = measured[0] if meter["require_measured"] and measured else "model"
        self.coef = coefficients.configured(
            (meter.get("model") or {}).get("idle_power_w"),
            (meter.get("model") or {}).get("max_power_w"), THREADS, cpuinfo="/dev/null")
        self.idle_w = self.coef.idle_w
        # The moderated design's shared plain arms: pairs so far per (setting, file type).
        self.plain_pairs: dict[tuple[str, str], int] = {}

    def noise(self) -> float:
        return max(self.rng.gauss(1.0, NOISE_CV), 0.5)

    def disk_s(self, read_b: float, write_b: float, bandwidth: int | None) -> float:
        if bandwidth:  # one budget for the reads and writes of the emulated disk
            return (read_b + write_b) / bandwidth
        return read_b / (DISK_READ_MB_S * 1e6) + write_b / (DISK_WRITE_MB_S * 1e6)

    def operation(self, op: str, codec, file_type: str, bandwidth: int | None,
                  phases: int = 1, threads: int = THREADS) -> dict:
        """Time, CPU time and bytes of one operation on one input (`threads`: those a
        multi-threaded codec runs)."""
        size = self.study.file_size_bytes
        cpu_s, stored = 0.02 * size / 1e9, float(size)
        if codec is not None:
            model = self.models[codec.tool]
            speed = model["speed_per_level"] ** _steps(codec.level)
            parallel = threads if codec.multithreaded else 1
            stored = size / _ratio(model, file_type, codec.level)
            rate = model["compress_mb_s"] if "write" in op else model["decompress_mb_s"]
            cpu_s += size / (rate * 1e6 * speed)
            busy_s = cpu_s / parallel
        else:
            busy_s = cpu_s
        if operations()[op]["region"] == "codec":  # from the page cache to /dev/null
            io_s = 0.0
        elif "write" in op:
            io_s = self.disk_s(size, stored, bandwidth)
        else:
            io_s = self.disk_s(stored, 0, bandwidth)
        elapsed = (max(busy_s, io_s) + 0.2 * min(busy_s, io_s)) * phases * self.noise()
        cpu_s *= phases * self.noise()
        if op == "write-compute":
            elapsed += phases * (self.study.duty.compute_s if self.study.duty else 0)
        return {"elapsed_s": elapsed, "cpu_s": cpu_s, "output_bytes": int(stored)}

    def record(self, job: Job, op: str, repeat: int, file_type: str, arm_codec,
               pairing: dict) -> dict:
        s = self.study.settings[job.setting]
        phases = self.study.duty.phases if job.file_type == "dutycycle" else 1
        threads = (s.threads or THREADS) if arm_codec and arm_codec.multithreaded else 1
        o = self.operation(op, arm_codec, file_type, s.bandwidth_bytes_per_s, phases, threads)
        started = self.clock
        self.clock += dt.timedelta(seconds=o["elapsed_s"] + 0.5)
        elapsed, cpu_s = o["elapsed_s"], min(o["cpu_s"], o["elapsed_s"] * THREADS)
        energy = self.coef.energy_j(elapsed, cpu_s)
        medium = s.medium_on(self.study.testbeds[self.testbed])
        name = arm_codec.name if arm_codec else "plain"
        rec = {
            "testbed": self.testbed, "file_type": file_type,
            "input_bytes": self.study.file_size_bytes, "input_sha256": "simulated",
            **run_record.codec_fields(name, arm_codec),
            "op": op, "repeat": repeat, "started_at": started.isoformat(),
            "ended_at": (started + dt.timedelta(seconds=elapsed)).isoformat(),
            "elapsed_s": elapsed, "meter_interval_s": elapsed, "user_s": 0.9 * cpu_s,
            "sys_s": 0.1 * cpu_s, "cpu_busy_s": cpu_s,
            **run_record.region_fields(elapsed, cpu_s, energy, self.idle_w, elapsed),
            "meter_source": self.meter,
            "meter_scope": METERS[self.meter].scope,
            "meter_method": METERS[self.meter].method,
            "meter_identity": {"source": self.meter, "simulated": True},
            "meter_id": "simulated", "samples": max(int(elapsed / 0.1), 1),
            "output_bytes": o["output_bytes"], "verified": True,
            "verification": "simulated", "exit_code": 0, "threads": threads,
            "copies": s.copies, "phases": phases if phases > 1 else None,
            "medium_kind": medium.kind, "flush": medium.flush,
            "bandwidth_bytes_per_s": s.bandwidth_bytes_per_s,
            "input_layout": medium.inputs if s.bandwidth_bytes_per_s else None,
            "tool_version": "simulated", "job_key": f"simulated-{job.stem}",
            "factors": {**s.factors(), "target_dir": medium.path, "cache_drop": "simulated"},
            "simulated": True,
        }
        rec.update(pairing)
        if self.meter == "model":
            rec.update(self.coef.record_fields(elapsed, cpu_s))
        return run_record.RunRecord.new(rec).to_dict()  # this version's record, as measured

    def job_runs(self, job: Job, earlier: Sequence[dict] = ()) -> list[dict]:
        """A job's runs, repeat by repeat, as its design would measure them: the paper's
        rule's first `min` repeats (the simulated spread is not a machine's, so its width
        target is not chased), or under planned looks until the jobs' own stopping rule
        stops (wattzip.analysis.stopping), over the runs of its setting simulated before
        it (`earlier`). The verdict design's jobs hold their own plain arm, interleaved;
        the moderated design's add to their file type's shared one, by
        wattzip.measure.interleaving's rule."""
        codec = None if job.codec == "plain" else codec_registry.get(job.codec)
        plan = self.study.repeat_plan(job)
        file_type = self.study.duty.file_type if job.file_type == "dutycycle" else job.file_type
        looks = self.looks(job, plan, earlier) if plan.looks and codec is not None else None
        out: list[dict] = []
        for repeat in range(1, 2 * plan.max + 1):  # the jobs' cap: twice the most
            for arm_codec, pairing in self.repeat_arms(job, codec, plan, repeat):
                ops = (operations_where(region="duty") if job.file_type == "dutycycle" else
                       operations_where(region="io", arm="plain") if arm_codec is None else
                       stopping.CODEC_IO_OPS + (
                           operations_where(region="codec")
                           if self.study.config["codec_only"] and arm_codec.streams else ()))
                for op in ops:
                    out.append(self.record(job, op, repeat, file_type, arm_codec, pairing))
            if looks is None and repeat >= plan.min or looks is not None and (
                    not stopping.needs_more(out, stopping.CODEC_IO_OPS, plan, looks)):
                break
        return out

    def looks(self, job: Job, plan, earlier: Sequence[dict]) -> stopping.VerdictLooks:
        """The stopping rule a codec's job under planned looks runs, as `wattzip job
        --spec` builds it from Study.job_spec: by the study's options, as the report decides."""
        moderated = self.study.moderated_design
        return stopping.VerdictLooks(
            plan.looks, self.study.analysis_options,
            prior_runs=tuple(r for r in earlier if r["factors"]["setting"] == job.setting)
            if moderated else (), plain_type=job.file_type if moderated else None,
            kind_metrics=plan.kinds)

    def repeat_arms(self, job: Job, codec, plan, repeat: int) -> list[tuple]:
        """(arm's codec, what its runs record of the pairing) of one repeat, in order."""
        if not plan.looks or codec is None:
            return [(codec, {})]
        if not self.study.moderated_design:
            arms = [(None, {"paired_with": codec.name}), (codec, {})]
            return arms if repeat % 2 else arms[::-1]
        key = (job.setting, job.file_type)
        arms = with_shared_plain((None, {"shared_plain_of": codec.name}), (codec, {}),
                                 self.plain_pairs.get(key, 0), repeat)
        self.plain_pairs[key] = self.plain_pairs.get(key, 0) + (len(arms) == 2)
        return arms


def synthesize(study: Study, testbed: str, runs_csv: str | Path) -> dict[str, str]:
    """Write one testbed's simulated measurement outputs beside `runs_csv` (its folder):
    runs.csv, overlap.txt, provenance, manifest, the primary setting's idle calibration,
    the plan's estimate and the cross-check. Returns what was written."""
    checks.check_design(study, testbed)
    out = Path(runs_csv).parent
    sim = Simulator(study, testbed)
    runs: list[dict] = []
    for job in study.jobs(testbed, "rehearsal"):
        runs += sim.job_runs(job, runs)
    _add_traces(study, out, runs, sim)
    written = {"runs": str(runs_csv)}
    records.write_runs_csv(runs, runs_csv)
    (out / "overlap.txt").write_text(records.check_no_overlap(runs, print) + "\n")
    written.update(_side_files(study, testbed, out, runs, sim))
    return written


def _add_traces(study: Study, out: Path, runs: list[dict], sim: Simulator) -> None:
    """Power traces of the runs the timeline figure shows, as the meter samples them."""
    from wattzip.model.layout import timeline

    shown = timeline(study)
    for r in runs:
        if r["file_type"] != shown["file_type"] or r["codec"] not in shown["codecs"]:
            continue
        setting = r["factors"]["setting"]
        path = out / "traces" / setting / r["file_type"] / r["codec"] / \
            f"{r['op']}-r{r['repeat']}.csv.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        power = r["energy_j"] / r["elapsed_s"]
        rate = r["output_bytes"] / r["elapsed_s"]
        n = max(int(r["elapsed_s"] / 0.1), 2)
        rows = ["t_s,series,device,value"]
        for i in range(n):
            t = r["elapsed_s"] * i / (n - 1)
            rows.append(f"{t:.4f},power_w,,{power * sim.noise():.4f}")
            rows.append(f"{t:.4f},write_bytes_per_s,target,{rate:.1f}")
        path.write_bytes(gzip.compress(("\n".join(rows) + "\n").encode()))
        r["trace"] = str(path)


def _side_files(study: Study, testbed: str, out: Path, runs: list[dict],
                sim: Simulator) -> dict[str, str]:
    t = study.testbeds[testbed]
    meter = {"source": sim.meter, "scope": METERS[sim.meter].scope,
             "method": METERS[sim.meter].method}
    provenance = {
        "testbed": testbed, "description": t.description, "simulated": True,
        "hostname": "SIMULATED", "cpu_model": "SIMULATED testbed", "cpu_count": THREADS,
        "kernel": "SIMULATED", "os": "SIMULATED", "target_dir": t.target_dir,
        "tool_versions": {c: "simulated" for c in study.codecs}, "meter": meter,
        "emulated_machine": study.machine.describe(),
        "note": SIMULATED_HOW,
    }
    prov_path = out / "provenance.json"
    records.write_text_atomically(prov_path, json.dumps(provenance, indent=2) + "\n")
    records.write_csv_atomically(
        [{**row, "simulated": "true"} for row in system.provenance_rows(provenance)],
        out / "provenance.csv", ["key", "value", "simulated"])
    manifest = {"testbed": testbed, "simulated": True, "inputs": [
        {"file_type": f, "path": f"{t.input_dir}/{f}.bin",
         "size_bytes": study.file_size_bytes, "sha256": "simulated", "seed": None,
         "sources": [{"source": "SIMULATED: no input was generated"}]}
        for f in study.file_types]}
    records.write_text_atomically(out / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    idle = {"idle_power_w": sim.idle_w, "sd_w": 0.0, "windows_w": [sim.idle_w],
            "count": 1, "seconds": study.config["idle"]["seconds"],
            "setting": study.primary.name, "meter_source": meter["source"],
            "meter_scope": meter["scope"], "meter_method": meter["method"],
            "half_width_w": None, "confidence": None, "stopped": SIMULATED_HOW,
            "measured_at": START.isoformat(), "simulated": True}
    idle_path = out / "idle" / f"{study.primary.name}.json"
    idle_path.parent.mkdir(parents=True, exist_ok=True)
    records.write_text_atomically(idle_path, json.dumps(idle, indent=2) + "\n")
    measured = sum(r["elapsed_s"] for r in runs)
    estimate = {"runs_min": len(runs), "runs_max": len(runs), "measured_min_s": measured,
                "measured_max_s": measured, "overhead_min_s": 0.0,
                "overhead_max_s": 0.0, "wall_min_s": measured,
                "wall_max_s": measured, "simulated": True,
                "text": f"SIMULATED study '{study.name}': {len(runs)} simulated runs"}
    est_path = out / "plan" / "estimate.json"
    est_path.parent.mkdir(parents=True, exist_ok=True)
    records.write_text_atomically(est_path, json.dumps(estimate, indent=1) + "\n")
    cross = crosscheck.not_compared(testbed, study.crosscheck["file_type"],
                                    study.crosscheck["codecs"],
                                    "SIMULATED: hyperfine ran nothing in a rehearsal")
    records.write_csv_atomically(cross, out / "crosscheck.csv", list(crosscheck.COLUMNS))
    return {"provenance": str(prov_path), "idle": str(idle_path), "estimate": str(est_path)}


def run_workflow(configfiles: list[str], cores: int, directory: str, extra: list[str]) -> int:
    """`wattzip rehearse`: the workflow's rehearsal target alone (rule rehearsal), in a
    checkout of the workflow, with the config files a study would be run with."""
    if not (Path(directory) / "Snakefile").exists():
        print(f"wattzip rehearse: {directory} holds no Snakefile; run it in a clone of the "
              "wattzip repository (the rehearsal runs the workflow's own rules)",
              file=sys.stderr)
        return 2
    if os.geteuid() == 0:  # root would run the checkout's code: it must be root's alone
        try:
            trust.trusted_workflow(directory, [os.path.join(directory, f) for f in configfiles])
        except MachineError as exc:
            print(f"wattzip rehearse: {exc}", file=sys.stderr)
            return 2
    # -P: the folder it starts in is not put on the import path (docs/machine.md).
    argv = [sys.executable, "-P", "-m", "snakemake", "rehearsal", "--cores", str(cores),
            *extra, "--configfile", *configfiles]
    return subprocess.run(argv, cwd=directory, check=False).returncode
