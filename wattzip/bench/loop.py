"""The runs: hooks, warm-up, cache drops and the measured region, one command after the
other, or all of them interleaved until the planned looks decide every pair.

Each timed run is one wattzip.measure.runner.measure region (meter started, command run, meter
stopped), the same region `wattzip measure` and every study run use. Hooks, warm-ups and
cache drops happen outside it. An outlier (modified Z above 3.5 in time or energy) is
flagged and measured again, one more run for each new one, and stays in every statistic.
"""

from __future__ import annotations

import contextlib
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from wattzip import stats
from wattzip.analysis import cell_summary
from wattzip.analysis.stopping import outliers
from wattzip.analysis.verdicts import look_confidence
from wattzip.bench import summary
from wattzip.bench.commands import NO_SHELL, Command, argv_of, substitute
from wattzip.bench.progress import BenchProgress
from wattzip.errors import CommandFailedError, MeterError, WattzipError
from wattzip.measure import runner
from wattzip.meters import Meter
from wattzip.resources import schema_default

# hyperfine's rule without --runs: enough runs for about 3 s (--min-benchmarking-time),
# at least --min-runs.
TARGET_SECONDS = 3.0


@dataclass
class Plan:
    """What to run and how; filled from the command line (wattzip.bench.command_line)."""

    commands: list[Command]
    shell: str = "sh"
    runs: int | None = None
    min_runs: int = 10
    max_runs: int | None = None
    warmup: int = 0
    prepare: list[str] = field(default_factory=list)
    setup: str | None = None
    cleanup: str | None = None
    # --output, once for all commands or once per command line: null, pipe, inherit or a
    # file (none given: null)
    outputs: list[str] = field(default_factory=list)
    input: str | None = None  # --input: a file, else /dev/null
    conclude: list[str] = field(default_factory=list)
    min_benchmarking_s: float = TARGET_SECONDS
    ignore_failure: bool = False
    ignored_codes: frozenset[int] | None = None  # --ignore-failure=1,2; None: any
    drop_caches: bool = False
    looks: tuple[int, ...] | None = None  # --until-decided
    margin: float = schema_default("verdict.margin")
    confidence: float = stats.PAPER_CONFIDENCE
    reference: int = 0
    idle_power_w: float | None = None

    def output_for(self, index: int) -> str | None:
        """Where command `index`'s standard output goes: None for /dev/null."""
        where = self.hook_for(self.outputs, index)
        return None if where in (None, "null") else where

    def shows_output(self, index: int) -> bool:
        return self.output_for(index) == "inherit"

    def hook_for(self, hooks: list[str], index: int) -> str | None:
        """hyperfine's rule for --prepare, --conclude and --output: one for all commands,
        or one per command line."""
        if not hooks:
            return None
        if len(hooks) == 1:
            return hooks[0]
        # A --reference command line of its own comes first and takes the first hook.
        return hooks[min(index // max(1, len(self.commands) // len(hooks)), len(hooks) - 1)]

    def failing(self, code: int) -> bool:
        """Whether an exit code fails the benchmark (--ignore-failure keeps it)."""
        if code == 0:
            return False
        if not self.ignore_failure:
            return True
        return self.ignored_codes is not None and code not in self.ignored_codes

    def look_confidence(self) -> float:
        return look_confidence(self.confidence, len(self.looks)) if self.looks else \
            self.confidence


class Bench:
    """One benchmark's runs, measured under one meter."""

    def __init__(self, plan: Plan, meter: Meter, progress: BenchProgress,
                 log: Callable[[str], None]):
        self.plan, self.meter, self.progress, self.log = plan, meter, progress, log
        self.results: list[list[dict]] = [[] for _ in plan.commands]
        self.stopped = ""
        self.looks_log: list[dict] = []  # --until-decided: what each look found
        # Every run flagged as an outlier while measuring, per command: each cost one more
        # run (or a look), whether or not the final set still calls it one.
        self.flagged: list[set[int]] = [set() for _ in plan.commands]
        self._said_cache = False
        self._warm: dict[int, list[str]] = {}

    # --- one run ---------------------------------------------------------------------

    def hook(self, line: str | None, what: str, command: Command) -> None:
        """A --setup, --prepare or --cleanup line (parameters substituted), outside the
        region; a failing hook stops the benchmark, as in hyperfine."""
        if not line:
            return
        line = substitute(line, command.parameters)
        out = None if "inherit" in self.plan.outputs else subprocess.DEVNULL
        proc = subprocess.run(argv_of(line, self.plan.shell, f"--{what} command"),
                              stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.PIPE,
                              check=False)
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace").strip()[-500:]
            raise CommandFailedError(f"the --{what} command {line!r} failed with exit code "
                                     f"{proc.returncode}" + (f": {err}" if err else ""))

    def drop_caches(self, index: int, argv: list[str]) -> str | None:
        """Empty the page cache before a run (--drop-caches): globally as root, else
        only the files the command names, which is said once."""
        if not self.plan.drop_caches:
            return None
        words = argv
        if self.plan.shell != NO_SHELL:
            with contextlib.suppress(ValueError):
                words = shlex.split(argv[-1])
        files = [w for w in words if os.path.isfile(w)]
        how = runner.drop_caches(files)
        if how == "global":  # the tools themselves stay warm (they are not the benchmark)
            if index not in self._warm:
                self._warm[index] = [f for w in (argv[0], words[0])
                                     for f in runner.tool_files(w)]
            runner.warm(self._warm[index])
        elif not self._said_cache:
            self._said_cache = True
            named = ", ".join(files) or "none"
            self.progress.line(
                f"note: {runner.DROP_CACHES} cannot be written here (a container's "
                f"read-only /proc/sys, or not root), so the page cache cannot be dropped; "
                f"evicting only the files the command names ({named}); everything else "
                "starts as cached")
        return how

    def warmup(self, index: int) -> None:
        command = self.plan.commands[index]
        for _ in range(self.plan.warmup):
            self.hook(self.plan.hook_for(self.plan.prepare, index), "prepare", command)
            out = None if self.plan.shows_output(index) else subprocess.DEVNULL
            with open(self.plan.input or os.devnull, "rb") as stdin:
                proc = subprocess.run(command.argv(self.plan.shell), stdin=stdin,
                                      stdout=out, stderr=subprocess.PIPE, check=False)
            self.hook(self.plan.hook_for(self.plan.conclude, index), "conclude", command)
            if self.plan.failing(proc.returncode):
                raise self.failed(command, proc.returncode, "a warm-up run",
                                  proc.stderr.decode(errors="replace").strip()[-500:])

    def failed(self, command: Command, code: int, which: str, error: str | None):
        return CommandFailedError(
            f"command {command.name!r} failed with exit code {code} in {which}"
            + (f": {error}" if error else "") + "; fix it, or give --ignore-failure to "
            "benchmark it anyway (its runs then count, with their exit codes)")

    def measure(self, index: int) -> dict:
        """One timed, metered run of command `index`; its record joins the results."""
        command, plan = self.plan.commands[index], self.plan
        self.hook(plan.hook_for(plan.prepare, index), "prepare", command)
        argv = command.argv(plan.shell)
        cache = self.drop_caches(index, argv)
        with tempfile.TemporaryDirectory(prefix="wattzip-bench-") as tmp:
            where = plan.output_for(index)
            stdout = os.path.join(tmp, "stdout") if where in ("inherit", "pipe") else where
            op = runner.Operation("bench", [argv], [plan.input or os.devnull], [stdout])
            result = runner.measure(op, self.meter, plan.idle_power_w)
            self.hook(plan.hook_for(plan.conclude, index), "conclude", command)
            if where == "inherit":  # shown after the run, outside the region
                with open(stdout, "rb") as f:
                    sys.stdout.buffer.write(f.read())
                sys.stdout.flush()
        record = {k: v for k, v in result.items() if not k.startswith("_")}
        repeat = len(self.results[index]) + 1
        record.update(op=str(index), command=command.name, repeat=repeat, verified=True,
                      parameters=dict(command.parameters), cache_drop=cache)
        if plan.failing(record["exit_code"]):
            raise self.failed(command, record["exit_code"], f"run {repeat}", record["error"])
        if record["energy_j"] is None and self.meter.method != "none":
            raise MeterError(f"the {self.meter.name} meter gave no energy for run {repeat} "
                             f"of {command.name!r}: {record['error']}")
        self.results[index].append(record)
        energy = ("" if record["energy_j"] is None else
                  f", {record['energy_j']:.3f} J {self.meter.method}")
        self.progress.run_done(f"{record['elapsed_s']:.4f} s{energy}, exit "
                               f"{record['exit_code']}")
        return record

    # --- the designs ---------------------------------------------------------------------

    def planned_runs(self, first_cost_s: float) -> int:
        """Runs to fill --min-benchmarking-time at what the first run cost in all: its meter (an
        IPMI or WattsUp run takes seconds whatever the command), its --prepare and cache
        drop too, not the command's time alone (`true` under such a meter: not 3,000)."""
        if self.plan.runs:
            return self.plan.runs
        wanted = math.ceil(self.plan.min_benchmarking_s / max(first_cost_s, 1e-6))
        most = self.plan.max_runs or max(wanted, self.plan.min_runs)
        return max(self.plan.min_runs, min(wanted, most))

    def remeasure_outliers(self, index: int, limit: int) -> None:
        """One more run per new outlier, at most `limit` runs; the outlier stays."""
        seen: set[int] = set()
        while True:
            flagged = outliers(self.results[index], [str(index)])
            new = [o for o in flagged if o.repeat not in seen]
            if not new:
                return
            for o in new:
                seen.add(o.repeat)
                self.flagged[index].add(o.repeat)
                if len(self.results[index]) >= limit:
                    self.progress.line(f"warning: {self.plan.commands[index].name!r}: "
                                       f"{o.describe()}; it stays, flagged, at the most "
                                       f"runs ({limit})")
                    continue
                self.progress.line(f"warning: {self.plan.commands[index].name!r}: "
                                   f"{o.describe()}; measuring one more run (the outlier "
                                   "stays in the data)")
                self.progress.replan(len(self.results[index]) + 1)
                self.measure(index)
            if len(self.results[index]) >= limit:
                return

    def warn_two_groups(self, index: int) -> None:
        """hyperfine's plain words when results look unreliable: a command whose runs fall
        in two groups (a VM switching between speeds) has a mean that describes neither."""
        said = cell_summary.two_groups_said(self.results[index])
        if said:
            self.progress.line(f"warning: {self.plan.commands[index].name!r}: its runs fall "
                               f"in two groups ({said}), as a machine switching between "
                               "speeds gives; the mean lies between them and describes "
                               "neither")

    def one_after_another(self) -> None:
        """hyperfine's design: each command's runs together, in order."""
        for index, command in enumerate(self.plan.commands):
            self.hook(self.plan.setup, "setup", command)
            self.warmup(index)
            self.progress.start(f"Benchmark {index + 1}: {command.name}",
                                self.plan.runs or self.plan.min_runs)
            started = time.monotonic()
            first = self.measure(index)
            planned = self.planned_runs(max(first["elapsed_s"], time.monotonic() - started))
            self.progress.replan(planned)
            while len(self.results[index]) < planned:
                self.measure(index)
            self.remeasure_outliers(index, self.plan.max_runs or 2 * planned)
            self.warn_two_groups(index)
            self.progress.clear()
            self.hook(self.plan.cleanup, "cleanup", command)
        self.stopped = "every command ran its planned runs"

    def interleaved(self) -> None:
        """--until-decided: rounds of one run per command (ABBA: the order reverses every
        round, against drift), a look at each planned number of runs, stop at the first
        look that decides every pair and found no new outlier."""
        plan, looks = self.plan, self.plan.looks
        for index, command in enumerate(plan.commands):
            self.hook(plan.setup, "setup", command)
            self.warmup(index)
        count = len(plan.commands)
        self.progress.start(f"Interleaved: {count} commands, looks at {looks} runs",
                            count * looks[-1])
        seen: set[tuple[str, int]] = set()
        n = 0
        while True:
            order = range(count) if n % 2 == 0 else reversed(range(count))
            for index in order:
                self.measure(index)
            n += 1
            if n in looks and self.look(n, seen):
                break
        self.progress.clear()
        for index, command in enumerate(plan.commands):
            self.warn_two_groups(index)
            self.hook(plan.cleanup, "cleanup", command)

    def look(self, n: int, seen: set[tuple[str, int]]) -> bool:
        """A planned look at n runs per command: whether to stop. A new outlier keeps the
        benchmark going to the next look (never past the last), as in a study's job."""
        looks, count = self.plan.looks, len(self.plan.commands)
        rows = self.compare()
        flagged = {(o.op, o.repeat): o
                   for o in outliers([r for rs in self.results for r in rs],
                                     [str(i) for i in range(count)])}
        new = [o for key, o in flagged.items() if key not in seen]
        seen |= set(flagged)
        look, last, decided = looks.index(n) + 1, n >= looks[-1], summary.decided(rows)
        self.looks_log.append({"look": look, "runs": n, "decided": decided,
                               "new_outliers": [[self.plan.commands[int(o.op)].name, o.repeat]
                                                for o in new]})
        for o in new:
            self.flagged[int(o.op)].add(o.repeat)
            self.progress.line(f"warning: {self.plan.commands[int(o.op)].name!r}: "
                               f"{o.describe()}; " + ("it stays, flagged, at the last look"
                                                      if last else "on to the next look (the "
                                                      "outlier stays in the data)"))
        if decided and not new:
            self.stopped = f"every pair decided at look {look} of {len(looks)} ({n} runs)"
            return True
        if last:
            self.stopped = (f"every pair decided at the last look ({n} runs per command)"
                            if decided else f"the last look ({n} runs per command) left a "
                            "pair undecided")
            return True
        self.progress.line(f"look {look} of {len(looks)} at {n} runs: "
                           + ("a new outlier" if decided else "not every pair decided")
                           + "; measuring on")
        return False

    def compare(self) -> list[dict]:
        names = [c.name for c in self.plan.commands]
        return summary.comparisons(self.results, names, self.plan.reference,
                                   self.plan.margin, self.plan.look_confidence())

    def run(self) -> None:
        if not self.plan.commands:
            raise WattzipError("no command to benchmark")
        if self.plan.looks:
            self.interleaved()
        else:
            self.one_after_another()
