"""Root runs tools only from folders of its PATH that no other user can write.

Every compressor, dd, R and latexmk is found on PATH. A folder there that another user
owns or can write would let them choose the tool whose time and energy are measured, or
run anything as root: `wattzip` and the workflow leave such folders (and relative
entries) out of PATH, say so, and go on with the rest.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from wattzip.machine import trust

from .test_machine import WATTZIP


def planted_gzip(folder, marker):
    """A `gzip` that leaves a mark when it runs, in a folder of another user's reach."""
    folder.mkdir()
    tool = folder / "gzip"
    tool.write_text(f"#!/bin/sh\ntouch {marker}\necho 'gzip 9.9'\n")
    tool.chmod(0o755)
    return folder


@pytest.mark.parametrize("reach", ["writable-by-all", "another-user-s"])
def test_a_tool_planted_in_a_folder_of_path_another_user_can_write_never_runs(tmp_path,
                                                                              reach):
    folder = planted_gzip(tmp_path / "bin", tmp_path / "ran")
    if reach == "writable-by-all":
        folder.chmod(0o777)
    else:
        os.chown(folder, 65534, 65534)
    env = {**os.environ, "PATH": f"{folder}:{os.environ['PATH']}:bin"}
    out = subprocess.run([*WATTZIP, "codecs"], capture_output=True, text=True, check=False,
                         env=env)
    assert out.returncode == 0, out.stderr
    assert not (tmp_path / "ran").exists()
    assert f"PATH: left out {folder}: the folder itself {folder} is" in out.stderr
    assert "PATH: left out bin: not an absolute folder" in out.stderr
    assert "gzip 9.9" not in out.stdout and "1.12" in out.stdout  # Debian's gzip


def test_the_trusted_folders_of_path_keep_their_order(tmp_path):
    os.chmod(tmp_path, 0o755)
    (tmp_path / "mine").mkdir()
    given = f"{tmp_path / 'mine'}:/usr/bin::{tmp_path / 'gone'}:/bin:/usr/bin"
    kept, dropped = trust.trusted_search_path(given)
    assert kept == f"{tmp_path / 'mine'}:/usr/bin:/bin"
    assert dropped == ["(empty): not an absolute folder"]


def test_a_path_of_no_trusted_folder_becomes_the_system_s_not_the_current_folder(
        monkeypatch):
    monkeypatch.setenv("PATH", "bin:")
    said = trust.keep_path_trusted()
    assert os.environ["PATH"] == trust.trusted_search_path(trust.SYSTEM_PATH)[0]
    assert "/usr/bin" in os.environ["PATH"].split(":") and "the system's are used" in said[-1]


def test_the_workflow_s_rules_get_only_trusted_folders_of_path(tmp_path):
    from .test_workflow import SNAKEMAKE, TINY, workflow_copy

    root = workflow_copy(tmp_path / "clone")
    folder = planted_gzip(tmp_path / "bin", tmp_path / "ran")
    folder.chmod(0o777)
    env = {**os.environ, "PATH": f"{folder}:{os.path.dirname(sys.executable)}:/usr/bin:/bin"}
    proc = subprocess.run([*SNAKEMAKE, "-n", "--configfile", str(TINY)], cwd=root, env=env,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"PATH: left out {folder}: the folder itself" in proc.stderr
