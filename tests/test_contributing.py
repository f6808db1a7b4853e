"""CONTRIBUTING.md's promise, kept: a codec and a claim are added from data alone, a
meter and a figure from their own files, a setting a job reads from its schema entry and
the code that reads it.

A copy of the package gets one more codec family (a tool no study had, with its
rehearsal model) in its data/codecs.yaml and one more claim about it in its
data/reference/claims.yaml, decided by a shared check; no Python is touched. The
copy's study then lists the codec, its rehearsal simulates runs of it, and
`wattzip claims` decides the claim on them.
"""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .test_workflow import REPO, TINY

pytestmark = pytest.mark.pure

CODEC = """
  - short: lzip
    tool: lzip
    package: lzip
    levels: [1, 9]
    sets: [modern, all]
    compress: [lzip, "-{level}", -c]
    decompress: [lzip, -d, -c]
    version_argv: [lzip, --version]
    suffix: .lz
"""
MODEL = ("  lzip: {compress_mb_s: 20, decompress_mb_s: 90, speed_per_level: 0.8, ratio_text: 5.0,"
         " ratio_binary: 3.0, ratio_zero: 2000, ratio_random: 0.9999, ratio_per_level: 0.02}\n")
CLAIM = {"id": "lzip_random_never", "check": "same_kind", "paper": "SYSTOR '09",
         "section": "5.5", "claim": "lzip-1 saves no energy on random files",
         "reference": ["systor09_table4_breakeven_server"], "overlay": "config.yaml",
         "scope": "setting", "energy": True, "source": "hypothesis",
         "parameters": {"expected": "never",
                        "cells": {"codecs": ["lzip-1"], "file_types": ["random"],
                                  "metric": "E"}}}

STUDY = """
import sys
from wattzip.model import rehearsal
from wattzip.model.study import Study
study = Study.from_files(sys.argv[1:4])
print(",".join(study.codecs))
rehearsal.synthesize(study, "tiny", sys.argv[4])
"""


def test_a_codec_and_a_claim_are_added_from_data_alone(tmp_path):
    pkg = tmp_path / "pkg"
    shutil.copytree(REPO / "wattzip", pkg / "wattzip",
                    ignore=shutil.ignore_patterns("__pycache__"))
    data = pkg / "wattzip" / "data"
    codecs = (data / "codecs.yaml").read_text()
    codecs = codecs.replace("\nrehearsal:\n", f"{CODEC}\nrehearsal:\n{MODEL}", 1)
    (data / "codecs.yaml").write_text(codecs)
    with (data / "reference" / "claims.yaml").open("a") as f:
        f.write("\n" + yaml.safe_dump([CLAIM], sort_keys=False))
    overlay = tmp_path / "lzip.yaml"
    overlay.write_text(yaml.safe_dump({"codecs": ["gz-1", "lzip-1"],
                                     "factors": {"bandwidth": ["unlimited"]}}))
    runs = tmp_path / "sim" / "runs.csv"
    runs.parent.mkdir()
    env = {**os.environ, "PYTHONPATH": str(pkg)}

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    where = run("-c", "import wattzip; print(wattzip.__file__)")
    assert where.startswith(str(pkg)), where  # the copy, not the checkout
    studied = run("-c", STUDY, str(REPO / "config.yaml"), str(TINY), str(overlay), str(runs))
    assert studied.split() == ["gz-1,lzip-1"]
    simulated = {r["codec"] for r in csv.DictReader(runs.open())}
    assert "lzip-1" in simulated
    rows = list(csv.DictReader(io.StringIO(run("-m", "wattzip", "claims", str(runs),
                                                "--claim", CLAIM["id"]))))
    assert rows and {r["claim_id"] for r in rows} == {CLAIM["id"]}
    assert all(r["verdict"] for r in rows)
    assert rows[0]["rests_on"] == "random lzip-1 E"  # the new codec's cell decides it


