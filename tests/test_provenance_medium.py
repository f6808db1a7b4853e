"""provenance.json describes the primary medium as its jobs see it.

An image, a tmpfs or a block device is mounted only while a job runs; what lies under
its mount point between jobs (the study's folder, on the root disk) is not what the runs
wrote to. The provenance names the medium's kind and filesystem, and the disk its I/O
reaches: under an image's file, none for a tmpfs.
"""

from __future__ import annotations

import json
import subprocess

from wattzip.machine import system
from wattzip.machine.media import Medium

from .test_machine import WATTZIP


def provenance(tmp_path, medium: dict | None) -> dict:
    out = tmp_path / "provenance.json"
    flags = ["--medium", json.dumps(medium)] if medium else []
    proc = subprocess.run([*WATTZIP, "provenance", "--meter", "none", "--codecs", "gz-1",
                           "--target-dir", str(tmp_path / "target"), "--out", str(out),
                           *flags], capture_output=True, text=True, check=False,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


def test_a_tmpfs_is_described_as_memory_not_as_the_disk_under_its_mount_point(tmp_path):
    folder = provenance(tmp_path, None)
    assert folder["target_device"]["disk"]  # the folder alone: the disk it is on
    tmpfs = provenance(tmp_path, Medium(name="ram", kind="tmpfs", path=str(tmp_path / "target"),
                                        size="16MiB").to_spec())
    assert tmpfs["medium_kind"] == "tmpfs" and tmpfs["target_device"]["disk"] is None
    assert tmpfs["filesystem"] == {"fstype": "tmpfs", "source": "memory",
                                   "mount_point": str(tmp_path / "target")}
    assert tmpfs["io_scheduler"] is None
    rows = {r["key"]: r["value"] for r in system.provenance_rows(tmpfs)}
    assert rows["primary medium"] == "tmpfs"


def test_an_image_is_described_by_its_filesystem_and_the_disk_under_its_file(tmp_path):
    image = tmp_path / "images" / "ext4.img"
    image.parent.mkdir()
    medium = Medium(name="img", kind="image", path=str(tmp_path / "target"), fs="ext4",
                    size="64MiB", image=str(image))
    info = provenance(tmp_path, medium.to_spec())
    assert info["medium_kind"] == "image"
    assert info["filesystem"]["fstype"] == "ext4"
    assert info["filesystem"]["source"] == str(image)
    assert info["target_device"]["disk"] == system.scheduler_disk(image.parent)
