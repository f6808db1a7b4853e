"""The study model: settings, jobs, defaults and the primary setting, from configs alone."""

from __future__ import annotations

import json

import pytest
import yaml

from wattzip import cli, resources
from wattzip.errors import ConfigError
from wattzip.model.config import merge_configs, with_defaults
from wattzip.model.study import Study
from wattzip.model.testbed import FACTORS
from wattzip.resources import load_schema, schema_default

from .test_workflow import REPO

pytestmark = pytest.mark.pure

BASE = {
    "testbed": {"name": "tb"}, "target_dir": "results/{testbed}/target",
    "file_types": ["text", "random"], "file_size": "1MiB", "codecs": ["gz-1", "lzo-1"],
    "meter": {"order": ["model"]}, "idle": {"count": 1, "seconds": 1},
    "repeats": {"min": 2, "max": 3, "ci_target": 0.05},
}
MEDIA = {"tmpfs": {"kind": "tmpfs", "path": "results/{testbed}/tmpfs", "size": "16MiB"},
         "ext2": {"kind": "image", "path": "results/{testbed}/ext2", "size": "32MiB"}}


def study(**overrides) -> Study:
    return Study({**BASE, **overrides})


def test_the_schema_defaults_are_the_only_defaults():
    s = study()
    assert s.config["seed"] == 2009 and s.config["threads"] == 0
    assert s.config["input_dir"] == "results/{study}/{testbed}/inputs"
    assert s.config["factors"] == {"io_scheduler": ["keep"], "governor": ["keep"],
                                   "copies": [1], "bandwidth": ["unlimited"]}
    assert s.config["crosscheck"] == {"codecs": [], "file_type": "text", "runs": 3}
    assert s.testbeds["tb"].input_dir == "results/default/tb/inputs"
    # Every default the model relies on is declared in the schema, where users read it.
    schema = load_schema()
    assert schema["properties"]["seed"]["default"] == 2009
    assert with_defaults({}, schema)["factors"]["bandwidth"] == ["unlimited"]


def test_the_command_line_takes_its_defaults_from_the_schema():
    """A command run alone decides as a study would: the verdict's margin, workload and
    effect and the seed come from the schema, as the analysis's own options' and wattzip
    bench's margin do (a job's settings are its spec's, from the config); the paper's
    confidence and precision target are one constant each (wattzip.stats)."""
    parser = cli.build_parser()
    analyze = parser.parse_args(["analyze", "runs.csv", "--out", "out"])
    assert (analyze.margin, analyze.reads_per_write) == (
        schema_default("verdict.margin"), schema_default("verdict.reads_per_write"))
    assert analyze.effect == schema_default("verdict.effect")
    assert parser.parse_args(["gen", "zero", "--out", "o"]).seed == schema_default("seed")
    # wattzip bench and the analysis's own options decide alike; the paper's levels once
    from wattzip.analysis.analysis_options import AnalysisOptions
    from wattzip.stats import PAPER_CI_TARGET, PAPER_CONFIDENCE

    bench = parser.parse_args(["bench", "true", "false"])
    assert bench.margin == AnalysisOptions().margin == schema_default("verdict.margin")
    assert bench.confidence == AnalysisOptions().confidence == PAPER_CONFIDENCE
    assert AnalysisOptions().effect == schema_default("verdict.effect")
    assert analyze.ci_target == AnalysisOptions().ci_target == PAPER_CI_TARGET


def test_settings_have_one_typed_field_per_factor():
    s = study(factors={"medium": MEDIA, "bandwidth": ["unlimited", "30MB/s"]})
    assert list(s.settings) == [
        "tmpfs.io-keep.gov-keep.x1", "tmpfs.io-keep.gov-keep.x1.bw-30MBps",
        "ext2.io-keep.gov-keep.x1", "ext2.io-keep.gov-keep.x1.bw-30MBps"]
    slow = s.settings["ext2.io-keep.gov-keep.x1.bw-30MBps"]
    assert (slow.medium, slow.machine, slow.copies) == (
        "ext2", {"io_scheduler": "keep", "governor": "keep"}, 1)
    assert slow.bandwidth_bytes_per_s == 30_000_000
    medium = slow.medium_on(s.testbeds["tb"])
    assert medium.kind == "image" and medium.path.endswith("results/tb/ext2")
    assert s.varied_factors == ["medium", "bandwidth"]
    assert set(slow.factors()) >= {"setting", "medium", "io_scheduler", "governor", "copies",
                                   "bandwidth_bytes_per_s"}


