"""Does a written file own its blocks? The kernel's FIEMAP answer (what filefrag -v shows).

A "copy" may write nothing: copy_file_range on XFS or btrfs makes a reflink
whose extents are shared with the source, and then a plain-write baseline
measures no data reaching the device. A file with shared extents is caught
after the measured region and its run is failed with that reason.
"""

from __future__ import annotations

import errno
import fcntl
import os
import struct
from dataclasses import dataclass

FS_IOC_FIEMAP = 0xC020660B
FIEMAP_FLAG_SYNC = 0x1
FIEMAP_EXTENT_LAST = 0x1
FIEMAP_EXTENT_SHARED = 0x2000
_HEADER = struct.Struct("=QQLLLL")  # fm_start, fm_length, fm_flags, mapped, count, reserved
_EXTENT = struct.Struct("=QQQQQLLLL")  # logical, physical, length, 2 reserved, flags, 3 reserved
_BATCH = 256


@dataclass
class Extents:
    count: int
    shared: int
    shared_bytes: int
    mapped_bytes: int

    @property
    def owns_blocks(self) -> bool:
        return self.shared == 0


def file_extents(path: str | os.PathLike) -> Extents | None:
    """The extents of `path`, or None where the filesystem has no FIEMAP (tmpfs)."""
    count = shared = shared_bytes = mapped = 0
    start = 0
    with open(path, "rb") as f:
        while True:
            header = _HEADER.pack(start, 2**64 - 1 - start, FIEMAP_FLAG_SYNC, 0, _BATCH, 0)
            buf = bytearray(header + bytes(_EXTENT.size * _BATCH))
            try:
                fcntl.ioctl(f.fileno(), FS_IOC_FIEMAP, buf, True)
            except OSError as exc:
                if exc.errno in (errno.EOPNOTSUPP, errno.ENOTTY, errno.EINVAL):
                    return None
                raise
            n = _HEADER.unpack_from(buf)[3]
            if n == 0:
                break
            last = False
            for i in range(n):
                logical, _, length, _, _, flags, *_ = _EXTENT.unpack_from(
                    buf, _HEADER.size + i * _EXTENT.size)
                count += 1
                mapped += length
                if flags & FIEMAP_EXTENT_SHARED:
                    shared += 1
                    shared_bytes += length
                last = bool(flags & FIEMAP_EXTENT_LAST)
                start = logical + length
            if last:
                break
    return Extents(count, shared, shared_bytes, mapped)


def check_owns_blocks(paths: list[str]) -> tuple[bool | None, str]:
    """(True, "") when every file owns its blocks; (None, why) where it cannot be told."""
    unknown = []
    for path in paths:
        ext = file_extents(path)
        if ext is None:
            unknown.append(path)
            continue
        if not ext.owns_blocks:
            return False, (f"{path}: {ext.shared} of its {ext.count} extents "
                           f"({ext.shared_bytes} bytes) are shared with another file (a "
                           "reflink), so the write put no data of its own on the device")
    if unknown:
        return None, "the filesystem does not report extents (FIEMAP), e.g. tmpfs"
    return True, ""