def test_a_setting_a_job_reads_is_declared_once_in_the_config_schema():
    """The spec's keys that the config has are the config schema's (a $ref): its bounds
    refuse a spec, and the code's defaults are its defaults."""
    from wattzip.measure import spec as specs
    from wattzip.measure.disturbance import DriftCheck, QuietLimits
    from wattzip.meters import MeterOptions
    from wattzip.model.study import Study
    from wattzip.resources import schema_default

    from .test_design import BASE

    study = Study(BASE)
    job = specs.check(study.job_spec(next(iter(study.jobs("tb")))), specs.JOB)
    with pytest.raises(Exception, match=r"quiet.max_steal: 2 is greater than the maximum"):
        specs.check({**job, "quiet": {**job["quiet"], "max_steal": 2}}, specs.JOB)
    text = (REPO / "wattzip" / "data" / "spec.schema.yaml").read_text()
    assert '$ref: "schema.yaml#/properties/quiet"' in text and "max_steal:" not in text
    for section in ("quiet", "drift", "verdict", "idle", "repeats", "dutycycle", "meter",
                    "machine"):  # each section whole, none key by key
        assert f'$ref: "schema.yaml#/properties/{section}"' in text
        assert f"schema.yaml#/properties/{section}/properties/" not in text
    assert QuietLimits() == QuietLimits(**{k: schema_default(f"quiet.{k}") for k in (
        "max_other_cpu", "max_steal", "wait_s", "max_heat_c")})
    assert DriftCheck() == DriftCheck(schema_default("drift.repeats"),
                                      schema_default("drift.max_change"))
    assert MeterOptions().interval_s == schema_default("meter.interval_s")


DRIFT_KEY = """      settle_s:
        default: 0.5
        description: Seconds the machine rests before each reference measurement.
        type: number
        minimum: 0
"""
DRIFT_FIELD = """    settle_s: float = schema_default("drift.settle_s")
"""
REPEATS_KEY = """      pause_s:
        default: 0
        description: Seconds the machine rests between two repeats.
        type: number
        minimum: 0
"""
REPEATS_FIELD = """    pause_s: float = schema_default("repeats.pause_s")
"""
# The job `wattzip job` runs (measurement.job_of), of the spec the study model writes.
JOB_RUNS_WITH = """
import sys
from types import SimpleNamespace
from wattzip.measure import measurement, spec as specs
from wattzip.model.study import Study
study = Study.from_files(sys.argv[1:])
job = next(j for j in study.jobs(study.first_testbed) if j.codec != "plain")
spec = specs.check(specs.read_json(specs.text(study.job_spec(job))), specs.JOB)
manifest = {"file_type": job.file_type, "path": "in", "sha256": "0" * 64, "size_bytes": 1}
run = measurement.job_of(
    spec, manifest, specs.medium(spec), measurement.codec_on(job.codec, specs.medium(spec)),
    SimpleNamespace(name="model", model=None), measurement.IdleCalibration(None, {}),
    measurement.Invocation(manifest="m", journal="j", out="o"))
print(run.drift.settle_s, run.repeats.pause_s)
"""


def _insert(path: Path, text: str, *marks: str) -> None:
    """`text` inserted into the file after `marks`, each found after the one before."""
    old, at = path.read_text(), 0
    for mark in marks:
        at = old.index(mark, at) + len(mark)
    path.write_text(old[:at] + text + old[at:])


