"""Benchmark notes: compression ratios of the paper's codecs on one input.

    .venv/bin/python benchmarks/ratios.py FILE [CODEC|SET ...]   (default set: paper)

Prints each codec's ratio (original / compressed), best first, beside the
SYSTOR '09 Table 3 text value, so the paper's ordering can be checked.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from wattzip.analysis.reference import read_reference
from wattzip.workload import codec_registry

TABLE3 = "paper/reference/systor09_table3_ratios.csv"


def compressed_size(codec: codec_registry.Codec, path: str) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out" + codec.suffix)
        with open(path, "rb") as fin:
            stdout = subprocess.DEVNULL if codec.writes_out_path else open(out, "wb")
            proc = subprocess.run(codec.compress_argv(out, os.cpu_count() or 1), stdin=fin,
                                  stdout=stdout, stderr=subprocess.PIPE, check=False)
        if proc.returncode not in codec.ok_exit_codes:
            sys.exit(f"{codec.name} failed: {proc.stderr.decode()[:200]}")
        return os.path.getsize(out)


def main() -> None:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    chosen = codec_registry.resolve(sys.argv[2:] or ["paper"])
    _, ref = read_reference(TABLE3)
    paper = {r["codec"]: r["display"] for r in ref if r["file_type"] == "text"}
    size = os.path.getsize(path)
    rows = [(size / compressed_size(c, path), c) for c in chosen]
    print(f"{path}: {size} bytes")
    print(f"{'codec':<8} {'ratio':>7} {'paper text':>11}  version")
    for ratio, c in sorted(rows, key=lambda r: r[0], reverse=True):
        print(f"{c.name:<8} {ratio:>7.2f} {paper.get(c.name, '--'):>11}  {c.tool} "
              f"{codec_registry.version(c)}")


if __name__ == "__main__":
    main()
