"""Shared fixtures, made once per session: small real input files of every type, and the
workflow tests' tiny study."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

import pytest

# The tests journal their machine changes apart from a real study's journal (they hold
# the machine-wide lock like any study, so they never measure beside one). A session
# run inside another (a test of the tests' own options) uses the outer one's and leaves
# it to it.
OWN_STATE_DIR = "WATTZIP_STATE_DIR" not in os.environ
if OWN_STATE_DIR:
    os.environ["WATTZIP_STATE_DIR"] = tempfile.mkdtemp(prefix="wattzip-test-state-")

SMALL = 1 << 20


@pytest.fixture(scope="session")
def small_inputs(tmp_path_factory):
    """One MiB of each paper file type plus a mixed one: {type: (path, manifest)}."""
    from wattzip.workload.inputs import generate

    root = tmp_path_factory.mktemp("inputs")
    made = {}
    for file_type in ("zero", "text", "binary", "random", "mix-50"):
        path = root / f"{file_type}.bin"
        made[file_type] = (path, generate(file_type, SMALL, path, seed=7, progress=False))
    return made


@pytest.fixture
def job_files(small_inputs, tmp_path, monkeypatch):
    """A text/gz-1 job's spec and files, in tmp_path (the working folder): tests/job_files."""
    from .job_files import make

    monkeypatch.chdir(tmp_path)
    return make(tmp_path, small_inputs["text"])


@pytest.fixture(scope="session")
def tiny_study(tmp_path_factory):
    """tests/data/tiny.yaml's study, measured once in a fresh copy of the workflow: what the
    workflow tests and the benchmarks that read a finished study look at."""
    from .test_workflow import snakemake, workflow_copy

    root = workflow_copy(tmp_path_factory.mktemp("study") / "wf")
    snakemake(root)
    return root



@pytest.fixture
def noted(monkeypatch):
    """Each change journaled during the test, as (kind, target, whether something was at
    the target when the journal named it): a change must be named before it is made."""
    from wattzip import machine

    seen, note = [], machine.note

    def spy(kind, target, *args, **kwargs):
        seen.append((kind, target, os.path.lexists(target)))
        return note(kind, target, *args, **kwargs)

    monkeypatch.setattr(machine, "note", spy)
    return seen

def pytest_collection_modifyitems(config, items):
    """The 'study' tests (minutes to hours) run only when a -m expression names them,
    whatever other -m is given ("not workflow" alone would let them in unasked)."""
    if "study" in (config.getoption("markexpr") or ""):
        return
    study = [item for item in items if item.get_closest_marker("study")]
    if study:
        config.hook.pytest_deselected(items=study)
        items[:] = [item for item in items if not item.get_closest_marker("study")]


def pytest_sessionstart(session):
    """What a killed earlier session of the tests left changed is undone first, as a
    user's next command would (a dead FUSE mount of one failed mkfs.btrfs in the next).
    Each session journals to a folder of its own that no later session reads, so the
    folders are found by their prefix; only changes whose owner died are undone, by
    `wattzip restore` under the machine's lock."""
    from wattzip import machine
    from wattzip.errors import MachineError

    ours = machine.state_dir()
    for folder in sorted(ours.parent.glob("wattzip-test-state-*")):
        os.environ[machine.STATE_DIR_ENV] = str(folder)
        try:
            killed = folder != ours and machine.leftovers()
        except MachineError:  # not root's alone: nothing in it is undone
            killed = False
        finally:
            os.environ[machine.STATE_DIR_ENV] = str(ours)
        if killed:
            subprocess.run([sys.executable, "-m", "wattzip", "restore"], check=False,
                           env={**os.environ, machine.STATE_DIR_ENV: str(folder)})


def pytest_sessionfinish(session, exitstatus):
    """The tests' journal goes with them, unless it still names a change to undo."""
    from wattzip import machine

    state = machine.state_dir()
    if OWN_STATE_DIR and state.name.startswith("wattzip-test-state-") and not machine.pending():
        shutil.rmtree(state, ignore_errors=True)
