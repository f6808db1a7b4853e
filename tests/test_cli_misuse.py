"""A user's slip at the command line is one line naming what is wrong, exit code 2, and
nothing left behind: never a traceback, never a run measured first."""

from __future__ import annotations

import subprocess
import sys

import pytest


def wattzip(cwd, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wattzip", *argv], cwd=cwd,
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize("argv, said", [
    (["gen", "text", "--size", "64KiB", "--out", "adir"], "adir: a folder"),
    (["gen", "text", "--size", "64KiB", "--out", "/proc/wattzip-x"],
     "manifest /proc/wattzip-x.json: cannot be written there"),
    (["gen", "text", "--size", "64KiB", "--out", "z.bin", "--manifest", "/proc/m.json"],
     "manifest /proc/m.json: cannot be written there (No such file or directory)"),
    (["gen", "text", "--size", "0", "--out", "z.bin"], "at least 1 byte"),
    (["collect", "--out", "c.csv", "absent.jsonl"], "no such journal: absent.jsonl"),
    (["analyze", "--out", "o", "absent.csv"], "absent.csv: No such file or directory"),
    (["check-overlap", "adir"], "adir: Is a directory"),
    (["plan", "--config-file", "adir/absent.json"],
     "config file adir/absent.json: No such file or directory"),
    (["simulate", "--config-file", "adir", "--runs", "r.csv"], "config file adir: Is a directory"),
    (["job", "--manifest", "m", "--journal", "j", "--out", "o"],
     "one of the arguments --spec --configfile is required"),
    (["job", "--spec", "s.json", "--codec", "gz-1", "--manifest", "m", "--journal", "j",
      "--out", "o"], "--codec: the spec names its job; give them with --configfile"),
    (["idle", "--configfile", "adir/absent.yaml"],
     "--configfile adir/absent.yaml cannot be used: No such file or directory"),
    (["measure", "--meter", "model", "--model-max-w", "nan", "--", "true"],
     "--model-max-w: nan: give at least 0 W"),
    (["measure", "--meter", "model", "--stdin", "absent", "--", "true"],
     "absent: No such file or directory"),
    (["analyze", "--out", "o", "--margin", "1.5", "r.csv"], "--margin: 1.5: give at least"),
])
def test_a_slip_is_one_named_line_and_exit_2(tmp_path, argv, said):
    (tmp_path / "adir").mkdir()
    out = wattzip(tmp_path, *argv)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and said in out.stderr, out.stderr
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == ["adir"] and not list((tmp_path / "adir").iterdir()), left


def test_the_config_allows_the_margin_its_jobs_take():
    """A job's --margin comes from the config: a value the schema lets through and the
    flag refuses would stop a study at its first job, hours in."""
    from wattzip.errors import ConfigError
    from wattzip.model.config import validate

    from .test_design import BASE

    with pytest.raises(ConfigError, match="verdict.margin"):
        validate({**BASE, "verdict": {"margin": 0.995}}, "my-testbed.yaml")
    validate({**BASE, "verdict": {"margin": 0.99}}, "my-testbed.yaml")
