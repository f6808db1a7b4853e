"""The report is made again whenever the code that makes it changes
(wattzip.model.layout.report_code): the package's modules and data, the workflow's
scripts. tests/test_one_invocation.py shows it on a finished study."""

from __future__ import annotations

import re
import shutil

import pytest

from wattzip.model import layout

from .test_workflow import REPO

pytestmark = pytest.mark.pure

REPORT_STAGES = ("analyze", "figures", "paper")


def code_trees(tmp_path):
    """A copy of the package and of the scripts, laid out as a clone (the scripts' links
    to the package's data tables resolve into the copy)."""
    workflow = tmp_path / "workflow"
    package = workflow / "wattzip"
    shutil.copytree(layout.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "scripts", workflow / "scripts", symlinks=True)
    return package, workflow


def test_the_digest_changes_with_any_module_data_file_or_script(tmp_path):
    package, workflow = code_trees(tmp_path)
    before = layout.report_code(workflow, package)
    assert before == layout.report_code(REPO, layout.PACKAGE)  # the copies are the code
    for changed in (package / "report" / "tex_tables.py", package / "data" / "labels.csv",
                    workflow / "scripts" / "theme.R"):
        kept = changed.read_bytes()
        changed.write_bytes(kept + b"\n")
        assert layout.report_code(workflow, package) != before, changed
        changed.write_bytes(kept)
    assert layout.report_code(workflow, package) == before


def test_compiled_bytecode_is_not_code_that_changed(tmp_path):
    """Python writes __pycache__ when it imports a module: the digest is not moved by it."""
    package, workflow = code_trees(tmp_path)
    before = layout.report_code(workflow, package)
    (package / "report" / "__pycache__").mkdir(exist_ok=True)
    (package / "report" / "__pycache__" / "tables.cpython-311.pyc").write_bytes(b"\0" * 64)
    assert layout.report_code(workflow, package) == before


def test_every_rule_from_the_analysis_to_the_text_carries_the_digest():
    """Every rule of the stages that turn runs into the report, those a small study does
    not make too (HPC '14's tables, the bandwidth figure), has the param; the rules that
    measure have none, so that a change of code never measures again."""
    for stage in REPORT_STAGES:
        text = (REPO / "rules" / f"{stage}.smk").read_text()
        for rule in re.split(r"\n(?=rule )", text)[1:]:
            assert "        code=REPORT_CODE,\n" in rule, rule.split(":")[0]
    for stage in ("measure", "calibrate", "inputs", "rehearse"):
        assert "REPORT_CODE" not in (REPO / "rules" / f"{stage}.smk").read_text(), stage
