"""`wattzip bench` in hyperfine's place: a hyperfine 1.20 command line works unchanged, and
a script written against hyperfine's JSON export reads wattzip's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from wattzip.bench import command_line
from wattzip.errors import CommandFailedError

from .test_bench import bench, by_command, run_args

SCRIPT = Path(__file__).parent / "hyperfine_scripts" / "advanced_statistics.py"


def test_a_hyperfine_command_line_works_and_its_script_reads_the_export(tmp_path):
    given = tmp_path / "in.txt"
    given.write_text("words on standard input\n")
    marks = tmp_path / "concluded"
    doc = bench(tmp_path, "--style", "basic", "-N", "--runs", "3", "--warmup", "1",
                "--meter", "none", "--input", str(given), "--output", "pipe",
                "--conclude", f"touch {marks}", "--time-unit", "millisecond",
                "--sort", "mean-time", "--reference", "sleep 0.03", "--reference-name",
                "thirty", "-L", "n", "1,2", "--export-asciidoc", str(tmp_path / "t.adoc"),
                "--export-orgmode", str(tmp_path / "t.org"), "--min-benchmarking-time",
                "0.5", "sleep 0.0{n}")
    assert [r["command"] for r in doc["results"]] == ["thirty", "sleep 0.01", "sleep 0.02"]
    assert doc["reference"] == "thirty" and marks.exists()
    for r in doc["results"]:
        assert len(r["times"]) == len(r["memory_usage_byte"]) == len(r["exit_codes"]) == 3
    proc = subprocess.run([sys.executable, str(SCRIPT), str(tmp_path / "bench.json"),
                           "--time-unit", "millisecond"], capture_output=True, text=True,
                          check=True)
    first = by_command(doc)["sleep 0.01"]
    block = proc.stdout.split("Command 'sleep 0.01'")[1].split("Command '")[0]
    assert "runs:          3" in block and '"n": "1"' in block
    assert f"mean:   {1e3 * first['mean']:8.3f} ms" in block
    assert f"peak memory: {max(first['memory_usage_byte'])} bytes" in block
    adoc = (tmp_path / "t.adoc").read_text().splitlines()
    assert adoc[:2] == ['[cols="<,>,>,>,>,<"]', "|==="] and "| Mean [ms] " in adoc
    org = (tmp_path / "t.org").read_text().splitlines()
    assert org[0].startswith("| Command  |  Mean [ms]") and org[1] == "|--+--+--+--+--+--|"
    # --sort mean-time: the fastest row first
    assert org[2].startswith("| =sleep 0.01=")


def test_ignore_failure_takes_hyperfine_s_modes_and_leaves_a_command_after_it(tmp_path):
    doc = bench(tmp_path, "--meter", "none", "--runs", "2", "--ignore-failure=1,3",
                "exit 1", "exit 3")
    assert [r["exit_codes"] for r in doc["results"]] == [[1, 1], [3, 3]]
    with pytest.raises(CommandFailedError, match="exit code 2"):
        command_line.run(run_args("--meter", "none", "--runs", "2", "--ignore-failure=1",
                                  "exit 2"))
    # hyperfine reads `-i CMD` as the flag and a command line: so does wattzip bench
    doc = bench(tmp_path, "--meter", "none", "--runs", "2", "-i", "exit 4", "true")
    assert [r["command"] for r in doc["results"]] == ["exit 4", "true"]
    assert doc["results"][0]["exit_codes"] == [4, 4]


def test_a_reference_by_name_is_one_of_the_commands(tmp_path):
    doc = bench(tmp_path, "--meter", "none", "--runs", "2", "-n", "a", "-n", "b",
                "--reference", "b", "true", "sleep 0.01")
    assert [r["command"] for r in doc["results"]] == ["a", "b"] and doc["reference"] == "b"
    out = tmp_path / "out.txt"  # hyperfine's --output once per command line
    bench(tmp_path, "--meter", "none", "--runs", "1", "--output", "null", "--output",
          str(out), "echo first", "echo second")
    assert out.read_text() == "second\n"
    assert json.loads(json.dumps(doc))["comparisons"][0]["reference"] == "b"
