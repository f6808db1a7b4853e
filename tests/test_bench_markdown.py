"""What `wattzip bench` says: its Markdown export as a reader of the table sees it, its
estimated verdicts and its idle calibration."""

from __future__ import annotations

import subprocess
import sys

import pytest

from wattzip.bench.export import markdown_export


@pytest.mark.parametrize("mean, half_width, shown", [
    (0.559, 0.27, "0.56 ± 0.27"),
    (12.3456, 0.0996, "12.35 ± 0.10"),  # rounds up to a power of ten: still 2 figures
    (1.0, 0.1, "1.00 ± 0.10"),
    (3.14159, 0.00999, "3.142 ± 0.010"),
    (523.4, 123.4, "523 ± 123"),
    (4.2, 0.0, "4.2 ± 0"),
])
def test_the_markdown_plus_minus_has_two_figures_and_the_mean_its_places(mean, half_width,
                                                                        shown):
    assert markdown_export._plus_minus(mean, half_width) == shown


def _runs(elapsed_s: float, cpu_busy_s: float, model) -> list[dict]:
    """Five runs as the runner records them under the model meter: the machine's busy
    CPU-seconds and the meter's interval, the energy the coefficients give them."""
    out = []
    for i, f in enumerate((0.98, 1.0, 1.02, 0.99, 1.01), 1):
        t, cpu = elapsed_s * f, cpu_busy_s * f
        out.append({"op": "0", "repeat": i, "elapsed_s": t, "meter_interval_s": t,
                    "cpu_busy_s": cpu, "meter_method": "estimated",
                    "energy_j": model.energy_j(t, cpu), **model.record_fields(t, cpu)})
    return out


def test_an_estimated_verdict_that_the_coefficients_decide_says_it_depends_on_the_model():
    """A parallel command (1 s, 4 CPU-s) against a serial one (2.5 s, 1 CPU-s) on four
    threads: less energy where idle power is a small share of full load, more where it
    is a large one. The table's average decides one way; the words must not hide that
    the table's extremes decide both ways."""
    from wattzip.analysis import robustness
    from wattzip.bench import summary
    from wattzip.meters.coefficients import extremes, match

    low, high = extremes(4)
    middle = match("", 4)
    verdicts = {m.row: summary.compare(_runs(2.5, 1.0, m), _runs(1.0, 4.0, m), "energy",
                                       0.02, 0.95)["verdict"] for m in (low, high)}
    assert len(set(verdicts.values())) == 2, verdicts  # the data really flip
    rows = summary.comparisons([_runs(1.0, 4.0, middle), _runs(2.5, 1.0, middle)],
                               ["parallel", "serial"], 0, 0.02, 0.95)
    energy = rows[0]["energy"]
    assert energy["model_robustness"] == robustness.DEPENDS
    assert robustness.DEPENDS in energy["verdict_text"]
    assert low.row in energy["verdict_text"] and high.row in energy["verdict_text"]
    same = summary.comparisons([_runs(1.0, 1.0, middle), _runs(2.0, 2.0, middle)],
                               ["short", "long"], 0, 0.02, 0.95)[0]["energy"]
    assert same["model_robustness"] == robustness.ROBUST  # twice the time and the work
    assert robustness.DEPENDS not in same["verdict_text"]


def test_the_readme_s_level_scan_says_estimated_wherever_its_energy_is(tmp_path):
    """The README's second `wattzip bench` line, as a user runs it (zstd's levels on a text
    file, until decided), exported as Markdown: each energy column, each energy verdict and
    the footnote say ESTIMATED; the reference row is the first level."""
    import random

    rng = random.Random(1)
    words = ["".join(rng.choice("etaoinshrdlu") for _ in range(rng.randint(2, 9)))
             for _ in range(3000)]
    (tmp_path / "big.txt").write_text(" ".join(rng.choice(words) for _ in range(100_000)))
    proc = subprocess.run([sys.executable, "-m", "wattzip", "bench", "-N", "-P", "level", "1",
                           "9", "zstd -{level} -c big.txt", "--until-decided", "--meter",
                           "model", "--export-markdown", "out.md", "--progress", "none"],
                          cwd=tmp_path, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    lines = (tmp_path / "out.md").read_text().splitlines()
    head, rows = lines[0], [line for line in lines if line.startswith("| `")]
    assert "Energy [J] ESTIMATED" in head and "Energy relative ESTIMATED" in head
    assert [row.split("`")[1] for row in rows] == [f"zstd -{n} -c big.txt"
                                                   for n in range(1, 10)]
    assert rows[0].endswith("| reference |")
    assert all(row.rstrip(" |").endswith("ESTIMATED") for row in rows[1:]), rows
    assert lines[-1].startswith("Energy ESTIMATED: mean ± the ")
    assert "ESTIMATED" in proc.stdout.splitlines()[0]  # the terminal's meter line


@pytest.mark.parametrize("windows, spread", [(1, "one window, so no spread"), (2, "sd ")])
def test_idle_windows_calibrate_the_split_and_say_how(windows, spread, tmp_path):
    """`--idle-windows N --idle-seconds S` as a user gives them: the meter line names the
    calibration, and one window claims no spread."""
    proc = subprocess.run([sys.executable, "-m", "wattzip", "bench", "--runs", "2", "-N",
                           "--meter", "model", "--progress", "none", "--idle-windows",
                           str(windows), "--idle-seconds", "0.2", "sleep 0.01"],
                          cwd=tmp_path, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    meter_line = proc.stdout.splitlines()[0]
    assert f"(calibrated here: {windows} x 0.2 s, {spread}" in meter_line, meter_line
    assert "[active " in proc.stdout and "passive " in proc.stdout
