"""The space a job needs on its target (inputs, outputs and their copies, with a margin),
checked before anything is written."""

from __future__ import annotations

import os
import shutil

from wattzip.errors import ConfigError

# A compressed file can outgrow its input (compress on random data: 1.25x), and the
# target holds the stored files of one repeat while the next is written: one rule for
# the pre-flight checks and the job.
SPACE_MARGIN = 2.5


def space_needed(input_bytes: int, copies: int = 1, phases: int = 1,
                 inputs_on_medium: bool = False) -> int:
    """Bytes a job's target must hold: every copy's (and duty-cycle phase's) file, and
    the inputs staged on it (SYSTOR '09's layout)."""
    staged = input_bytes * copies if inputs_on_medium else 0
    return int(SPACE_MARGIN * input_bytes * copies * phases) + staged


def check_free_space(target_dir: str, needed_bytes: int, image: str | None = None,
                     image_bytes: int = 0) -> None:
    """Stop before damage: the target must hold the job's files, and the disk under an
    image must have room for the whole image (it is sparse: it grows as it fills)."""
    free = shutil.disk_usage(target_dir).free
    if free < needed_bytes:
        raise ConfigError(f"target directory {target_dir} has {free / 2**30:.2f} GiB free; "
                          f"this study needs {needed_bytes / 2**30:.2f} GiB. Free space, or "
                          "point target_dir (or the medium's size) at something larger")
    if image:
        host = os.path.dirname(os.path.abspath(image))
        held = os.stat(image).st_blocks * 512 if os.path.exists(image) else 0
        room = shutil.disk_usage(host).free + held
        if room < image_bytes:
            raise ConfigError(f"the image {image} is {image_bytes / 2**30:.2f} GiB, but its "
                              f"disk ({host}) has room for {room / 2**30:.2f} GiB; a full "
                              "image would fail mid-run. Free space or make the image smaller")
