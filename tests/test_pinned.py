"""A pinned corpus (issue 80, item 1): a declared list of files with sizes and sha256,
checked before any byte is generated, so before anything is measured; a changed or
missing file is refused by its name. The Silesia corpus's declaration ships with
wattzip; the tests use a small stand-in corpus declared the same way
(tests/data/corpora/standin.yaml), copied as a user would unpack theirs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from wattzip.errors import ConfigError
from wattzip.workload import inputs, pinned

pytestmark = pytest.mark.pure
CORPORA = Path(__file__).parent / "data" / "corpora"
STANDIN = CORPORA / "standin.yaml"


@pytest.fixture
def unpacked(tmp_path) -> Path:
    """The stand-in corpus unpacked in a folder of its own, beside a file it does not
    declare (a README a user left there)."""
    folder = tmp_path / "standin"
    shutil.copytree(CORPORA / "standin", folder)
    (folder / "README").write_text("not part of the corpus\n")
    return folder


def gen(folder: Path, out: Path, size: int | None = None) -> dict:
    return inputs.generate("user", size, out, sources=[str(folder)], progress=False,
                           declared=str(STANDIN))


def test_the_declared_corpus_is_its_files_whole_in_their_order(unpacked, tmp_path):
    declared = pinned.load(STANDIN)
    entry = gen(unpacked, tmp_path / "in" / "user.bin")
    expected = b"".join((unpacked / name).read_bytes() for name, _, _ in declared.files)
    assert (tmp_path / "in" / "user.bin").read_bytes() == expected
    assert entry["size_bytes"] == declared.total == len(expected)
    [source] = entry["sources"]
    assert source["kind"] == "pinned corpus" and source["corpus"] == "standin"
    assert source["files"] == ["prose.txt", "table.csv", "runs.log"]  # not the README


@pytest.mark.parametrize("change, said", [
    (lambda f: f.write_bytes(f.read_bytes()[:-1] + b"?"), "table.csv has sha256 "),
    (lambda f: f.write_bytes(f.read_bytes() + b"more"), "table.csv has 7854 bytes, not 7850"),
    (lambda f: f.unlink(), "table.csv is missing"),
], ids=["a changed byte", "a longer file", "a missing file"])
def test_a_changed_or_missing_file_is_refused_by_name_before_any_byte(
        unpacked, tmp_path, change, said):
    change(unpacked / "table.csv")
    out = tmp_path / "in" / "user.bin"
    with pytest.raises(ConfigError, match=f"corpus standin in {unpacked} is not the "
                                          f"declared one .*{said}"):
        gen(unpacked, out)
    assert not out.exists() and not out.with_name("user.bin.partial").exists()


def test_a_pinned_corpus_is_measured_whole(unpacked, tmp_path):
    with pytest.raises(ConfigError, match="measured whole, 50440 bytes; set file_size to "
                                          "50440B, not 1048576 bytes"):
        gen(unpacked, tmp_path / "user.bin", size=1 << 20)


def test_silesia_is_declared_with_its_twelve_published_files():
    silesia = pinned.shipped("silesia")
    assert [name for name, _, _ in silesia.files] == [
        "dickens", "mozilla", "mr", "nci", "ooffice", "osdb", "reymont", "samba", "sao",
        "webster", "x-ray", "xml"]
    assert silesia.total == 211_938_580  # the corpus's published total
    assert "BrianPugh/tamp" in silesia.source


def test_a_copy_of_silesia_without_its_files_is_refused_naming_each(tmp_path):
    (tmp_path / "silesia").mkdir()
    (tmp_path / "silesia" / "dickens").write_bytes(b"not Dickens\n")
    with pytest.raises(ConfigError) as refused:
        inputs.generate("silesia", None, tmp_path / "in" / "silesia.bin",
                        sources=[str(tmp_path / "silesia")], progress=False)
    said = str(refused.value)
    assert "dickens has 12 bytes, not 10192446" in said
    assert all(f"{name} is missing" in said for name in ("mozilla", "xml", "x-ray"))


@pytest.mark.parametrize("document, why", [
    ({"files": []}, "no list of files"),
    ({"files": [{"name": "a/b", "size": 1, "sha256": "0" * 64}]}, "not a plain name"),
    ({"files": [{"name": "a", "size": -1, "sha256": "0" * 64}]}, "not a number of bytes"),
    ({"files": [{"name": "a", "size": 1, "sha256": "abc"}]}, "not 64 hex digits"),
])
def test_a_declaration_that_pins_nothing_is_refused(document, why):
    with pytest.raises(ConfigError, match=why):
        pinned.parse(document, "mine.yaml")


def test_the_pre_flight_checks_each_pinned_file_type_before_anything_is_measured(unpacked):
    """The pre-flight runs before the idle calibration and every job: a changed corpus
    stops the study there, named, however the rules order the rest."""
    from wattzip.model import preflight

    pins = {"user": {"source": str(unpacked), "declared": str(STANDIN)}}
    assert preflight.check_pinned(pins)["user"]["files"] == ["prose.txt", "table.csv",
                                                             "runs.log"]
    (unpacked / "prose.txt").write_text("another text\n")
    with pytest.raises(preflight.PreflightError, match="file type user: corpus standin .* "
                                                       "prose.txt has 13 bytes"):
        preflight.check_pinned(pins)
    with pytest.raises(preflight.PreflightError, match="give sources.silesia"):
        preflight.check_pinned({"silesia": {"source": None, "declared": None}})


def test_the_rules_pin_what_the_config_declares():
    from wattzip.model.layout import RuleLookups
    from wattzip.model.study import Study

    from .test_design import BASE
    from .test_lookups import Wildcards

    config = {**BASE, "file_types": ["text", "user", "silesia"],
              "sources": {"user": ["/srv/mine"], "silesia": ["/srv/silesia"]},
              "pinned": {"user": "mine.yaml"}}
    rules = RuleLookups(Study(config), config, [])
    assert rules.pinned_corpora() == {
        "user": {"source": "/srv/mine", "declared": "mine.yaml"},
        "silesia": {"source": "/srv/silesia", "declared": None}}
    assert rules.input_sources(Wildcards(ftype="user")) == \
        "--source /srv/mine --pinned mine.yaml"
    assert rules.input_sources(Wildcards(ftype="silesia")) == "--source /srv/silesia"


def test_the_plan_s_pilot_samples_a_corpus_from_its_source_unpinned(unpacked, tmp_path):
    """The pilot cannot make a type read from the user's data (user, silesia): it times
    its source's first bytes, at most its sample's size, a rate per byte; without a
    source it says which key to set."""
    from wattzip.model import plan

    size = plan.sample_input("silesia", tmp_path / "s.bin", 1, {"silesia": [str(unpacked)]})
    assert size == (tmp_path / "s.bin").stat().st_size == pinned.load(STANDIN).total + len(
        "not part of the corpus\n")  # every file of the folder, its README too: unpinned
    with pytest.raises(ConfigError, match=r"sources\.user"):
        plan.sample_input("user", tmp_path / "u.bin", 1, {})
