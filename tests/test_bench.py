"""`wattzip bench` on real commands whose relations are known, under the estimated model
and under fake RAPL counters that behave like the kernel's powercap files."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import subprocess
import threading
import time

import pytest

from wattzip import cli
from wattzip.bench import command_line
from wattzip.bench.progress import BenchProgress
from wattzip.errors import (
    CommandFailedError,
    EmptyCommandError,
    EmptyParameterRangeError,
    MeterError,
    WattzipError,
)
from wattzip.measure.idle import QuietCheck
from wattzip.measure.runner import cpu_busy_jiffies
from wattzip.workload import inputs

from .sysfs import publish

MAX_RANGE = 262143328850  # a real package zone's max_energy_range_uj
# Interleaved, so that a neighbour's changing load falls on both commands alike.
UNTIL_DECIDED = ("--until-decided", "--looks", "4,8,12")
# Other processes' share of all CPUs above which a busy loop cannot add machine-wide power.
SATURATED = 0.6
BUSY_03 = "timeout 0.3 sh -c 'while :; do :; done'; true"  # busy for 0.3 s, like sleep 0.3


def bench(tmp_path, *argv: str) -> dict:
    """Run `wattzip bench ... --export-json` in this process; its JSON document."""
    out = tmp_path / "bench.json"
    args = cli.build_parser().parse_args(["bench", "--progress", "none", "--export-json",
                                          str(out), *argv])
    assert command_line.run(args) == 0
    return json.loads(out.read_text())


def by_command(doc: dict) -> dict:
    return {r["command"]: r for r in doc["results"]}


class FakeRapl:
    """A package-0 zone whose energy_uj a thread advances as the kernel would: power(t)
    times the time since the last tick, in µJ, wrapping at max_energy_range_uj; each
    value written whole (rename), as sysfs never shows half a number."""

    def __init__(self, root, power_w, start_uj: int = 0, tick_s: float = 0.01):
        self.zone = root / "intel-rapl:0"
        self.zone.mkdir(parents=True)
        (self.zone / "name").write_text("package-0\n")
        (self.zone / "max_energy_range_uj").write_text(f"{MAX_RANGE}\n")
        self.root, self.power_w, self.tick_s = root, power_w, tick_s
        self.energy_uj = float(start_uj)
        self._write()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _write(self) -> None:
        publish(self.zone / "energy_uj", f"{int(self.energy_uj) % MAX_RANGE}\n")

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(self.tick_s):
            now = time.monotonic()
            self.energy_uj += self.power_w(now - last) * (now - last) * 1e6
            last = now
            self._write()

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


class CpuLoadPower:
    """Watts that follow the machine's busy CPUs, as a package's power does."""

    def __init__(self, base_w: float = 5.0, per_cpu_w: float = 20.0):
        self.base_w, self.per_cpu_w = base_w, per_cpu_w
        self.busy = cpu_busy_jiffies()

    def __call__(self, dt_s: float) -> float:
        busy = cpu_busy_jiffies()
        cpus = (busy - self.busy) / os.sysconf("SC_CLK_TCK") / max(dt_s, 1e-6)
        self.busy = busy
        return self.base_w + self.per_cpu_w * cpus


def check_sleep_against_busy(doc: dict, quiet: QuietCheck) -> None:
    """The same time; more energy for the busy loop, unless other processes saturated
    the machine (then a meter of the whole machine rightly sees no extra power, and the
    test says so and skips rather than pass or fail on a neighbour's load)."""
    row = doc["comparisons"][0]
    assert row["reference"] == "sleep 0.3" and row["command"] == BUSY_03
    assert abs(row["time"]["ratio"] - 1) < 0.05, row["time"]  # the same time, within noise
    if row["energy"]["verdict"] != "costs":
        others, busiest = quiet.others_load()
        if others > SATURATED:
            pytest.skip(f"other processes used {others:.0%} of the CPUs "
                        f"({', '.join(busiest)}): with the machine saturated a busy loop "
                        "adds no machine-wide power")
    assert row["energy"]["verdict"] == "costs", row["energy"]  # more energy
    assert row["energy"]["verdict_text"] == "more energy"
    assert row["energy"]["ratio"] > 1


def test_sleep_against_a_busy_loop_under_the_model(tmp_path):
    quiet = QuietCheck()
    doc = bench(tmp_path, *UNTIL_DECIDED, "--meter", "model", "--idle-power-w", "2",
                "sleep 0.3", BUSY_03)
    check_sleep_against_busy(doc, quiet)
    assert doc["meter"]["method"] == "estimated"  # the busy loop costs more at either extreme
    assert doc["comparisons"][0]["energy"]["model_robustness"] == "robust to the model"
    busy, sleep = by_command(doc)[BUSY_03], by_command(doc)["sleep 0.3"]
    assert busy["user"] + busy["system"] > 10 * (sleep["user"] + sleep["system"])
    assert busy["energy_active_mean_j"] > sleep["energy_active_mean_j"]


def test_sleep_against_a_busy_loop_under_a_meter_following_cpu_load(tmp_path):
    root = tmp_path / "powercap"
    quiet = QuietCheck()
    # the counter wraps inside the first run
    with FakeRapl(root, CpuLoadPower(), start_uj=MAX_RANGE - 1_000_000):
        doc = bench(tmp_path, *UNTIL_DECIDED, "--meter", "powercap", "--powercap-root",
                    str(root), "--interval", "0.05", "sleep 0.3", BUSY_03)
    check_sleep_against_busy(doc, quiet)
    assert doc["meter"]["method"] == "measured" and doc["meter"]["source"] == "powercap"
    assert doc["comparisons"][0]["energy"]["model_robustness"] == ""  # no model to depend on
    assert all(e > 0 for r in doc["results"] for e in r["energies_j"])


def test_gzip_9_takes_more_time_and_energy_than_gzip_1(tmp_path):
    text = tmp_path / "text.bin"
    inputs.generate("text", 4 << 20, text, seed=7, progress=False)
    doc = bench(tmp_path, "--runs", "4", "--warmup", "1", "--shell", "none", "--meter",
                "model", f"gzip -1 -c {text}", f"gzip -9 -c {text}")
    row = doc["comparisons"][0]
    assert row["time"]["verdict"] == "costs" and row["time"]["ratio"] > 1
    assert row["energy"]["verdict"] == "costs" and row["energy"]["ratio"] > 1


class PowerLogger:
    """An external power logger writing `timestamp,watts` lines every period (as a smart
    plug's logger does): 20 W until a flag file appears, 80 W while it is there."""

    def __init__(self, path, flag, period_s: float = 0.01):
        self.path, self.flag, self.period_s = path, flag, period_s
        path.write_text("timestamp,watts\n")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with open(self.path, "a") as f:
            while True:
                f.write(f"{time.time():.6f},{80.0 if self.flag.exists() else 20.0}\n")
                f.flush()
                if self._stop.wait(self.period_s):
                    return

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def test_a_power_step_inside_a_run(tmp_path):
    """20 W until the command touches a flag half-way, 80 W after: each run's energy is
    the integral across the step, not either level times its time."""
    flag, trace = tmp_path / "flag", tmp_path / "power.csv"
    with PowerLogger(trace, flag):
        doc = bench(tmp_path, "--runs", "3", "--meter", "trace", "--trace", str(trace),
                    "--prepare", f"rm -f {flag}", f"sleep 0.2; touch {flag}; sleep 0.2")
    result = doc["results"][0]
    for elapsed, energy in zip(result["times"], result["energies_j"], strict=True):
        assert energy == pytest.approx(20 * 0.2 + 80 * (elapsed - 0.2), rel=0.1)
    assert 20 < result["mean_power_w"] < 80
    runs = doc["runs"][0]  # the power over the interval the energy covers, not the command's
    assert result["mean_power_w"] == pytest.approx(sum(r["energy_j"] for r in runs)
                                                   / sum(r["meter_interval_s"] for r in runs))
    assert doc["meter"]["source"] == "trace" and doc["meter"]["method"] == "measured"


def test_until_decided_stops_early_on_a_clear_difference(tmp_path):
    doc = bench(tmp_path, "--until-decided", "--looks", "3,5,8,13", "--meter", "model",
                "sleep 0.05", "timeout 0.4 sh -c 'while :; do :; done'; true")
    runs = [len(r["times"]) for r in doc["results"]]
    log = doc["looks_log"]
    assert log[0]["decided"] and log[-1]["runs"] == runs[0] == runs[1]
    # it stopped at the first look that decided with no new outlier (on a busy machine a
    # new outlier at a look sends it on to the next one, as in a study's job)
    stop = next((i for i, look in enumerate(log) if look["decided"]
                 and not look["new_outliers"]), len(log) - 1)
    assert len(log) == stop + 1, log
    assert doc["comparisons"][0]["energy"]["verdict"] == "costs"
    # interleaved: the two commands' runs alternate in time (ABBA)
    starts = sorted((r["started_at"], r["op"]) for r in doc["runs"][0] + doc["runs"][1])
    assert [op for _, op in starts[:4]] == ["0", "1", "1", "0"]


def test_until_decided_runs_to_its_maximum_on_no_difference(tmp_path):
    doc = bench(tmp_path, "--until-decided", "--looks", "3,4,5", "--margin", "0",
                "--confidence", "0.999", "--meter", "model", "sleep 0.05", "sleep 0.05")
    assert [len(r["times"]) for r in doc["results"]] == [5, 5]
    assert "last look" in doc["stopped"]
    assert [look["runs"] for look in doc["looks_log"]] == [3, 4, 5]
    assert doc["comparisons"][0]["energy"]["verdict"] == "undecided"


def test_an_outlier_is_flagged_measured_again_and_kept(tmp_path):
    count = tmp_path / "count"
    count.write_text("0\n")
    # the fourth run is ten times slower than the others
    line = (f"n=$(cat {count}); echo $((n+1)) > {count}; "
            "if [ $n -eq 3 ]; then sleep 0.3; else sleep 0.03; fi")
    doc = bench(tmp_path, "--runs", "6", "--meter", "none", line)
    result = doc["results"][0]
    assert 4 in result["outlier_runs"]
    # one more run per outlier, the outlier counted; a run flagged among the first few
    # (before the slow one) also cost one more, though the whole set no longer calls it one
    assert 6 + len(result["outlier_runs"]) <= len(result["times"]) <= 6 + 6
    # every run that cost one more is named, an outlier of the whole set or not
    assert len(result["times"]) == min(6 + len(result["flagged_runs"]), 12)
    assert set(result["outlier_runs"]) <= set(result["flagged_runs"])
    assert max(result["times"]) > 0.3 and result["max"] > 0.3


def hyperfine(tmp_path, *argv: str) -> None:
    """hyperfine's own exports, to compare layouts with."""
    subprocess.run(["hyperfine", "--style", "none", "-N", "--runs", "2", *argv],
                   check=True, capture_output=True, cwd=tmp_path)


@pytest.mark.skipif(shutil.which("hyperfine") is None, reason="hyperfine not installed")
def test_exports_parse_and_match_hyperfines_layout(tmp_path):
    cmd = ["-L", "n", "1,2", "sleep 0.0{n}"]
    hf = tmp_path / "hf"
    hf.mkdir()
    hyperfine(hf, "--export-json", "h.json", "--export-csv", "h.csv",
              "--export-markdown", "h.md", *cmd)
    ours = tmp_path / "ours"
    ours.mkdir()
    doc = bench(ours, "--runs", "2", "-N", "--meter", "model", "--export-csv",
                str(ours / "w.csv"), "--export-markdown", str(ours / "w.md"), *cmd)
    theirs = json.loads((hf / "h.json").read_text())
    assert [r["command"] for r in doc["results"]] == [r["command"] for r in
                                                      theirs["results"]]
    for mine, their in zip(doc["results"], theirs["results"], strict=True):
        for key, value in their.items():  # every hyperfine field, with its type
            assert key in mine
            assert type(mine[key]) is type(value) or isinstance(value, float), key
        assert mine["parameters"] == their["parameters"]
        assert len(mine["times"]) == len(mine["exit_codes"]) == len(mine["energies_j"]) == 2
        assert min(mine["memory_usage_byte"]) > 0  # hyperfine 1.20's, not Debian's 1.15
    header = next(csv.reader(io.StringIO((hf / "h.csv").read_text())))
    rows = list(csv.DictReader(io.StringIO((ours / "w.csv").read_text())))
    assert list(rows[0])[:len(header)] == header
    assert [r["parameter_n"] for r in rows] == ["1", "2"]
    assert all(r["meter_method"] == "estimated" and float(r["energy_mean_j"]) > 0
               for r in rows)
    their_md = (hf / "h.md").read_text().splitlines()
    our_md = (ours / "w.md").read_text().splitlines()
    assert our_md[0].startswith(their_md[0].rstrip("|").rstrip()[:-len(" Relative")])
    assert "ESTIMATED" in our_md[0]
    assert len([line for line in our_md if line.startswith("| `")]) == 2


def run_args(*argv: str):
    return cli.build_parser().parse_args(["bench", "--progress", "none", "--lock-wait",
                                          "600", *argv])


@pytest.mark.parametrize("argv, error", [
    (["--meter", "model", "  "], EmptyCommandError),
    (["--meter", "model", "-N", "''"], EmptyCommandError),
    (["--meter", "model", "-P", "n", "5", "1", "sleep {n}"], EmptyParameterRangeError),
    (["--meter", "model", "-L", "n", "", "sleep {n}"], EmptyParameterRangeError),
])
def test_bad_input_gets_a_named_error_before_any_run(argv, error):
    with pytest.raises(error):
        command_line.run(run_args(*argv))


@pytest.mark.parametrize("argv, message", [
    (["--confidence", "95"], "--confidence 95"),
    (["--margin", "-0.5"], "--margin -0.5"),
    (["--idle-power-w", "-3"], "--idle-power-w -3"),
    (["--setup", " "], "--setup command is empty"),
    (["--prepare", "true", "--cleanup", ""], "--cleanup command is empty"),
    (["--export-csv", "."], "--export-csv ."),
    (["--export-json", "{tmp}/absent/out.json"], "not a file in an existing folder"),
    (["--export-markdown", "{tmp}"], "not a file in an existing folder"),
    (["--max-runs", "1"], "--max-runs 1"),
    (["--until-decided"], "--runs and --until-decided"),
    (["--looks", "3,5"], "--looks applies only with --until-decided"),
    (["-P", "a", "1", "2", "-P", "b", "1", "2"], "-P/--parameter-scan is given twice"),
])
def test_what_would_fail_after_the_runs_is_refused_before_them(argv, message, tmp_path):
    """hyperfine checks these first; here too, so no measured benchmark is lost to them."""
    marks = tmp_path / "marks"
    argv = [arg.replace("{tmp}", str(tmp_path)) for arg in argv]
    with pytest.raises(WattzipError, match=re.escape(message)):
        command_line.run(run_args("--meter", "none", "--runs", "2", *argv,
                                   f"echo run >> {marks}"))
    assert not marks.exists() and not (tmp_path / "absent").exists()


def test_an_unsplittable_line_is_shown_once_and_a_misspelled_flag_in_bench_s_usage(capsys):
    with pytest.raises(WattzipError) as error:
        command_line.run(run_args("--meter", "none", "-N", "echo 'a"))
    assert str(error.value).count("echo 'a") == 1
    with pytest.raises(SystemExit) as exit_:
        cli.main(["bench", "--meter", "none", "-n", "a", "--runz", "2", "true"])
    assert exit_.value.code == 2
    assert "wattzip bench: error: unrecognized arguments: --runz" in capsys.readouterr().err


def test_a_failing_command_and_a_missing_meter_are_named(tmp_path):
    with pytest.raises(CommandFailedError, match="exit code 3"):
        command_line.run(run_args("--runs", "2", "--meter", "none", "exit 3"))
    with pytest.raises(CommandFailedError, match="in a warm-up run: no such input$|no such input;"):
        command_line.run(run_args("--runs", "2", "--warmup", "1", "--meter", "none",
                                   "echo no such input >&2; exit 1"))
    with pytest.raises(MeterError, match="powercap"):
        command_line.run(run_args("--runs", "2", "--meter", "powercap", "--powercap-root",
                                   str(tmp_path / "none"), "true"))
    doc = bench(tmp_path, "--runs", "2", "--meter", "none", "--ignore-failure", "exit 3")
    assert doc["results"][0]["exit_codes"] == [3, 3]


def test_progress_is_a_bar_on_a_terminal_and_lines_elsewhere():
    tty, plain = io.StringIO(), io.StringIO()
    for stream, is_tty in ((tty, True), (plain, False)):
        p = BenchProgress(stream, tty=is_tty)
        p.start("Benchmark 1: sleep 0.1", 3)
        p.run_done("0.1 s")
        p.run_done("0.1 s")
        p.clear()
    assert "ETA" in tty.getvalue() and "\r" in tty.getvalue() and "2/3" in tty.getvalue()
    assert "\r" not in plain.getvalue()
    assert plain.getvalue().splitlines()[-1].strip() == "run 2/3: 0.1 s"


def test_the_cli_prints_the_meter_method_and_the_verdicts(tmp_path, capsys):
    assert cli.main(["bench", "--runs", "2", "--meter", "model", "--progress", "none",
                     "sleep 0.01", "sleep 0.02"]) == 0
    out = capsys.readouterr().out
    assert "ESTIMATED" in out and "Against 'sleep 0.01'" in out
    assert "Time (mean ± σ)" in out and "Energy (mean ± 95%)" in out


def test_show_output_prints_each_runs_output_after_it(tmp_path, capsys):
    bench(tmp_path, "--runs", "2", "--meter", "none", "--show-output", "echo hello-bench")
    assert capsys.readouterr().out.splitlines().count("hello-bench") == 2


def test_parameters_expand_as_in_hyperfine():
    from wattzip.bench import commands

    assert commands.scan_values("t", "0.1", "0.3", "0.1") == ["0.1", "0.2", "0.3"]
    assert commands.scan_values("n", "1", "3", None) == ["1", "2", "3"]
    cmds = commands.expand(["gzip -{l} -c {f}", "xz -{l} -c {f}"], None,
                           [("l", ["1", "9"]), ("f", ["a"])])
    assert [c.line for c in cmds] == ["gzip -1 -c a", "gzip -9 -c a", "xz -1 -c a",
                                      "xz -9 -c a"]
    assert cmds[1].parameters == {"l": "9", "f": "a"}
    assert cmds[0].argv("sh") == ["sh", "-c", "gzip -1 -c a"]
    assert cmds[0].argv("none") == ["gzip", "-1", "-c", "a"]


def test_drop_caches_that_cannot_be_written_says_what_it_cannot_do(tmp_path, monkeypatch,
                                                                    capsys):
    from wattzip.measure import runner

    # as in a container with a read-only /proc/sys: the global drop is refused
    monkeypatch.setattr(runner, "DROP_CACHES", str(tmp_path / "no" / "drop_caches"))
    data = tmp_path / "data.txt"
    data.write_text("x" * 4096)
    doc = bench(tmp_path, "--runs", "2", "-N", "--meter", "none", "--drop-caches",
                f"cat {data}")
    assert [r["cache_drop"] for r in doc["runs"][0]] == ["per-file", "per-file"]
    err = capsys.readouterr().err
    assert "cannot be dropped" in err and str(data) in err


def test_runs_are_planned_on_what_a_run_costs_in_all_not_the_command_s_time():
    """`true` takes a millisecond, but each run costs 0.2 s more (here a --prepare; an
    IPMI or WattsUp meter's seconds alike): the runs that fill the target are planned
    on that cost, not hundreds of runs of the command's time alone."""
    import io

    from wattzip import meters
    from wattzip.bench import loop
    from wattzip.bench.commands import Command
    from wattzip.bench.progress import BenchProgress

    plan = loop.Plan([Command("true", "true")], min_runs=2, max_runs=40,
                     prepare=["sleep 0.2"], min_benchmarking_s=0.6)
    meter = meters.ModelMeter(meters.MeterOptions(model_idle_power_w=20,
                                                  model_max_power_w=60, interval_s=0.05))
    bench = loop.Bench(plan, meter, BenchProgress(io.StringIO(), tty=False), lambda _: None)
    bench.one_after_another()
    assert 2 <= len(bench.results[0]) <= 4
