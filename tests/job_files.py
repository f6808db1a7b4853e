"""A job as the workflow gives it to `wattzip job`: its spec, written by the study model,
and the files of its invocation (the conftest's fixture `job_files`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from wattzip.measure import spec as specs
from wattzip.model.study import Study

from .test_design import BASE


def make(folder: Path, text_input: tuple[Path, dict]) -> dict[str, Path]:
    """The text/gz-1 job of a small study (2 repeats, no drift check; its config in
    study.yaml), as flags and paths: --spec, --manifest, --journal (not yet written) and
    --out."""
    path, entry = text_input
    manifest = folder / "text.bin.json"
    manifest.write_text(json.dumps({**entry, "path": str(path)}))
    config = {**BASE, "file_types": ["text"], "codecs": ["gz-1"],
              "target_dir": "results/{testbed}/target",
              "repeats": {"min": 2, "max": 2, "ci_target": 0.5}, "drift": {"repeats": 0}}
    (folder / "study.yaml").write_text(yaml.safe_dump(config))  # `wattzip job --configfile`'s
    study = Study(config)
    spec = folder / "gz-1.json"
    spec.write_text(specs.text(study.job_spec(next(j for j in study.jobs("tb")
                                                   if j.codec == "gz-1"))))
    return {"--spec": spec, "--manifest": manifest, "--journal": folder / "journal.jsonl",
            "--out": folder / "runs.jsonl"}


def wattzip_job(files: dict, *flags: str) -> subprocess.CompletedProcess:
    """`wattzip job` given these files (by flag), and any other flags."""
    argv = [str(x) for flag, path in files.items() for x in (flag, path)]
    return subprocess.run([sys.executable, "-m", "wattzip", "job", *argv, *flags],
                          capture_output=True, text=True, check=False)


def spec_text(kind: str, target_dir: Path, *, setting: dict | None = None,
              medium: dict | None = None, **parts) -> str:
    """A spec as a user's hand run gives `wattzip job --spec` (a bz-9 job on random
    data) or `wattzip idle --spec` (kind specs.JOB or IDLE): a one-testbed study's on the
    estimated model meter (1 W idle, 2 W at full load), writing to `target_dir`, its
    setting and medium updated and its other parts (idle, repeats, ...) set as given."""
    study = Study({**BASE, "file_types": ["random"], "codecs": ["bz-9"],
                   "target_dir": str(target_dir), "drift": {"repeats": 0},
                   "meter": {"order": ["model"],
                             "model": {"idle_power_w": 1, "max_power_w": 2}}})
    spec = (study.idle_spec("tb", study.primary.name) if kind == specs.IDLE
            else study.job_spec(next(j for j in study.jobs("tb") if j.codec == "bz-9")))
    spec["setting"].update(setting or {})
    spec["medium"].update(medium or {})
    for part, value in parts.items():
        spec[part] = {**spec[part], **value} if isinstance(value, dict) else value
    return specs.text(specs.check(spec, kind))
