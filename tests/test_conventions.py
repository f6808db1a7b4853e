"""The ecosystem's conventions hold: ruff, snakefmt, snakemake --lint, schema descriptions."""

import subprocess
import sys

import pytest
import yaml

from .test_workflow import REPO

pytestmark = pytest.mark.pure


def run(tool, *argv):
    """A Python tool of the project's environment, whether or not it is on PATH."""
    return subprocess.run([sys.executable, "-m", tool, *argv], cwd=REPO, capture_output=True,
                          text=True, check=False)


def test_ruff_clean():
    proc = run("ruff", "check", ".")
    assert proc.returncode == 0, proc.stdout


def test_snakefmt_clean():
    proc = run("snakefmt", "--check", ".")
    assert proc.returncode == 0, proc.stderr


def test_snakemake_lint_clean():
    proc = run("snakemake", "--lint")
    assert proc.returncode == 0 and "good condition" in proc.stdout + proc.stderr, proc.stdout


def test_every_schema_key_is_described():
    schema = yaml.safe_load((REPO / "config" / "schema.yaml").read_text())

    def walk(node, path):
        for name, sub in (node.get("properties") or {}).items():
            assert sub.get("description"), f"{path}{name} has no description"
            walk(sub, f"{path}{name}.")
        for alternative in node.get("oneOf") or []:
            walk(alternative, path)

    walk(schema, "")
    for name, definition in schema.get("$defs", {}).items():
        assert definition.get("description"), f"$defs.{name} has no description"
        walk(definition, f"$defs.{name}.")


def test_licence_and_citation_agree():
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert (REPO / "LICENSE").read_text().startswith("MIT License")
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "MIT"
    assert cff["version"] == project["version"]
    reference = cff["references"][0]
    assert "Lossless File Data Compression on Server Systems" in reference["title"]
    assert reference["year"] == 2009


# The house sizes (../shared/style.md): "a module under about 400 lines, a function under
# about 60"; "about" is this much slack, no more.


def test_no_two_classes_share_a_name():
    """A name predicts its place: one class per name in the package (issue 31)."""
    import ast
    from collections import defaultdict

    places = defaultdict(list)
    for path in sorted((REPO / "wattzip").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                places[node.name].append(str(path.relative_to(REPO)))
    assert {name: where for name, where in places.items() if len(where) > 1} == {}


def test_a_whole_study_runs_only_when_a_marker_expression_names_it():
    """`pytest -m "not workflow"` (a -m of one's own) must not start a 15-minute study."""
    collected = {}
    for expression in (None, "not workflow", "not install", "study"):
        marker = ["-m", expression] if expression else []
        proc = run("pytest", "-q", "-p", "no:cacheprovider", "--collect-only", *marker,
                   "tests/test_shipped.py")
        collected[expression] = "default_study_is_measured" in proc.stdout
    assert collected == {None: False, "not workflow": False, "not install": False,
                         "study": True}
