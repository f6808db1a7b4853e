"""Argument types the benchmark scripts share: a path that must exist is checked when the
command line is read, so a wrong one is named in argparse's usage error, not a traceback."""

from __future__ import annotations

import argparse
from pathlib import Path


def existing_file(text: str) -> Path:
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"no such file: {text}")
    return path


def existing_dir(text: str) -> Path:
    path = Path(text)
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"no such folder: {text}")
    return path


def setting_journals(text: str) -> Path:
    """One setting's journal folder (journal/<setting>/<file type>/<codec>.jsonl), not the
    journal root above it, whose idle calibrations and other settings are no job's runs."""
    path = existing_dir(text)
    settings = sorted(d.name for d in path.iterdir()
                      if d.is_dir() and d.name != "idle" and any(d.glob("*/*.jsonl")))
    if (path / "idle").is_dir() or settings:
        raise argparse.ArgumentTypeError(
            f"{text} is a study's journal root: give one setting's folder, "
            + " or ".join(str(path / s) for s in settings or ["<setting>"]))
    return path


def file_under(root: Path):
    """A file named relative to `root` (an overlay the script copies with the workflow)."""

    def check(text: str) -> str:
        if not (root / text).is_file():
            raise argparse.ArgumentTypeError(f"no such file under {root}: {text}")
        return text

    return check
