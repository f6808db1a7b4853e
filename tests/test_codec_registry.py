import hashlib
import os
import struct
import subprocess

import pytest

from wattzip.errors import ConfigError, MissingToolError
from wattzip.workload import codec_registry

pytestmark = pytest.mark.pure

PAPER = ["gz-1", "gz-6", "gz-9", "lzo-1", "lzo-3", "lzo-9", "bz-1", "bz-9", "c-10", "c-16",
         "ppmd"]


def roundtrip(codec, path, tmp_path):
    out = tmp_path / f"out{codec.suffix}"
    with open(path, "rb") as fin:
        if codec.writes_out_path:
            p = subprocess.run(codec.compress_argv(str(out), 2), stdin=fin,
                               capture_output=True, check=False)
        else:
            with open(out, "wb") as fout:
                p = subprocess.run(codec.compress_argv(str(out), 2), stdin=fin, stdout=fout,
                                   stderr=subprocess.PIPE, check=False)
    assert p.returncode in codec.ok_exit_codes, p.stderr
    stdin = subprocess.DEVNULL if codec.reads_in_path else open(out, "rb")
    back = subprocess.run(codec.decompress_argv(str(out), 2), stdin=stdin,
                          capture_output=True, check=True).stdout
    return back, os.path.getsize(out)


def test_paper_set_is_table_2():
    assert [c.name for c in codec_registry.resolve("paper")] == PAPER
    assert codec_registry.get("c-16").compress == ("compress", "-c", "-b", "16")


def test_named_sets():
    assert len(codec_registry.resolve("levels")) == 27
    modern = {c.name for c in codec_registry.resolve("modern")}
    assert modern >= {"zstd-19", "lz4-1", "xz-9", "br-11"}
    assert all(c.multithreaded for c in codec_registry.resolve("parallel"))
    assert codec_registry.resolve(["paper", "gz-1", "zstd-3"])[-1].name == "zstd-3"


def test_unknown_name_lists_valid_ones():
    with pytest.raises(ConfigError, match="sets: paper, levels"):
        codec_registry.resolve(["gz-6", "gzip-6"])


@pytest.mark.parametrize("name", list(codec_registry.REGISTRY))
def test_every_entry_round_trips_every_type(name, small_inputs, tmp_path):
    codec = codec_registry.REGISTRY[name]
    codec_registry.require(codec)
    for path, entry in small_inputs.values():
        back, _ = roundtrip(codec, path, tmp_path)
        assert hashlib.sha256(back).hexdigest() == entry["sha256"], f"{name} on {path.name}"


def test_table_3_ordering_on_text(small_inputs, tmp_path):
    path, _ = small_inputs["text"]
    size = os.path.getsize(path)
    cr = {n: size / roundtrip(codec_registry.get(n), path, tmp_path)[1] for n in PAPER}
    assert cr["bz-9"] > cr["gz-6"] > cr["lzo-1"]
    assert cr["c-16"] > cr["c-10"]
    assert max(cr, key=cr.get) == "ppmd"


def test_missing_binary_names_its_package(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(MissingToolError, match="apt-get install lzop"):
        codec_registry.require(codec_registry.get("lzo-1"))
    assert codec_registry.version(codec_registry.get("lzo-1")) is None


def test_versions_are_read():
    assert codec_registry.version(codec_registry.get("gz-6"))[0].isdigit()
    assert codec_registry.version(codec_registry.get("ppmd"))[0].isdigit()


def test_the_registry_is_data_and_a_wrong_key_is_named():
    """Every entry comes from wattzip/data/codecs.yaml, one family a tool; a family with a
    key the registry does not know is refused by name, not skipped."""
    assert codec_registry.get("gz-6").sets == ("paper", "levels", "all")
    assert codec_registry.get("gz-5").sets == ("levels", "all")
    assert codec_registry.get("br-11").compress == ("brotli", "-q", "11", "-c")
    assert codec_registry.get("btrfs-zstd-3").mount_option == "compress-force=zstd:3"
    with pytest.raises(ConfigError, match="'gz' has unknown keys \\['levles'\\]"):
        codec_registry._family({"short": "gz", "levles": [1]})


def _zip_ppmd(data: bytes) -> tuple[int, int, bytes]:
    """A one-member ZIP's compression method, its PPMd parameter word and its stream."""
    method, = struct.unpack_from("<H", data, 8)
    packed, = struct.unpack_from("<I", data, 18)
    name_len, extra_len = struct.unpack_from("<HH", data, 26)
    start = 30 + name_len + extra_len
    props, = struct.unpack_from("<H", data, start)
    return method, props, data[start + 2:start + packed]


def test_ppmd_is_shkarins_variant_i_at_his_utilitys_defaults(small_inputs, tmp_path):
    """The paper ran Shkarin's PPMd utility with its default invocation: ppmd writes
    PPMd var. I (ZIP method 98) at model order 4, 10 MB and the model restarted when
    memory runs out (his defaults), in the parameter word the stream starts with; ppmd-h
    is 7-Zip's variant H beside it."""
    path, _ = small_inputs["text"]
    roundtrip(codec_registry.get("ppmd"), path, tmp_path)
    method, props, _ = _zip_ppmd((tmp_path / "out.zip").read_bytes())
    assert method == 98
    assert ((props & 0x0F) + 1, ((props >> 4) & 0xFF) + 1, props >> 12) == (4, 10, 0)
    assert codec_registry.get("ppmd-h").compress[2:4] == ("-t7z", "-m0=PPMd")


VARIANT_I = """import io, sys, ppmd
out = io.BytesIO()
enc = ppmd.Ppmd8Encoder(out, 4, 10 << 20, 0)
enc.encode(open(sys.argv[1], "rb").read())
enc.flush()
enc.close()
sys.stdout.buffer.write(out.getvalue())
"""


def test_ppmds_stream_is_variant_is_own(small_inputs, tmp_path):
    """Where Debian's python3-ppmd is installed (a Ppmd8 of its own, var. I rev. 1): the
    stream in ppmd's ZIP member is byte for byte its stream at the same parameters."""
    python = "/usr/bin/python3"
    if subprocess.run([python, "-c", "import ppmd"], capture_output=True).returncode:
        pytest.skip("Debian's python3-ppmd is not installed (apt-get install python3-ppmd)")
    path, _ = small_inputs["text"]
    roundtrip(codec_registry.get("ppmd"), path, tmp_path)
    _, _, stream = _zip_ppmd((tmp_path / "out.zip").read_bytes())
    theirs = subprocess.run([python, "-c", VARIANT_I, str(path)], capture_output=True,
                            check=True).stdout
    assert stream == theirs
