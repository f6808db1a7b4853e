import gzip
import os

import pytest

from wattzip import units
from wattzip.errors import ConfigError
from wattzip.workload import inputs

from .conftest import SMALL

pytestmark = pytest.mark.pure


def test_sizes_are_exact(small_inputs):
    for path, entry in small_inputs.values():
        assert os.path.getsize(path) == SMALL == entry["size_bytes"]
        assert inputs.sha256_file(path) == entry["sha256"]


def test_zero_file_is_not_sparse(small_inputs):
    path, _ = small_inputs["zero"]
    st = os.stat(path)
    assert st.st_blocks * 512 >= st.st_size
    with open(path, "rb") as f:
        assert f.read() == bytes(SMALL)


def test_random_is_reproducible_per_seed(tmp_path):
    a = inputs.generate("random", 300_000, tmp_path / "a", seed=5, progress=False)
    b = inputs.generate("random", 300_000, tmp_path / "b", seed=5, progress=False)
    c = inputs.generate("random", 300_000, tmp_path / "c", seed=6, progress=False)
    assert a["sha256"] == b["sha256"] != c["sha256"]


def ratio(path):
    data = open(path, "rb").read()
    return len(data) / len(gzip.compress(data, 6))


def test_compressibility_by_type(small_inputs):
    assert ratio(small_inputs["random"][0]) <= 1.0
    assert 2.5 < ratio(small_inputs["text"][0]) < 8
    assert 1.2 < ratio(small_inputs["binary"][0]) < 6
    assert ratio(small_inputs["zero"][0]) > 500
    assert 1.7 < ratio(small_inputs["mix-50"][0]) < 2.2  # half the blocks vanish


def test_manifest_says_where_bytes_came_from(small_inputs):
    text = small_inputs["text"][1]
    assert text["sources"][0]["source"] == "linux-source"
    assert text["sources"][0]["version"]
    assert small_inputs["random"][1]["seed"] == 7


def test_text_from_configured_directories(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "b.c").write_text("int b;\n")
    (src / "a.c").write_text("int a;\n")
    (src / "blob").write_bytes(b"\0\1\2")  # not text: skipped
    entry = inputs.generate("text", 40, tmp_path / "t", sources=[str(src)], progress=False)
    assert (tmp_path / "t").read_bytes() == (b"int a;\nint b;\n" * 3)[:40]
    assert entry["sources"][0]["files"] == 2
    assert {"cycled_again": 1} in entry["sources"]


def test_user_data_whole_directory(tmp_path):
    data = tmp_path / "mine"
    data.mkdir()
    (data / "x").write_bytes(b"hello ")
    (data / "y").write_bytes(b"world")
    entry = inputs.generate("user", None, tmp_path / "u", sources=[str(data)], progress=False)
    assert (tmp_path / "u").read_bytes() == b"hello world"
    assert entry["size_bytes"] == 11


def test_interrupted_generation_leaves_no_finished_file(tmp_path):
    with pytest.raises(ConfigError):
        inputs.generate("text", 10**6, tmp_path / "t", sources=[str(tmp_path / "empty")],
                        progress=False)
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("text,expected", [("64MiB", 64 << 20), ("2GiB", 2 << 30),
                                           ("1000", 1000), ("1.5KiB", 1536)])
def test_parse_size(text, expected):
    assert units.parse_size(text) == expected


def test_bad_size_and_type_are_clear():
    with pytest.raises(ConfigError, match="64MiB"):
        units.parse_size("lots")
    with pytest.raises(ConfigError, match="mix-N"):
        inputs.validate_type("pictures")


def test_full_disk_stops_before_writing(tmp_path, monkeypatch):
    import collections

    usage = collections.namedtuple("usage", "total used free")
    monkeypatch.setattr(inputs.shutil, "disk_usage", lambda p: usage(10**6, 10**6 - 1000, 1000))
    with pytest.raises(ConfigError, match="GiB free"):
        inputs.generate("zero", 1 << 20, tmp_path / "z", progress=False)
    assert not list(tmp_path.iterdir())
