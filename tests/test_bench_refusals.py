"""`wattzip bench` refuses what it would ignore or fail on late, and says what one run,
an idle power set too high and an estimated outlier are."""

from __future__ import annotations

import json
import re

import pytest

from wattzip import cli, records
from wattzip.analysis.stopping import outliers
from wattzip.bench import command_line, report
from wattzip.bench.export import markdown_export
from wattzip.errors import WattzipError


def run_args(*argv: str):
    return cli.build_parser().parse_args(["bench", "--progress", "none", "--lock-wait",
                                          "600", *argv])


def test_an_export_that_cannot_be_written_is_refused_before_any_run(tmp_path):
    marks = tmp_path / "marks"
    with pytest.raises(WattzipError, match=re.escape("--export-csv /proc/wattzip-x.csv: "
                                                     "cannot be written there")):
        command_line.run(run_args("--meter", "none", "--runs", "2", "--export-csv",
                                   "/proc/wattzip-x.csv", f"echo run >> {marks}"))
    assert not marks.exists()
    records.check_writable("--export-json", str(tmp_path / "out.json"))
    assert list(tmp_path.iterdir()) == []  # the check leaves nothing behind


def test_an_export_that_fails_after_the_runs_is_a_named_error(tmp_path, monkeypatch,
                                                               capsys):
    from wattzip.bench import export

    def full(kind, path, document):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(export, "write", full)
    with pytest.raises(WattzipError, match="not written .No space left on device"):
        command_line.run(run_args("--meter", "none", "--runs", "2", "--export-json",
                                   str(tmp_path / "out.json"), "true"))
    assert "Benchmark 1: true" in capsys.readouterr().out  # the results were shown


@pytest.mark.parametrize("argv, message", [
    (["-s", "true", "-s", "false"], "-s is given twice"),
    (["--export-json", "a.json", "--export-json", "b.json"], "--export-json is given twice"),
    (["--idle-seconds", "0"], "--idle-seconds: 0: give more than 0 s"),
    (["--interval", "-1"], "--interval: -1: give more than 0 s"),
    (["--lock-wait", "-1"], "--lock-wait: -1: give at least 0 s"),
    (["--trace-wait", "x"], "--trace-wait: 'x': give at least 0 s"),
])
def test_an_option_given_twice_or_a_time_below_zero_is_a_usage_error(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["bench", "--meter", "none", *argv, "true"])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--meter", "none", "--idle-power-w", "3"], "the meter is 'none'"),
    (["--meter", "none", "--idle-windows", "2"], "the meter is 'none'"),
    (["-P", "level", "1", "2"], "the parameter 'level' is used by no command line"),
    (["-L", "x", "a,b"], "the parameter 'x' is used by no command line"),
])
def test_an_option_that_would_be_ignored_is_refused(argv, message, tmp_path):
    marks = tmp_path / "marks"
    with pytest.raises(WattzipError, match=re.escape(message)):
        command_line.run(run_args("--runs", "2", *argv, f"echo run >> {marks}"))
    assert not marks.exists()


def test_one_run_gives_each_pair_its_ratio_and_no_verdict(tmp_path, capsys):
    out, md = tmp_path / "out.json", tmp_path / "out.md"
    assert cli.main(["bench", "--progress", "none", "--meter", "model", "-r", "1",
                     "--export-json", str(out), "--export-markdown", str(md),
                     "sleep 0.05", "sleep 0.1"]) == 0
    row = json.loads(out.read_text())["comparisons"][0]
    for metric in ("time", "energy"):  # the energy's ratio is one run's: machine-wide
        assert row[metric]["verdict"] == "undecided" and row[metric]["ratio_lo"] is None
        assert row[metric]["ratio"] > 0
    assert 1.5 < row["time"]["ratio"] < 2.5
    assert "[no interval from one run]" in capsys.readouterr().out
    cells = [cell.strip() for cell in md.read_text().splitlines()[3].split("|")]
    # The table prints the comparison's own ratios as the terminal does (the energy's is
    # machine-wide and may be near 1 on a busy machine, so it is read from the JSON).
    assert cells[5] == f"{row['time']['ratio']:.2f} [no interval from one run]"
    assert cells[7] == f"{row['energy']['ratio']:.2f} [no interval from one run]"
    assert " ± " not in cells[6]  # one run's energy has no half-width


def test_a_negative_active_energy_is_printed_with_a_note():
    result = {"command": "true", "mean": 0.01, "stddev": 0.001, "user": 0.0,
              "system": 0.0, "min": 0.009, "max": 0.011, "times": [0.009, 0.011],
              "energy_mean_j": 0.03, "energy_half_width_j": 0.01,
              "energy_active_mean_j": -0.97, "energy_passive_mean_j": 1.0,
              "energy_confidence": 0.95, "mean_power_w": 3.0, "outlier_runs": [],
              "flagged_runs": [], "exit_codes": [0, 0]}
    lines = report.result_block(1, result, "estimated", idle_power_w=100.0)
    assert "[active -0.97 J" in lines[3]
    assert lines[5].startswith("  Note: the active energy is negative: the mean power "
                               "(3.00 W) is below the idle power (100.00 W)")
    assert markdown_export._plus_minus(0.0403, None) == "0.0403"


def test_an_outlier_s_estimated_energy_says_estimated():
    runs = [{"op": "0", "repeat": i + 1, "verified": True, "elapsed_s": 1.0 + 0.01 * i,
             "energy_j": e, "meter_method": method}
            for method in ("estimated",) for i, e in enumerate([5, 5.1, 4.9, 5.0, 50])]
    said = outliers(runs, ["0"])[0].describe()
    assert "E ESTIMATED 50 J" in said
    measured = [{**r, "meter_method": "measured"} for r in runs]
    assert "E 50 J" in outliers(measured, ["0"])[0].describe()