def test_a_setting_a_job_reads_is_its_schema_entry_and_the_code_that_reads_it(tmp_path):
    """A key added to drift: or repeats: in the config schema, and a field of its name in
    DriftCheck or RepeatRule (the code that uses it), reaches the drift check or the repeat
    rule of the job `wattzip job` runs, through the spec the study model writes: no line
    of the spec's schema, the model, the spec's reader or the job."""
    pkg = tmp_path / "pkg"
    shutil.copytree(REPO / "wattzip", pkg / "wattzip",
                    ignore=shutil.ignore_patterns("__pycache__"))
    schema = pkg / "wattzip" / "data" / "schema.yaml"
    for section, key in (("drift", DRIFT_KEY), ("repeats", REPEATS_KEY)):
        _insert(schema, key, f"\n  {section}:\n", "\n    properties:\n")
    _insert(pkg / "wattzip" / "measure" / "disturbance.py", DRIFT_FIELD,
            '    max_change: float = schema_default("drift.max_change")\n')
    _insert(pkg / "wattzip" / "analysis" / "stopping.py", REPEATS_FIELD,
            '    watch: tuple[str, ...] = tuple(schema_default("repeats.watch"))', "\n")
    env = {**os.environ, "PYTHONPATH": str(pkg)}
    for given, taken in (({"drift": {"repeats": 2}}, ["0.5", "0"]),
                         ({"drift": {"repeats": 2, "settle_s": 2.5},
                           "repeats": {"pause_s": 1.5}}, ["2.5", "1.5"])):
        overlay = tmp_path / "overlay.yaml"
        overlay.write_text(yaml.safe_dump(given))
        done = subprocess.run([sys.executable, "-c", JOB_RUNS_WITH, str(REPO / "config.yaml"),
                               str(TINY), str(overlay)], env=env, cwd=tmp_path,
                              capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.split() == taken  # the schema's defaults, then the config's


METER = '''
import time
from wattzip.meters.base import Meter, Reading


class LoggerMeter(Meter):
    name = "logger"
    scope = "wall"
    OPTIONS = {"logger_port": None}

    @classmethod
    def probe(cls, options):
        return None if options.logger_port else "logger: no meter.logger_port"

    def start(self):
        self._t0 = time.monotonic()

    def stop(self):
        return Reading(0.0, [], self.name, self.scope, self.method,
                       time.monotonic() - self._t0)
'''


def test_a_meter_and_a_figure_are_their_own_files(tmp_path):
    """A meter is its module and its schema entry (its accuracy row besides): the package
    finds it, orders it as meter.order lists it and a config's key sets its option. A
    figure is its script: rule figures_of_testbed draws it, or figures_per_file_type
    when its header line says so (wattzip.model.layout.figure_scripts)."""
    from wattzip.model import layout

    pkg = tmp_path / "pkg"
    shutil.copytree(REPO / "wattzip", pkg / "wattzip",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "wattzip" / "meters" / "logger.py").write_text(METER)
    schema = pkg / "wattzip" / "data" / "schema.yaml"
    text = schema.read_text().replace("enum: [powercap, perf, ipmi, wattsup, trace, model]",
                                      "enum: [powercap, perf, ipmi, wattsup, logger, trace, "
                                      "model]", 1)
    text = text.replace("      trace_wait_s:\n", "      logger_port:\n        description: "
                        "The logger's serial port.\n        type: [string, \"null\"]\n"
                        "      trace_wait_s:\n", 1)
    schema.write_text(text)
    done = subprocess.run(
        [sys.executable, "-c", "from wattzip import meters; print(list(meters.METERS)); "
         "print(meters.options_of({'order': ['logger'], 'logger_port': '/dev/x'})"
         ".logger_port)"], env={**os.environ, "PYTHONPATH": str(pkg)}, cwd=tmp_path,
        capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split("\n")[:2] == [
        "['powercap', 'perf', 'ipmi', 'wattsup', 'logger', 'trace', 'model', 'none']",
        "/dev/x"]
    # A figure is its script (and main.tex): one per testbed, or one per file type by
    # its header line, which the layout reads; the package's copy lists its files.
    scripts = pkg / "scripts"  # beside the package, as in a checkout
    shutil.copytree(REPO / "scripts", scripts)
    (scripts / "fig_heat.R").write_text("# a figure of every testbed\n")
    (scripts / "fig_spread.R").write_text("# wattzip-figure: per=file_type\n# spread\n")
    assert layout.testbed_figures(scripts)["heat"] == {"script": "fig_heat.R"}
    assert set(layout.testbed_figures(scripts)) - set(layout.testbed_figures()) == {"heat"}
    assert set(layout.file_type_figures(scripts)) - set(layout.file_type_figures()) == {
        "spread"}
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from wattzip.model.layout import Tree; "
         "from wattzip.model.study import Study; s = Study.from_files(sys.argv[1:]); "
         "print('\\n'.join(Tree(s, 'rehearsal').figures(s.first_testbed)))",
         str(REPO / "config.yaml"), str(TINY)], env={**os.environ, "PYTHONPATH": str(pkg)},
        cwd=tmp_path, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    listed = {Path(f).name for f in done.stdout.split()}
    assert {"heat.pdf", "spread_text.pdf", "energy_text.pdf", "et_text.pdf"} <= listed
