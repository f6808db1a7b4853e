"""--export-json: hyperfine's layout, `results` with command, mean, stddev, median, user,
system, min, max, times, exit_codes and parameters (times in seconds), and beside them the
energy of every run and its summary, the meter's identity and the idle power."""

from __future__ import annotations

import json


def render(document: dict) -> str:
    return json.dumps(document, indent=2) + "\n"
