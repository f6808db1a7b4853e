"""Bad inputs a new user tries are named errors, with nothing overwritten (issue 30)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wattzip.errors import ConfigError, WattzipError
from wattzip.measure import staging
from wattzip.model import plan
from wattzip.model.study import Study

REPO = Path(__file__).resolve().parent.parent


def test_a_damaged_pilot_cache_is_named_and_kept(tmp_path):
    cache = tmp_path / "pilot.json"
    cache.write_text('{"gen|zero": 1e-9, "zero|pl')  # torn by a full disk
    with pytest.raises(WattzipError, match=f"pilot cache {cache} is damaged"):
        plan.pilot(["zero"], [], cache)
    assert cache.read_text() == '{"gen|zero": 1e-9, "zero|pl'
    assert list(tmp_path.iterdir()) == [cache]


def test_a_missing_compsize_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match="compsize, which is not installed"):
        staging.on_disk_bytes(str(tmp_path))


def default_job_spec() -> dict:
    """The spec the default study gives its first job (wattzip.measure.spec)."""
    study = Study.from_files([REPO / "config.yaml"])
    return study.job_spec(study.jobs(study.first_testbed)[0])


def job_with(spec: str, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wattzip", "job", "--spec", spec,
                           "--manifest", "m.json", "--journal", "j.jsonl", "--out", "o.json",
                           *flags], capture_output=True, text=True, check=False)


@pytest.mark.parametrize("change, said", [
    (lambda s: s["setting"].update(copies=0),
     "--spec: at setting.copies: 0 is less than the minimum of 1"),
    (lambda s: s["meter"].update(interval_s=-1),
     "--spec: at meter.interval_s: -1 is less than or equal to the minimum of 0"),
    (lambda s: s.update(codec=["gz-1"]), "--spec: at codec: ['gz-1'] is not of type 'string'"),
    (lambda s: s["medium"].update(flush="never"), "at medium.flush: 'never' is not one of"),
    (lambda s: s.update(copies=1), "('copies' was unexpected)"),
    (lambda s: s["setting"].update(log_scheduler="bfq"),
     "at setting: factors no command sets: ['log_scheduler']"),
    (lambda s: s.update(spec="wattzip-idle/2"),
     "its \"spec\" is 'wattzip-idle/2', not 'wattzip-job/2': a spec of another command"),
    (lambda s: s.update(spec="wattzip-job/1"),
     "a document of another version. The study's workflow writes its specs again"),
])
def test_a_spec_is_checked_against_its_schema_with_the_key_named(tmp_path, change, said):
    """A hand-written or damaged spec is refused before anything runs, its key named as a
    config's is (data/spec.schema.yaml)."""
    spec = default_job_spec()
    change(spec)
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(spec))
    out = job_with(str(path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert said in out.stderr, out.stderr


@pytest.mark.parametrize("text, said", [
    ('[{"copies": 1}]', "--spec [{\"copies\": 1}] cannot be used: No such file"),
    ('{"spec": "wattzip-job/2", "copies": 1', "--spec: not JSON"),
])
def test_a_spec_that_is_no_json_object_is_named(text, said):
    out = job_with(text)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert said in out.stderr, out.stderr


def test_a_job_the_spec_names_is_not_chosen_beside_it():
    """Given both, neither silently wins: the spec is what the workflow recorded."""
    out = job_with(json.dumps(default_job_spec()), "--setting", "fast", "--codec", "gz-9")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "--setting, --codec: the spec names its job" in out.stderr, out.stderr


def plan_in(cwd, *configfiles):
    return subprocess.run([sys.executable, "-m", "wattzip", "plan", "--quiet", "--configfile",
                           *map(str, configfiles)], cwd=cwd, capture_output=True, text=True,
                          check=False)


@pytest.mark.parametrize("text, said", [
    ("repeats:\n  min: three\n", "at repeats.min: 'three' is not of type 'integer'"),
    ("file_types: [text\n", "is not YAML: while parsing a flow sequence"),
    ("- text\n", "a mapping of keys was expected, not list"),
    ("idle: {count: 3, window: 5}\n", "at idle.window: no such key; the keys here: count"),
])
def test_a_bad_overlay_given_to_plan_is_named_by_its_file_and_key(tmp_path, text, said):
    """wattzip plan reads the overlays on config.yaml as snakemake does, and validates them
    against the schema as the Snakefile does: a named error, not a KeyError later on."""
    from .test_workflow import REPO

    overlay = tmp_path / "mine.yaml"
    overlay.write_text(text)
    out = plan_in(REPO, overlay)
    assert out.returncode != 0 and "Traceback" not in out.stderr, out.stderr
    assert str(overlay) in out.stderr and said in out.stderr, out.stderr


def test_plan_outside_a_checkout_needs_the_whole_study(tmp_path):
    """With no config.yaml in the current directory, an overlay alone lacks the study's
    required keys, and a missing file is named."""
    from .test_workflow import TINY

    out = plan_in(tmp_path, TINY)
    assert "at meter: missing, and required" in out.stderr, out.stderr
    out = plan_in(tmp_path, tmp_path / "nx.yaml")
    assert f"config file {tmp_path / 'nx.yaml'}: No such file" in out.stderr
    assert "Traceback" not in out.stderr


def test_an_overlay_alone_is_read_on_config_yaml_as_snakemake_reads_it(monkeypatch):
    """`wattzip plan --configfile config/kick-the-tires.yaml`, as the README's snakemake
    command names it: the checkout's config.yaml first, then the overlay."""
    from wattzip.model.config import study_files
    from wattzip.model.study import Study

    from .test_workflow import REPO

    monkeypatch.chdir(REPO)
    files = study_files(["config/kick-the-tires.yaml"])
    assert files == ["config.yaml", "config/kick-the-tires.yaml"]
    assert Study.from_files(files).name == "kick-the-tires"


def test_plan_as_the_readme_runs_it_says_how_long_the_study_takes_here(tmp_path):
    """`wattzip plan --configfile config.yaml config/NAME.yaml` in a checkout: a pilot
    measured once per testbed, then each design's time on this machine; run again, the
    cached pilot answers without measuring."""
    import json

    from .test_workflow import TINY, workflow_copy

    root = workflow_copy(tmp_path / "wf")
    first = plan_in(root, "config.yaml", TINY)
    assert first.returncode == 0, first.stderr[-3000:]
    said = " ".join(first.stdout.split())
    assert "wattzip study 'tiny' on testbed 'tiny':" in said and "in all on this machine" in said
    assert "* paper" in said and "moderated" in said  # every design, this study's marked
    cache = root / "results" / "tiny" / "tiny" / "plan" / "pilot.json"
    pilot = json.loads(cache.read_text())
    again = subprocess.run([sys.executable, "-m", "wattzip", "plan", "--configfile",
                            "config.yaml", str(TINY)], cwd=root, capture_output=True,
                           text=True, check=False)
    assert again.returncode == 0 and "pilot:" not in again.stdout + again.stderr
    assert json.loads(cache.read_text()) == pilot
