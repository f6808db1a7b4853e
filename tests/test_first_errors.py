"""The first error a user meets fits on a screen (issue 78): each mistake of
tests/data/first_errors.yaml, made as a user makes it, is said first in one line that
names the cause (the key, the closest known key or value, what to do), in at most a
screenful, never with a traceback. The same rows are docs/errors.md's list.

Most rows are made in-process, through what the workflow and the commands run (the
config check, the study, the rehearsal's and pre-flight's checks, wattzip's main); the
few marked `snakemake` are run as the README runs the workflow, in a copy of it."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from wattzip import cli
from wattzip.errors import WattzipError, said
from wattzip.machine import factors
from wattzip.model import checks, preflight
from wattzip.model.config import study_files
from wattzip.model.study import Study

from .test_workflow import REPO, SNAKEMAKE, workflow_copy

TABLE = REPO / "tests" / "data" / "first_errors.yaml"
ROWS = yaml.safe_load(TABLE.read_text())
SCREEN_LINES = 40


def fill(text: str, folder: Path) -> str:
    return text.replace("{tmp}", str(folder))


def said_in_process(row: dict, work: Path, capsys) -> str:
    """What the user reads about the row's mistake: wattzip's own words, as the console
    shows them (the Snakefile and every command print a WattzipError alone)."""
    try:
        if "argv" in row:
            with contextlib.suppress(SystemExit):  # argparse's refusals exit
                cli.main([fill(word, work) for word in row["argv"]])
        elif "factor" in row:
            sysfs = work / "sys"
            for name, text in row["sysfs"].items():
                (sysfs / name).parent.mkdir(parents=True, exist_ok=True)
                (sysfs / name).write_text(text)
            factors.check("sda", row["factor"], sysfs=str(sysfs))
        else:
            study = Study.from_files(study_files(["my-testbed.yaml"]))
            _ = study.crosscheck, study.analysis_options  # what the Snakefile reads of it
            for testbed in study.testbeds:
                checks.check_design(study, testbed)  # the rehearsal's, before any run
                if row.get("meter"):  # the pre-flight's, on this machine
                    preflight.check_meter(study.testbeds[testbed].meter)
    except WattzipError as exc:
        return said(exc) + "\n"
    return capsys.readouterr().err


@pytest.mark.parametrize("row", ROWS, ids=[row["mistake"] for row in ROWS])
def test_a_mistake_is_said_first_in_one_line_on_a_screen(row, tmp_path, monkeypatch, capsys):
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(REPO / "config.yaml", work)
    if "overlay" in row:
        (work / "my-testbed.yaml").write_text(fill(row["overlay"], work))
    monkeypatch.chdir(work)
    monkeypatch.setenv("PATH", os.environ["PATH"])  # main() may trim it, as root
    out = said_in_process(row, work, capsys)
    lines = out.strip().splitlines()
    assert lines, f"nothing said about: {row['mistake']}"
    assert "Traceback" not in out, out
    assert row["first"] in lines[0], out
    assert len(lines) <= row.get("lines", SCREEN_LINES), out


SNAKEMAKE_ROWS = [row for row in ROWS if row.get("snakemake")]


@pytest.mark.workflow
@pytest.mark.parametrize("row", SNAKEMAKE_ROWS, ids=[r["mistake"] for r in SNAKEMAKE_ROWS])
def test_the_workflow_says_a_mistake_on_the_console(row, tmp_path):
    """`.venv/bin/snakemake --cores all --configfile config.yaml my-testbed.yaml`, as the README
    runs it (a dry run where the config or the study is wrong, a real one where a job
    refuses): the cause within the console's last 40 lines, no traceback, and no config
    inline on a command line."""
    root = workflow_copy(tmp_path / "wf")
    (root / "my-testbed.yaml").write_text(fill(row["overlay"], root))
    dry = ["-n"] if row["snakemake"] == "dry-run" else []
    proc = subprocess.run([*SNAKEMAKE, *dry, "--cores", "2", "--configfile", "config.yaml",
                           "my-testbed.yaml"], cwd=root, capture_output=True, text=True,
                          check=False)
    console = proc.stderr + proc.stdout
    last = console.strip().splitlines()[-SCREEN_LINES:]
    assert proc.returncode != 0, console[-3000:]
    assert "Traceback" not in console and '"study": {' not in console, console[-3000:]
    assert any(row["first"] in line for line in last), console[-3000:]
    if dry:  # the config's check stops the workflow: the whole console is a screenful
        assert len(console.strip().splitlines()) <= SCREEN_LINES, console
        said_first = next(line for line in last if line.startswith("wattzip: error: "))
        assert row["first"] in said_first, console


def docs_rows() -> list[str]:
    """docs/errors.md's list as the table gives it: one line per mistake."""
    return [f"| {row['mistake']} | `{row['first']}` |" for row in ROWS]


def test_the_docs_list_of_common_errors_is_the_table():
    """docs/errors.md lists the table's rows, in its order, and nothing else."""
    listed = [line for line in (REPO / "docs" / "errors.md").read_text().splitlines()
              if line.startswith("| ") and not line.startswith(("| mistake", "|---"))]
    assert listed == docs_rows(), "\n".join(docs_rows())


def test_the_table_is_large_and_made_each_way():
    assert len(ROWS) >= 30
    made = {"argv" if "argv" in r else "factor" if "factor" in r else "overlay" for r in ROWS}
    assert made == {"argv", "factor", "overlay"}
    assert 2 <= len(SNAKEMAKE_ROWS) <= 3


def test_a_user_s_error_where_snakemake_runs_wattzip_is_its_message_alone(capsys):
    """errors.said_alone, around the Snakefile's reading and each rule's script: the
    message alone on stderr, exit status 1; any other exception is left as it is."""
    from wattzip.errors import ConfigError, said_alone

    with pytest.raises(SystemExit) as stopped, said_alone():
        raise ConfigError("my-testbed.yaml, at file_sise: no such key")
    assert stopped.value.code == 1
    assert capsys.readouterr().err == ("wattzip: error: my-testbed.yaml, at file_sise: no "
                                       "such key\n")
    with pytest.raises(KeyError), said_alone():
        raise KeyError("a bug's traceback stays")
    for script in ("appendix", "crosscheck_hyperfine", "paper_macros", "preflight",
                   "tex_tables"):
        text = (REPO / "scripts" / f"{script}.py").read_text()
        assert "said_alone()" in text or "except WattzipError" in text, script
