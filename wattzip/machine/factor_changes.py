"""The machine factors set for a job or an idle calibration, journaled, then restored.

What each factor is (its check, its files, its value in effect) is wattzip.machine.factors'
table, which journals nothing; this module makes the changes under the journal
(wattzip.machine), so that the undoers can read the table without importing the journal.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

from wattzip import machine
from wattzip.errors import FactorError
from wattzip.machine.factors import KEEP, MACHINE_FACTORS, SYSFS, check, in_effect


@contextlib.contextmanager
def applied(disk: str | None, values: Mapping[str, str], sysfs: str = SYSFS
            ) -> Iterator[dict]:
    """Set the machine factors' `values` (MACHINE_FACTORS' names; "keep" or left out:
    as the machine is) for the duration of a job, then restore what was there.

    Each change is journaled machine-wide before it is made (wattzip.machine), so a
    job killed before it could restore is undone by the next wattzip command; a
    restore that fails is an error naming what stayed changed. Yields what is in
    effect, read back: {"io_scheduler": ..., "governor": ...}.
    """
    check(disk, values, sysfs)
    made: list[str] = []
    effect = in_effect(disk, sysfs)
    try:
        for name, factor in MACHINE_FACTORS.items():
            value = values.get(name, KEEP)
            if value == KEEP:
                continue
            for path, text in factor.writes(disk, sysfs, value):
                made.append(machine.note("sysfs", str(path), factor.current(path)))
                path.write_text(text)
            effect[name] = factor.in_effect(disk, sysfs)
            if effect[name] != value:
                raise FactorError(f"factor {name}={value}: {effect[name]} is in effect "
                                  "after switching")
        yield effect
    finally:
        machine.undo([e for e in machine.pending() if e["id"] in made])
