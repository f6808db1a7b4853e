"""What the README and docs/ tell a user to type works: the testbed template is a valid
study, and every command, flag and config file they name exists."""

from __future__ import annotations

import argparse
import re
import subprocess
from pathlib import Path

import pytest
import yaml
from jsonschema import validate

from wattzip.cli import build_parser
from wattzip.model.config import merge_configs
from wattzip.model.study import Study
from wattzip.resources import load_schema

from .test_workflow import REPO, SNAKEMAKE, workflow_copy

pytestmark = pytest.mark.pure

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
    study = Study(config)
    overlay = yaml.safe_load(template)
    assert set(study.testbeds) == {overlay["testbed"]["name"]}
    assert {s.medium for s in study.settings.values()} == set(overlay["factors"]["medium"])


def yaml_templates() -> list[tuple[str, str, str]]:
    """Every copyable config in the README and docs/: (page, its file name, its text)."""
    out = []
    for page in DOCS:
        for block in fenced(page.read_text(), "yaml"):
            name = re.match(r"# (my-[\w-]+\.yaml)", block).group(1)  # its own first line
            out.append((page.name, name, block))
    return out


@pytest.mark.parametrize("page, name, block", yaml_templates(), ids=lambda x: x[:20])
def test_every_copyable_config_is_a_study_snakemake_plans(page, name, block, tmp_path):
    """A template as the page says to use it: saved next to config.yaml and given to
    snakemake after it; it passes the schema and the workflow plans it (a dry run)."""
    root = workflow_copy(tmp_path / "wf")
    (root / name).write_text(block)
    validate(merge_configs([root / "config.yaml", root / name]), load_schema())
    proc = subprocess.run([*SNAKEMAKE, "-n", "--cores", "1", "--quiet", "rules",
                           "--configfile", "config.yaml", name], cwd=root,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "measure_runs" in proc.stdout + proc.stderr


def test_the_docs_copyable_configs_are_found():
    assert {(page, name) for page, name, _ in yaml_templates()} >= {
        ("README.md", "my-testbed.yaml"), ("slurm.md", "my-cluster.yaml")}


# `wattzip SUBCOMMAND [args]`, `.venv/bin/wattzip ...`, `python -m wattzip ...` where a
# command starts (not program output that mentions wattzip).
COMMAND = re.compile(r"(?:^|&&\s*|;\s*|\$\s+|/|\bsudo\s+|\bpython3? -m\s+)wattzip(?![\w./'-])"
                     r"((?:[ \t]+[^\s|;&`#)]+)*)")
# A file the reader writes (the docs' examples) or a placeholder, not a file of the repo.
PLACEHOLDER = re.compile(r"(^my-|[A-Z]+\.yaml$|[<>{}*\[\]]|\.\.\.)")


def code_spans(text: str) -> list[str]:
    """Inline code and each line of fenced code (continuation lines joined), comments cut."""
    spans = []
    for block in re.findall(r"```[a-z]*\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            spans.append(re.split(r"\s#", line)[0])
    spans += re.findall(r"(?<!`)`([^`]+)`(?!`)", re.sub(r"```.*?```", "", text, flags=re.S))
    return [" ".join(s.split()) for s in spans]


def subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    [action] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def options(parser: argparse.ArgumentParser) -> set[str]:
    return {s for a in parser._actions for s in a.option_strings}


def named_commands() -> list[tuple[str, str, list[str]]]:
    """(document, subcommand or '' for the bare command, its --flags) named in the docs."""
    found = []
    for doc in DOCS:
        for span in code_spans(doc.read_text()):
            for match in COMMAND.finditer(span):
                words = match.group(1).split()
                words = words[:words.index("--")] if "--" in words else words
                sub = words[0] if words and not words[0].startswith("-") else ""
                flags = [w.split("=")[0] for w in words if w.startswith("--")]
                found.append((doc.name, sub, flags))
    return found


def test_every_wattzip_command_and_flag_in_the_docs_exists():
    subs = subparsers()
    seen = named_commands()
    assert {"restore", "plan", "measure", "meters"} <= {s for _, s, _ in seen}
    wrong = []
    for doc, sub, flags in seen:
        if sub and sub not in subs:
            wrong.append(f"{doc}: `wattzip {sub}` is not a wattzip command")
            continue
        known = options(subs[sub] if sub else build_parser())
        wrong += [f"{doc}: `wattzip {sub}` has no option {flag}" for flag in flags
                  if flag not in known]
    assert not wrong, "\n".join(sorted(set(wrong)))


def test_every_configfile_and_profile_the_docs_name_exists():
    named = set()
    for doc in DOCS:
        for span in code_spans(doc.read_text()):
            for files in re.findall(r"--configfile((?:\s+[^\s-][^\s]*)+)", span):
                named |= {(doc.name, f) for f in files.split()}
            named |= {(doc.name, d) for d in re.findall(r"--profile[ =](\S+)", span)}
    assert ("README.md", "config/kick-the-tires.yaml") in named
    wrong = [f"{doc} names {path}: no such file or folder" for doc, path in sorted(named)
             if not PLACEHOLDER.search(Path(path).name) and not (REPO / path).exists()]
    assert not wrong, "\n".join(wrong)


def test_the_architecture_names_every_module_of_the_package():
    """docs/architecture.md draws the layers: a newcomer finds each module there."""
    text = (REPO / "docs" / "architecture.md").read_text()
    missing = [str(p.relative_to(REPO)) for p in sorted((REPO / "wattzip").rglob("*.py"))
               if p.stem not in ("__init__", "__main__")
               and p.parent.name not in ("claims", "meters")  # one module per paper, backend
               and not re.search(rf"\b{p.stem}\b", text)]
    assert not missing, missing