def test_a_setting_s_name_and_unconditioned_factors_come_from_the_factor_table(monkeypatch):
    """The settings are every combination of the factors of data/factors.csv, named by its
    name_part column: the model lists no factor again (a new one is its row, its schema
    key and its Setting field). Which factors make hyperfine's cross-check unlike the
    harness follows MACHINE_FACTORS, whose values left as they are ("keep") do not."""
    from wattzip.model import testbed

    monkeypatch.setitem(testbed.NAME_PARTS, "io_scheduler", "sched={}")
    s = study(factors={"medium": MEDIA, "io_scheduler": ["none", "keep"], "copies": [1, 2]})
    assert list(s.settings)[:3] == ["tmpfs.sched=none.gov-keep.x1",
                                    "tmpfs.sched=none.gov-keep.x2",
                                    "tmpfs.sched=keep.gov-keep.x1"]
    assert len(s.settings) == 2 * 2 * 2
    assert s.crosscheck_unconditioned("tb") == "medium tmpfs, io_scheduler none"
    doubled = s.settings["ext2.sched=keep.gov-keep.x2"]
    assert doubled.unconditioned("image") == [("medium", "image"), ("copies", 2)]


def test_jobs_cover_every_setting_type_and_codec_and_the_duty_cycle():
    s = study(factors={"medium": MEDIA},
              dutycycle={"phases": 2, "compute_s": 1, "file_type": "text",
                         "codecs": ["plain", "gz-1"]})
    jobs = s.jobs("tb")
    assert len(jobs) == 2 * 2 * 3 + 2 * 2
    assert jobs[0].path("runs") == ("results/default/tb/runs/tmpfs.io-keep.gov-keep.x1/text/"
                                    "gz-1.jsonl")
    assert {j.codec for j in jobs if j.file_type == "dutycycle"} == {"plain", "gz-1"}
    assert s.duty.compute == "idle"  # the schema's default


@pytest.mark.parametrize("order", [["tmpfs", "ext2"], ["ext2", "tmpfs"]])
def test_the_primary_setting_is_every_factor_at_its_first_listed_value(order):
    s = study(factors={"medium": {m: MEDIA[m] for m in order},
                       "bandwidth": ["unlimited", "30MB/s"]})
    assert s.primary.medium == order[0] and s.primary.bandwidth_bytes_per_s is None
    assert "first value" in s.primary_rule and order[0] in s.primary_rule
    rows = s.settings_rows()
    assert [r["setting"] for r in rows if r["primary"] == "true"] == [s.primary.name]
    assert set(rows[0]) == {"setting", *[f for f in FACTORS if f != "bandwidth"],
                            "bandwidth_bytes_per_s", "dutycycle", "machine", "primary"}


def test_the_config_can_name_the_primary_setting():
    s = study(factors={"medium": MEDIA, "bandwidth": ["unlimited", "30MB/s"]},
              primary={"medium": "ext2", "bandwidth": "30MB/s"})
    assert s.primary.name == "ext2.io-keep.gov-keep.x1.bw-30MBps"
    assert "primary key" in s.primary_rule
    with pytest.raises(ConfigError, match="no setting has"):
        study(factors={"medium": MEDIA}, primary={"medium": "ssd"})


def test_bad_designs_are_named():
    with pytest.raises(ConfigError, match="below repeats.min"):
        study(repeats={"min": 3, "max": 2, "ci_target": 0.05})
    with pytest.raises(ConfigError, match="not among the study's file_types"):
        study(dutycycle={"phases": 1, "compute_s": 1, "file_type": "zero", "codecs": ["plain"]})
    with pytest.raises(ConfigError, match="names must differ"):
        study(testbeds=[{"name": "a"}, {"name": "a"}])


def test_a_codec_limited_to_some_file_types_has_no_job_on_the_others():
    """codec_file_types leaves a codec's other cells unmeasured under every design (the
    plain arm of every file type stays), and the report's clause names them."""
    for design in ("paper", "moderated"):
        s = study(codec_file_types={"lzo-1": ["text"]},
                  repeats={**BASE["repeats"], "design": design})
        cells = {(j.file_type, j.codec) for j in s.jobs("tb")}
        assert ("random", "lzo-1") not in cells and ("text", "lzo-1") in cells
        assert {("text", "gz-1"), ("random", "gz-1")} <= cells
        assert (("random", "plain") in cells) == (design == "paper")
        assert s.scope.describe() == "lzo-1 measured on text only, not on random"
    assert study().scope.describe() == ""
    with pytest.raises(ConfigError, match="'zstd-3' is not among the study's codecs"):
        study(codec_file_types={"zstd-3": ["text"]})
    with pytest.raises(ConfigError, match=r"codec_file_types.gz-1: \['zero'\] not among"):
        study(codec_file_types={"gz-1": ["zero"]})
    with pytest.raises(ConfigError, match="'lzo-1' is not measured on text"):
        _ = study(codec_file_types={"lzo-1": ["random"]},
                  crosscheck={"codecs": ["lzo-1"], "file_type": "text"}).crosscheck


