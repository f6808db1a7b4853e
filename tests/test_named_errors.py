"""Bad inputs a new user tries are named errors, with nothing overwritten (issue 30)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from wattzip.errors import ConfigError, WattzipError
from wattzip.measure import staging
from wattzip.model import plan


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


@pytest.mark.parametrize("copies", ["0", "-2", "two"])
def test_copies_below_one_is_refused_before_anything_runs(copies):
    out = subprocess.run([sys.executable, "-m", "wattzip", "job", "--copies", copies],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "--copies" in out.stderr and "at least 1" in out.stderr


def test_copies_zero_in_a_spec_is_refused_too():
    """A spec's value becomes a default, which argparse does not check."""
    spec = '{"testbed": "t", "codec": "gz-1", "copies": 0}'
    out = subprocess.run([sys.executable, "-m", "wattzip", "job", "--spec", spec,
                          "--manifest", "m.json", "--journal", "j.jsonl", "--out", "o.json"],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "copies 0; give at least 1" in out.stderr
