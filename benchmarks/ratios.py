"""Benchmark notes: compression ratios of the paper's codecs on one input.

    .venv/bin/python benchmarks/ratios.py FILE [CODEC|SET ...]   (default set: paper)

Prints each codec's ratio (original / compressed), best first, beside the
SYSTOR '09 Table 3 text value, so the paper's ordering can be checked.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

from arguments import existing_file

from wattzip.analysis.reference import read_reference
from wattzip.errors import WattzipError
from wattzip.resources import reference_file
from wattzip.workload import codec_registry


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
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=existing_file,
                        help="the input to compress, e.g. an inputs/text.bin")
    parser.add_argument("codecs", nargs="*", default=["paper"], help="codecs or sets")
    args = parser.parse_args()
    path = args.file
    try:
        chosen = codec_registry.resolve(args.codecs)
    except WattzipError as err:
        parser.error(str(err))
    _, ref = read_reference(reference_file("systor09_table3_ratios.csv"))
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
