"""HPC '14's claims: compression between compute phases and in the filesystem.
"""

from __future__ import annotations

from wattzip.analysis.claims.evidence import _needs, _sign
from wattzip.analysis.claims.registry import Outcome, check


@check("hpc_lz4_write")
def hpc_lz4_write(claim, ev):
    names = claim.parameters["codecs"]
    ftype = claim.parameters["file_type"]
    ops = {alg: (ftype, c, "plain-write" if c == "plain" else "compress-write")
           for alg, c in names.items()}
    if not all(ev.summary_row(*key) for key in ops.values()):
        return _needs(claim, f"{', '.join(names.values())} on {ftype}")
    ref = {r["algorithm"]: float(r["energy_wh"]) for r in ev.reference(claim.reference[0])}
    order = sorted(names, key=lambda a: ref[a])
    results, undecided = [], []
    for a, b in zip(order, order[1:], strict=False):
        s = _sign(ev.difference(ops[a], ops[b]))
        results.append(s == -1 if s is not None else None)
        if s is None:
            undecided.append(f"{names[a]} vs {names[b]}")
    ours = ", ".join(f"{names[a]} {ev.summary_row(*ops[a])['mean_energy_j']:.1f} J"
                     for a in order)
    paper = ", ".join(f"{a} {ref[a]:g} Wh" for a in order)
    ok = False if False in results else None if None in results else True
    return Outcome(ok, f"{ftype} write energy, the paper's order: {ours} (paper: {paper})",
                   why="the intervals cannot order them", undecided=undecided,
                   rests_on=[f"{ftype} {c}" for c in names.values()])
