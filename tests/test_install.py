"""wattzip installed from a built wheel, not editable, into a new virtual environment, run
from another folder: every command a user tries first works, and nothing it does opens a
file of the checkout (its schema and data are package data).

Selected alone with `pytest -m install`; runs by default.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from .test_workflow import REPO

# Not pure: `wattzip meters` probes the meters holding the machine, as a study does.
pytestmark = pytest.mark.install

# What pip needs to build the wheel: the package and the files pyproject.toml names.
BUILD_FILES = ("pyproject.toml", "README.md", "LICENSE")
# Runs a wattzip command in-process under an audit hook that fails on any open() of a
# path inside the checkout, whatever the command's cwd.
NO_CHECKOUT = textwrap.dedent("""
    import os, sys
    checkout = os.path.realpath(sys.argv[1])
    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
            path = os.path.realpath(os.fsdecode(args[0]))
            if path == checkout or path.startswith(checkout + os.sep):
                raise SystemExit(f"opened a file of the checkout: {path}")
    sys.addaudithook(hook)
    from wattzip.cli import main
    sys.exit(main(sys.argv[2:]))
""")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A venv holding wattzip from its wheel (and its dependencies from PyPI)."""
    tmp = tmp_path_factory.mktemp("install")
    source = tmp / "source"
    shutil.copytree(REPO / "wattzip", source / "wattzip",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in BUILD_FILES:
        shutil.copy(REPO / name, source / name)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp / "dist", source],
        cwd=tmp)
    [wheel] = (tmp / "dist").glob("wattzip-*.whl")
    venv = tmp / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=tmp)
    run([venv / "bin" / "python", "-m", "pip", "install", "-q", wheel], cwd=tmp)
    return venv


def run(argv, cwd, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True,
                          env=clean_env(), timeout=600, **kw)
    assert proc.returncode == 0, (argv, proc.stdout[-2000:], proc.stderr[-4000:])
    return proc


def clean_env() -> dict:
    """This session's environment less anything that would put the checkout on the path."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSAFEPATH")}
    env["PATH"] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    return env


@pytest.mark.parametrize("argv", [["--version"], ["--help"], ["codecs"], ["meters"],
                                  ["plan", "--help"]])
def test_the_installed_command_runs_from_another_folder(installed, tmp_path, argv):
    proc = run([installed / "bin" / "wattzip", *argv], cwd=tmp_path)
    assert proc.stdout.strip()


def test_python_dash_m_runs_the_installed_package(installed, tmp_path):
    proc = run([installed / "bin" / "python", "-m", "wattzip", "--version"], cwd=tmp_path)
    assert proc.stdout.startswith("wattzip ")
    where = run([installed / "bin" / "python", "-c", "import wattzip; print(wattzip.__file__)"],
                cwd=tmp_path).stdout.strip()
    assert Path(where).is_relative_to(installed), where


def test_an_install_from_the_wheel_names_its_code_by_its_files_digest(installed, tmp_path):
    """No checkout, no commit: the run records and provenance name the package's files."""
    probe = ("import json; from wattzip.measure.provenance import source_of_code; "
             "print(json.dumps(source_of_code()))")
    out = json.loads(run([installed / "bin" / "python", "-c", probe], cwd=tmp_path).stdout)
    assert out["source_commit"] is None and out["source_dirty"] is None
    assert len(out["source_digest"]) == 64


def test_the_wheel_ships_the_schema_and_the_reference_data(installed, tmp_path):
    probe = textwrap.dedent("""
        import json
        from importlib import resources
        from wattzip.analysis.claims import load_claims
        from wattzip.resources import load_schema
        data = resources.files("wattzip") / "data"
        print(json.dumps({"files": sorted(p.name for p in (data / "reference").iterdir()),
                          "claims": len(load_claims()),
                          "schema": sorted(load_schema()["properties"])}))
    """)
    out = json.loads(run([installed / "bin" / "python", "-c", probe], cwd=tmp_path).stdout)
    shipped = sorted(p.name for p in (REPO / "wattzip" / "data" / "reference").iterdir())
    assert out["files"] == shipped and "claims.yaml" in shipped
    assert out["claims"] > 0 and {"testbed", "codecs", "meter"} <= set(out["schema"])


def test_the_installed_package_opens_nothing_in_the_checkout(installed, tmp_path):
    """The schema's defaults (the parser's), the claims registry and the original papers'
    tables (analyze), from the package alone; the runs are copied out of the checkout."""
    python = installed / "bin" / "python"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"testbed": {"name": "tb"}, "codecs": ["gz-1"]}))
    for argv in (["--help"], ["plan", "--config-file", str(config), "--help"],
                 ["codecs", "paper"]):
        run([python, "-c", NO_CHECKOUT, REPO, *argv], cwd=tmp_path)
    [runs] = sorted((REPO / "tests" / "data" / "fixture").rglob("runs.csv"))
    shutil.copy(runs, tmp_path / "runs.csv")
    shutil.copy(runs.with_name("settings.csv"), tmp_path / "settings.csv")
    run([python, "-c", NO_CHECKOUT, REPO, "analyze", "runs.csv", "--settings", "settings.csv",
         "--out", "analysis"], cwd=tmp_path)
    assert (tmp_path / "analysis" / "claims.csv").stat().st_size > 0
    assert (tmp_path / "analysis" / "comparison.csv").stat().st_size > 0
