"""The rules' lookups (wattzip.model.layout), as Snakemake calls them: with wildcards,
and params functions with `input` too."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from wattzip.model.jobs import Job
from wattzip.model.layout import RuleLookups
from wattzip.model.study import Study

from .test_design import BASE, MEDIA

pytestmark = pytest.mark.pure


class Wildcards(SimpleNamespace):
    """Snakemake's wildcards: attributes, and items() as Namedlist gives them."""

    def items(self):
        return vars(self).items()


def lookups(copied_in=()) -> RuleLookups:
    config = {**BASE, "factors": {"medium": MEDIA}}
    return RuleLookups(Study(config), config, list(copied_in))


def test_a_job_spec_is_the_models_own_slice_of_the_study():
    rules = lookups()
    setting = rules.study.primary.name
    w = Wildcards(testbed="tb", setting=setting, part="text", codec="gz-1")
    spec = json.loads(rules.study.job_spec_text(w))
    job = Job("tb", setting, "text", "gz-1", rules.measured)
    assert spec == json.loads(json.dumps(rules.study.job_spec(job), sort_keys=True))
    assert spec["codec"] == "gz-1" and spec["testbed"] == "tb"
    assert spec["meter"] == rules.testbeds["tb"].meter  # the config's, as it is
    # the drift check's pairs come from the folder the measure rule journals to
    assert spec["drift_pool"] == f"{rules.measured}/tb/journal"


def test_each_tree_answers_through_its_own_wildcards():
    rules = lookups(copied_in=["other"])
    measured, rehearsed = rules.measured, rules.rehearsed
    assert rules.tree(Wildcards(root=rehearsed)).stage == "rehearsal"
    assert rules.tree(Wildcards(root=measured)).stage == "results"
    summaries = rules.testbed_tables("summary.csv")(Wildcards(root=measured))
    assert summaries == [f"{measured}/tb/summary.csv", f"{measured}/other/summary.csv"]
    assert rules.in_root("{testbed}/runs.csv")(Wildcards(root=rehearsed, testbed="tb")) \
        == f"{rehearsed}/tb/runs.csv"


def test_the_rehearsal_comes_first_and_copied_in_testbeds_are_never_measured():
    assert lookups().all_outputs()[0] == f"{lookups().rehearsed}/paper.pdf"
    assert lookups(copied_in=["other"]).this_testbed() == "tb"


def test_the_settings_flag_is_quoted_and_absent_without_a_table():
    assert RuleLookups.settings_flag(None, SimpleNamespace(settings="a b.csv")) \
        == "--settings 'a b.csv'"
    assert RuleLookups.settings_flag(None, SimpleNamespace(settings=[])) == ""


def test_a_job_claims_every_core_of_a_testbed_outside_slurm():
    assert lookups().threads(lambda: 7)(Wildcards(testbed="tb")) == 7


def test_a_testbed_s_slurm_options_reach_sbatch_s_shell_as_words(tmp_path):
    """The executor plugin runs its sbatch line in a shell: a config value is its words."""
    import shlex
    import subprocess

    import pytest

    from wattzip.errors import ConfigError
    from wattzip.model.config import validate

    mark = tmp_path / "ran"
    config = {**BASE, "testbeds": [{"name": "tb", "slurm": {
        "nodelist": "n1", "extra": f"--time=1:00:00 --comment=$(touch {mark})"}}]}
    extra = RuleLookups(Study(config), config, []).slurm["slurm_extra"](
        Wildcards(testbed="tb"))
    assert shlex.split(extra) == ["--exclusive", "--nodelist=n1", "--time=1:00:00",
                                  "--comment=$(touch", f"{mark})"]  # words, as typed
    subprocess.run(f"echo {extra}", shell=True, check=True, capture_output=True)
    assert not mark.exists()
    bad = {**BASE, "testbeds": [{"name": "tb", "slurm": {"nodelist": f"n1; touch {mark}"}}]}
    with pytest.raises(ConfigError, match="nodelist"):
        validate(bad, "my-cluster.yaml")
