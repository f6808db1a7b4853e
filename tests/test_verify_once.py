"""A factor study with three media: each distinct compressed output is decompressed for
verification once across jobs and settings, and the job logs say how each was verified.

Counted from outside the job's own bookkeeping too: the verification cache's entries and
every run's `verification` field, against the distinct (codec, file type) outputs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_workflow import read_csv, snakemake, workflow_copy

pytestmark = pytest.mark.workflow

THREE_MEDIA = """
factors:
  medium:
    ext2: {kind: image, path: "results/{testbed}/target dir", size: 32MiB, fs: ext2,
           flush: unmount}
    directory: "results/{testbed}/plain dir"
    tmpfs: {kind: tmpfs, path: "results/{testbed}/tmpfs", size: 32MiB}
  io_scheduler: [keep]
  bandwidth: [unlimited]
crosscheck: {codecs: []}
"""


def test_three_media_decompress_each_distinct_output_once(tmp_path):
    root = workflow_copy(tmp_path / "wf")
    overlay = root / "three-media.yaml"
    overlay.write_text(THREE_MEDIA)
    snakemake(root, targets=["runs.csv"], overlays=[overlay])
    runs = [r for r in read_csv(root / "results/tiny/tiny/runs.csv")
            if r["op"] == "compress-write"]
    assert {r["factor_medium"] for r in runs} == {"ext2", "directory", "tmpfs"}
    outputs = {(r["codec"], r["file_type"]) for r in runs}
    assert len(outputs) == 4  # gz-1 and lzo-1 on text and random

    cache = root / "results/tiny/tiny/journal/verified.jsonl"
    entries = [json.loads(line) for line in cache.read_text().splitlines()]
    # One decompression per distinct output: deterministic tools write the same bytes on
    # every medium, so each (codec, file type) is decompressed in one job only.
    assert len(entries) == len({(e["key"], e["output_sha256"]) for e in entries}) == 4

    decompressed = [r for r in runs if r["verification"] == "decompressed"]
    assert len(decompressed) == 4, [(r["factor_medium"], r["codec"], r["verification"])
                                    for r in runs]
    for codec, ftype in outputs:
        mine = [r for r in runs if (r["codec"], r["file_type"]) == (codec, ftype)]
        first = min(mine, key=lambda r: r["started_at"])
        assert first["verification"] == "decompressed"
        others = [r for r in mine if r is not first]
        assert all(r["verification"].startswith(("identical bytes verified by job",
                                                 "identical bytes verified earlier"))
                   for r in others), others

    # The logs say it, job by job: a later medium names the job whose decompression it
    # reuses.
    logs = {p: p.read_text() for p in Path(root / "results/tiny/tiny/logs/runs").rglob("*.log")
            if p.stem != "plain"}
    assert sum("verified by decompression" in text for text in logs.values()) == 4
    assert sum("identical bytes verified by job" in text for text in logs.values()) == 8
