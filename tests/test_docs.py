"""What the README and docs/ tell a user to type works: the testbed template is a valid
study, and every command, flag and config file they name exists."""

from __future__ import annotations

import re

import yaml
from jsonschema import validate

from wattzip.design import Study, load_schema, merge_configs

from .test_workflow import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def test_the_readme_is_a_front_door_that_links_every_page():
    text = (REPO / "README.md").read_text()
    assert 9_000 <= len(text.encode()) <= 13_000, len(text.encode())
    assert "bash setup.sh && .venv/bin/snakemake --cores all\n" in text
    assert "bash setup.sh && .venv/bin/python -m pytest -q\n" in text
    for page in (REPO / "docs").glob("*.md"):
        assert f"(docs/{page.name})" in text, f"the README does not link docs/{page.name}"
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (REPO / link).exists(), link


def test_the_readme_testbed_template_is_a_valid_study(tmp_path):
    """The copyable template, laid over config.yaml as the README says, passes the schema
    and builds a study model."""
    [template] = fenced((REPO / "README.md").read_text(), "yaml")
    (tmp_path / "my-testbed.yaml").write_text(template)
    config = merge_configs([REPO / "config.yaml", tmp_path / "my-testbed.yaml"])
    validate(config, load_schema())
    study = Study.from_config(config)
    overlay = yaml.safe_load(template)
    assert set(study.testbeds) == {overlay["testbed"]["name"]}
    assert {s.medium for s in study.settings.values()} == set(overlay["factors"]["medium"])
