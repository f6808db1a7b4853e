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


def file_under(root: Path):
    """A file named relative to `root` (an overlay the script copies with the workflow)."""

    def check(text: str) -> str:
        if not (root / text).is_file():
            raise argparse.ArgumentTypeError(f"no such file under {root}: {text}")
        return text

    return check
