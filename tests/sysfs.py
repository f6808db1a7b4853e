"""Fake kernel counter files written as sysfs and procfs serve them."""

from __future__ import annotations

import os


def publish(path, text: str) -> None:
    """Replace a counter file whole: a read of sysfs never sees half a number, so a meter
    polling the fake must not either."""
    fresh = path.with_name(path.name + ".new")
    fresh.write_text(text)
    os.replace(fresh, path)
