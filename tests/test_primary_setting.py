"""Every number that describes "the" setting belongs to one and the same setting.

A tiny study on two media (tmpfs and an ext2 image), run end to end with tmpfs first
(after ext2 by name, so a table that took the first setting by name or by measuring
order would show ext2's): idle power, provenance, the tables, the macros and the
figures' default panel must all be the primary setting's, and the report names it.
Which setting is primary in either order is the model's (Study.primary), checked on
its own.
"""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml

from .test_workflow import REPO, SNAKEMAKE, read_csv, workflow_copy

pytestmark = pytest.mark.workflow
MEDIA = {
    "tmpfs": {"kind": "tmpfs", "path": "results/{testbed}/on tmpfs", "size": "16MiB"},
    "ext2": {"kind": "image", "path": "results/{testbed}/on ext2", "size": "32MiB",
             "fs": "ext2"},
}


def two_media(path, order):
    """The overlay of the two media in `order` (the media's order is what decides)."""
    path.write_text(yaml.safe_dump({
        "testbed": {"name": "media2"}, "file_types": ["text"], "file_size": "1MiB",
        "codecs": ["gz-1"], "idle": {"count": 1, "seconds": 0.2},
        "repeats": {"min": 2, "max": 2, "ci_target": 0.05}, "crosscheck": {"codecs": []},
        "factors": {"medium": {m: MEDIA[m] for m in order}},
    }, sort_keys=False))
    return path


@pytest.mark.parametrize("order", [["tmpfs", "ext2"], ["ext2", "tmpfs"]],
                         ids=["tmpfs-first", "ext2-first"])
def test_the_first_medium_of_the_config_is_the_primary_setting_s(order, tmp_path):
    from wattzip.model.study import Study

    study = Study.from_files([REPO / "config.yaml", two_media(tmp_path / "o.yaml", order)])
    assert study.primary.medium == order[0]
    assert "first value" in study.primary_rule


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    root = workflow_copy(tmp_path_factory.mktemp("primary") / "wf")
    overlay = two_media(root / "two-media.yaml", ["tmpfs", "ext2"])
    proc = subprocess.run([*SNAKEMAKE, "--cores", "2", "--configfile", "config.yaml",
                           str(overlay)], cwd=root, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return root, "tmpfs"


def test_the_primary_setting_is_the_one_the_rule_names(study):
    root, first = study
    settings = read_csv(root / "results/default/media2/settings.csv")
    primary = [s for s in settings if s["primary"] == "true"]
    assert len(primary) == 1 and primary[0]["medium"] == first
    for table in ("summary", "breakeven", "claims"):
        rows = read_csv(root / f"results/default/media2/{table}.csv")
        flagged = {r["setting"] for r in rows if r["primary"] == "true"}
        assert flagged == {primary[0]["setting"]}, table


def test_idle_provenance_tables_macros_and_figures_describe_that_setting(study):
    root, first = study
    name = next(s["setting"] for s in read_csv(root / "results/default/media2/settings.csv")
                if s["primary"] == "true")
    macros = (root / "results/default/generated/macros.tex").read_text()
    idle = json.loads((root / f"results/default/media2/idle/{name}.json").read_text())
    assert idle["setting"] == name
    assert f"\\newcommand{{\\IdlePowerW}}{{{idle['idle_power_w']:.1f}}}" in macros
    assert f"\\newcommand{{\\PrimarySetting}}{{{name}}}" in macros
    provenance = json.loads((root / "results/default/media2/provenance.json").read_text())
    assert provenance["target_dir"].endswith(f"on {first}")
    # Every figure and table script that shows one setting logs which one it took.
    logs = sorted([*(root / "results/default").rglob("*.log"),
                   *(root / "figures/default/logs").rglob("*.log")])
    taken = [m for log in logs
             for m in re.findall(r"primary setting: (\S+)", log.read_text())]
    assert taken and set(taken) == {name}
    text = subprocess.run(["pdftotext", str(root / "results/default/paper.pdf"), "-"],
                          capture_output=True, text=True, check=True).stdout
    assert name in text.replace("\n", "")
