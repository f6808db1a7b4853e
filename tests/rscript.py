"""An R snippet run as the workflow's scripts run, from the repository, after sourcing one
of its scripts: its standard output."""

from __future__ import annotations

import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def r_output(tmp_path: Path, source: str, body: str) -> str:
    """Rscript of `source("scripts/<source>")` and `body`, run in the repository."""
    script = tmp_path / "t.R"
    script.write_text(f'source("scripts/{source}")\n{body}')
    return subprocess.run(["Rscript", str(script)], cwd=REPO, capture_output=True, text=True,
                          check=True).stdout
