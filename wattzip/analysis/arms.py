"""A cell's four arms: which runs its break-even and verdict compare.

w = plain-write, r = plain-read, c = compress-write, d = decompress-read. The plain
arms are the runs measured in the codec's own job when there are any (the verdict
design), the pairs of the setting and file type's shared plain arm nearest the codec's
runs when its job ended (the moderated design), else the setting's plain baseline job.
"""

from __future__ import annotations

from collections import defaultdict

from wattzip.analysis.cell_summary import GROUP, key_of, paired_with
from wattzip.analysis.stopping import first_runs, last_runs
from wattzip.resources import operations_where

FOUR_OPS = operations_where(region="io")


def four_operations(rows: list[dict]) -> list[tuple[tuple, dict[str, list[dict]]]]:
    """Per cell (testbed, setting, file type, codec): its verified runs of the four
    operations, w = plain-write, r = plain-read, c = compress-write, d = decompress-read;
    w and r as the module says; cells missing any are left out."""
    by_group: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        if r.get("verified") and r.get("energy_j") is not None:
            by_group[(*key_of(r, GROUP), paired_with(r) if r.get("codec") == "plain"
                      else "")].append(r)
    out = []
    for cell in sorted({k[:4] for k in by_group if k[3] != "plain"},
                       key=lambda k: tuple(map(str, k))):
        plain = (*cell[:3], "plain")
        own = any(k[:4] == plain and k[5] == cell[3] for k in by_group)
        pairing = cell[3] if own else ""
        ops = plain_so_far({"w": by_group.get((*plain, "plain-write", pairing), []),
                            "r": by_group.get((*plain, "plain-read", pairing), []),
                            "c": by_group.get((*cell, "compress-write", ""), []),
                            "d": by_group.get((*cell, "decompress-read", ""), [])}, cell[3])
        if all(ops.values()):
            out.append((cell, ops))
    return out


def shares_plain(ops: dict) -> bool:
    """Whether the cell's plain runs are its setting and file type's one shared plain arm
    (the moderated design), not its own job's or a plain job's."""
    return any(r.get("shared_plain_of") for k in "wr" for r in ops[k])


def own_runs(ops: dict, codec: str) -> list[dict]:
    """The runs the cell's own job measured: its codec's, and its own plain arm's or its
    pairs of the shared one."""
    if not shares_plain(ops):
        return [r for runs in ops.values() for r in runs]
    return [r for k, runs in ops.items() for r in runs
            if k in "cd" or r.get("shared_plain_of") == codec]


def plain_so_far(ops: dict, codec: str) -> dict:
    """Under a shared plain arm, the cell's plain runs are those its job's last look
    compared the codec with: the arm's last n pairs in time that had ended when the job
    ended, n the codec's runs (wattzip.analysis.stopping.VerdictLooks.arms)."""
    if not shares_plain(ops):
        return ops
    end = max(r["ended_at"] for r in own_runs(ops, codec))
    n = min(len(ops["c"]), len(ops["d"]))
    return {**ops, **{k: last_runs([r for r in ops[k] if r["ended_at"] <= end], op, n)
                      for k, op in (("w", "plain-write"), ("r", "plain-read"))}}


def look_arms(ops: dict, looks: int | None) -> dict:
    """The four operations' runs as the job's last look compared them (all of them
    without planned looks): the first n of each, n those of its scarcest operation (a
    kill mid-repeat may have left one more of some); a shared plain arm's as
    plain_so_far chose them."""
    shared = shares_plain(ops)
    n = min(len(ops[k]) for k in ("cd" if shared else "wcrd")) if looks else None
    return {k: runs if shared and k in "wr" else first_runs(runs, None, n)
            for k, runs in ops.items()}
