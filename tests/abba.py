"""The verdict design's interleaving, as the workflow tests read it from runs.csv."""

from __future__ import annotations


def assert_abba(epoch: list[dict], job: tuple) -> None:
    """P C C P P C ...: repeat k's arms in order, plain first in odd repeats."""
    epoch.sort(key=lambda r: r["started_at"])
    arms = ["P" if r["codec"] == "plain" else "C" for r in epoch[::2]]
    assert arms == (["P", "C", "C", "P"] * 4)[:len(arms)], (job, arms)
    assert [r["op"].split("-")[1] for r in epoch] == ["write", "read"] * len(arms)
    assert [int(r["repeat"]) for r in epoch[::4]] == list(range(1, len(arms) // 2 + 1))
