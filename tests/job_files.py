"""A job as the workflow gives it to `wattzip job`: its spec, written by the study model,
and the files of its invocation (the conftest's fixture `job_files`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from wattzip.measure import spec as specs
from wattzip.model.study import Study

from .test_design import BASE


def make(folder: Path, text_input: tuple[Path, dict]) -> dict[str, Path]:
    """The text/gz-1 job of a small study (2 repeats, no drift check), as flags and paths:
    --spec, --manifest, --journal (not yet written) and --out."""
    path, entry = text_input
    manifest = folder / "text.bin.json"
    manifest.write_text(json.dumps({**entry, "path": str(path)}))
    study = Study({**BASE, "file_types": ["text"], "codecs": ["gz-1"],
                               "target_dir": "results/{testbed}/target",
                               "repeats": {"min": 2, "max": 2, "ci_target": 0.5},
                               "drift": {"repeats": 0}})
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
