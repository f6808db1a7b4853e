"""Every number that describes "the" setting belongs to one and the same setting; each
distinct compressed output is decompressed once across the settings; and a second study
on one machine gives a second report of that one testbed.

A tiny study on three media (tmpfs, an ext2 image and a plain directory), run end to end
with tmpfs first (after ext2 by name, so a table that took the first setting by name or
by measuring order would show ext2's): idle power, provenance, the tables, the macros
and the figures' default panel must all be the primary setting's, and the report names
it. The verification cache is counted from outside the job's bookkeeping too: its
entries and every run's `verification` field, against the distinct outputs.
Which setting is primary in either order is the model's (Study.primary), checked on
its own. It is measured beside the tiny study (a copy of its finished workflow): the
same testbed's second study, whose report lists that testbed alone, as the first's does.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
import yaml

from .test_workflow import REPO, SNAKEMAKE, TINY, read_csv

# Beside the pure tests, as the tiny study it copies (tests/data/tiny.yaml: no quiet check).
pytestmark = [pytest.mark.workflow, pytest.mark.beside_pure]
MEDIA = {
    "tmpfs": {"kind": "tmpfs", "path": "results/{study}/{testbed}/on tmpfs", "size": "16MiB"},
    "ext2": {"kind": "image", "path": "results/{study}/{testbed}/on ext2", "size": "32MiB",
             "fs": "ext2", "flush": "unmount"},
    "directory": "results/{study}/{testbed}/in a directory",
}
TESTBED = "tiny"  # the tiny study's: one testbed, two studies


def media(path, order):
    """The overlay of the media in `order` (the media's order is what decides)."""
    tiny = yaml.safe_load(TINY.read_text())
    path.write_text(yaml.safe_dump({
        "testbed": {"name": TESTBED}, "file_types": ["text"], "file_size": "1MiB",
        "codecs": ["gz-1"], "repeats": {"min": 2, "max": 2, "ci_target": 0.05},
        "crosscheck": {"codecs": []},
        # the tiny study's idle calibration, quiet checks (off) and drift check (none):
        # its comments say why; no setting's number comes from them
        **{key: tiny[key] for key in ("idle", "quiet", "drift")},
        "factors": {"medium": {m: MEDIA[m] for m in order}},
    }, sort_keys=False))
    return path


@pytest.mark.parametrize("order", [["tmpfs", "ext2"], ["ext2", "tmpfs"]],
                         ids=["tmpfs-first", "ext2-first"])
def test_the_first_medium_of_the_config_is_the_primary_setting_s(order, tmp_path):
    from wattzip.model.study import Study

    study = Study.from_files([REPO / "config.yaml", media(tmp_path / "o.yaml", order)])
    assert study.primary.medium == order[0]
    assert "first value" in study.primary_rule


@pytest.fixture(scope="module")
def study(tiny_study, tmp_path_factory):
    root = tmp_path_factory.mktemp("primary") / "wf"
    shutil.copytree(tiny_study, root, symlinks=True)
    overlay = media(root / "media.yaml", ["tmpfs", "ext2", "directory"])
    proc = subprocess.run([*SNAKEMAKE, "--cores", "2", "--configfile", "config.yaml",
                           str(overlay)], cwd=root, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    # the first study's list of testbeds, made after the second study measured
    proc = subprocess.run([*SNAKEMAKE, "results/tiny/generated/testbed_list.tex", "--cores",
                           "2", "--configfile", str(TINY)], cwd=root, capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return root, "tmpfs"


def test_the_primary_setting_is_the_one_the_rule_names(study):
    root, first = study
    settings = read_csv(root / f"results/default/{TESTBED}/settings.csv")
    primary = [s for s in settings if s["primary"] == "true"]
    assert len(primary) == 1 and primary[0]["medium"] == first
    for table in ("summary", "breakeven", "claims"):
        rows = read_csv(root / f"results/default/{TESTBED}/{table}.csv")
        flagged = {r["setting"] for r in rows if r["primary"] == "true"}
        assert flagged == {primary[0]["setting"]}, table


def test_idle_provenance_tables_macros_and_figures_describe_that_setting(study):
    root, first = study
    name = next(s["setting"] for s in read_csv(root / f"results/default/{TESTBED}/settings.csv")
                if s["primary"] == "true")
    macros = (root / "results/default/generated/macros.tex").read_text()
    idle = json.loads((root / f"results/default/{TESTBED}/idle/{name}.json").read_text())
    assert idle["setting"] == name
    assert f"\\newcommand{{\\IdlePowerW}}{{{idle['idle_power_w']:.1f}}}" in macros
    assert f"\\newcommand{{\\PrimarySetting}}{{{name}}}" in macros
    provenance = json.loads((root / f"results/default/{TESTBED}/provenance.json").read_text())
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


def test_two_studies_on_one_machine_give_two_reports_of_one_testbed(study):
    """The tiny study and the media study, one testbed's: each lists that testbed alone,
    and the second's report draws no figure of testbeds side by side."""
    root, _ = study
    for name in ("tiny", "default"):
        tree = root / "results" / name
        assert sorted(p.name for p in tree.iterdir() if (p / "runs.csv").exists()) == [
            TESTBED]
        listed = (tree / "generated" / "testbed_list.tex").read_text()
        assert listed.count("\\\\") == 2  # the header and one testbed's row
        assert TESTBED in listed
    assert "testbeds.pdf" not in {p.name for p in (root / "figures" / "default").iterdir()}
    assert (root / "results" / "default" / "paper.pdf").exists()


def test_three_media_decompress_each_distinct_output_once(study):
    """Deterministic tools write the same bytes on every medium: gz-1's output of text is
    decompressed for verification in one job only, and the other media's jobs name it."""
    root, _ = study
    tree = root / f"results/default/{TESTBED}"
    runs = [r for r in read_csv(tree / "runs.csv") if r["op"] == "compress-write"]
    assert {r["factor_medium"] for r in runs} == {"tmpfs", "ext2", "directory"}
    assert {(r["codec"], r["file_type"]) for r in runs} == {("gz-1", "text")}
    entries = [json.loads(line) for line in
               (tree / "journal/verified.jsonl").read_text().splitlines()]
    assert len(entries) == len({(e["key"], e["output_sha256"]) for e in entries}) == 1
    first = min(runs, key=lambda r: r["started_at"])
    assert [r for r in runs if r["verification"] == "decompressed"] == [first]
    assert all(r["verification"].startswith(("identical bytes verified by job",
                                             "identical bytes verified earlier"))
               for r in runs if r is not first), runs
    # The logs say it, job by job: a later medium names the job whose decompression it
    # reuses.
    logs = [p.read_text() for p in (tree / "logs/runs").rglob("gz-1.log")]
    assert len(logs) == 3
    assert sum("verified by decompression" in text for text in logs) == 1
    assert sum("identical bytes verified by job" in text for text in logs) == 2
