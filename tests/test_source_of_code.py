"""The code that measured, in provenance and every run record: the checkout's commit and
whether it had changes, or, installed from a wheel, the package files' digest."""

from __future__ import annotations

import subprocess

import pytest

from wattzip.measure import provenance

pytestmark = pytest.mark.pure

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]


@pytest.fixture
def checkout(tmp_path):
    """A checkout holding a package `pkg` (one module), committed."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("x = 1\n")
    (repo / "README").write_text("r\n")
    for args in (["init", "-q"], ["add", "."], ["commit", "-qm", "one"]):
        subprocess.run([*GIT, *args], cwd=repo, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True,
                          capture_output=True, text=True).stdout.strip()
    return repo, head


def source(package_dir):
    return provenance.source_of_code.__wrapped__(package_dir)  # not the process's cache


def test_a_clean_checkout_names_its_commit(checkout):
    repo, head = checkout
    out = source(repo / "pkg")
    assert out["source_commit"] == head and out["source_dirty"] is False
    assert len(out["source_digest"]) == 64


def test_a_checkout_with_a_change_says_so(checkout):
    repo, head = checkout
    before = source(repo / "pkg")["source_digest"]
    (repo / "README").write_text("changed\n")  # a tracked file outside the package
    assert source(repo / "pkg")["source_dirty"] is True
    subprocess.run(["git", "checkout", "-q", "README"], cwd=repo, check=True)
    (repo / "pkg" / "new.py").write_text("y = 2\n")  # a module git does not know yet
    out = source(repo / "pkg")
    assert out["source_dirty"] is True and out["source_commit"] == head
    assert out["source_digest"] != before


def test_a_wheel_s_copy_inside_a_checkout_is_named_by_its_digest(checkout):
    """A virtual environment in a checkout holds the package untracked: no commit of it."""
    repo, _ = checkout
    site = repo / ".venv" / "site-packages" / "pkg"
    site.mkdir(parents=True)
    (site / "__init__.py").write_text("x = 1\n")
    out = source(site)
    assert out["source_commit"] is None and out["source_dirty"] is None
    assert out["source_digest"] == source(repo / "pkg")["source_digest"]  # same files


def test_without_git_the_source_is_its_digest_and_nothing_fails(checkout, monkeypatch):
    repo, _ = checkout
    monkeypatch.setenv("PATH", str(repo / "no-such-folder"))
    out = source(repo / "pkg")
    assert out["source_commit"] is None and out["source_dirty"] is None
    assert len(out["source_digest"]) == 64


def test_who_measured_carries_the_source_computed_once(monkeypatch):
    calls = []
    real = provenance._git
    monkeypatch.setattr(provenance, "_git", lambda *a, **k: calls.append(a) or real(*a, **k))
    provenance.source_of_code.cache_clear()
    first = provenance.who_measured()
    assert {"source_commit", "source_dirty", "source_digest"} <= set(first)
    n = len(calls)
    assert provenance.who_measured() == first and len(calls) == n


def test_the_paper_s_provenance_table_names_the_source():
    from wattzip.machine.system import provenance_rows

    def shown(source):
        return {r["key"]: r["value"] for r in provenance_rows({"source": source})}[
            "wattzip source"]

    assert shown({"source_commit": "a" * 40, "source_dirty": True, "source_digest": "d"}) \
        == "commit aaaaaaaaaaaa, with uncommitted changes"
    assert shown({"source_commit": None, "source_dirty": None, "source_digest": "b" * 64}) \
        == "installed package, files' sha256 bbbbbbbbbbbb"
    assert shown(None) == "not recorded"  # a provenance.json from before