def test_every_shipped_config_builds_a_model():
    for overlay in sorted((REPO / "config").glob("*.yaml")):
        if overlay.name == "schema.yaml":
            continue
        s = Study(merge_configs([REPO / "config.yaml", overlay]))
        assert s.primary.name in s.settings, overlay


def test_an_emulated_disk_holds_its_inputs_by_default_and_says_so():
    """The paper's layout is the default for images in a study of emulated disks; the
    other media, and images in a study without a bandwidth factor, read the input where
    it is; an explicit layout wins."""
    disks = study(factors={"medium": MEDIA, "bandwidth": ["unlimited", "30MB/s"]})
    layouts = {(s.medium, s.bandwidth): s.medium_spec.get("inputs")
               for s in disks.settings.values()}
    assert layouts[("ext2", "unlimited")] == layouts[("ext2", "30MB/s")] == "on-medium"
    assert layouts[("tmpfs", "30MB/s")] is None
    assert disks.emulated_input_layouts() == ["separate", "on-medium"]  # tmpfs, ext2
    plain = study(factors={"medium": MEDIA})
    assert {s.medium_spec.get("inputs") for s in plain.settings.values()} == {None, "separate"}
    assert plain.emulated_input_layouts() == []
    own = study(factors={"medium": {"ext2": {**MEDIA["ext2"], "inputs": "separate"}},
                         "bandwidth": ["30MB/s"]})
    assert own.emulated_input_layouts() == ["separate"]


def test_inputs_on_a_medium_that_is_not_an_image_are_refused():
    with pytest.raises(ConfigError, match="on-medium needs kind image"):
        study(factors={"medium": {"t": {**MEDIA["tmpfs"], "inputs": "on-medium"}}})


@pytest.mark.parametrize("name", ["schema.yaml", "codecs.yaml"])
def test_the_package_s_yaml_reads_as_pyyaml_s_own_parser_reads_it(name):
    text = resources.data().joinpath(name).read_text(encoding="utf-8")
    assert resources.load_yaml(text) == yaml.safe_load(text)


def test_a_caller_cannot_change_the_schema_another_caller_reads():
    first = load_schema()
    first["properties"]["verdict"]["properties"]["margin"]["default"] = 0.5
    schema_default("verdict.kind_metrics").append("ET")
    assert load_schema() != first
    assert schema_default("verdict.margin") != 0.5
    assert schema_default("verdict.kind_metrics") == ["T", "E"]


def test_a_job_names_its_media_from_the_study_s_folder(tmp_path, monkeypatch):
    """What Snakemake compares between invocations (a job's spec, the pre-flight's and the
    cross-check's params) names a medium inside the study's folder relative to it, so
    moving the folder measures nothing again. A medium outside it, reached through a
    link in the folder, keeps its resolved absolute path."""
    outside = tmp_path / "ssd"
    outside.mkdir()
    (tmp_path / "wf/results").mkdir(parents=True)
    (tmp_path / "wf/results/linked").symlink_to(outside)
    monkeypatch.chdir(tmp_path / "wf")
    s = study(factors={"medium": {**MEDIA, "far": {"path": "results/linked/target"}}})
    specs = {s_.medium: s.job_spec(next(j for j in s.jobs("tb") if j.setting == s_.name))
             for s_ in s.settings.values()}
    assert specs["ext2"]["medium"]["path"] == "results/tb/ext2"
    assert specs["ext2"]["medium"]["image"] == "results/tb/ext2.img"
    assert specs["tmpfs"]["medium"]["path"] == "results/tb/tmpfs"
    assert specs["far"]["medium"]["path"] == str(outside / "target")
    preflight = s.preflight_settings("tb")
    assert {v["target_dir"] for v in preflight.values()} == {
        "results/tb/ext2", "results/tb/tmpfs", str(outside / "target")}
    assert not any(str(tmp_path / "wf") in json.dumps(v) for v in (specs, preflight))
