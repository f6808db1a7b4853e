"""Shared fixtures, made once per session: small real input files of every type, and the
workflow tests' tiny study; and how the suite shares the machine's cores.

The suite runs on every core (pytest-xdist, `-n auto` in pyproject.toml: a worker per CPU
and one more, pytest_xdist_auto_num_workers). A test marked
`pure` neither measures nor changes the machine (analysis, statistics, the model, the
report's text, parsing): pure tests run side by side. Every other test measures or
changes the machine, and runs alone: nothing else of the suite runs beside it, so its
quiet-run checks keep their meaning. The one exception is a test marked `beside_pure`,
whose study measures with every quiet check off and checks no energy (the tiny
study's workflow tests, tests/data/tiny.yaml; the Slurm cluster's two "nodes", this one
VM): pure tests run beside it, nothing else does. The beside_pure tests run in one
worker, one after another, first, as pure tests run before the rest. A pure
test that holds the machine (a wattzip command's session, in this process or a child)
fails, naming itself. Tests that share a fixture made once per module or per session
run in one worker, so it is made once.
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

# The tests journal their machine changes apart from a real study's journal (they hold
# the machine's one lock like any study, so they never measure beside one: the lock
# does not follow the state folder, docs/machine.md). A session
# run inside another (a test of the tests' own options) uses the outer one's and leaves
# it to it.
OWN_STATE_DIR = "WATTZIP_STATE_DIR" not in os.environ
if OWN_STATE_DIR:
    os.environ["WATTZIP_STATE_DIR"] = tempfile.mkdtemp(prefix="wattzip-test-state-")

SMALL = 1 << 20
# Fixtures of the suite's widest scopes that cost little to make twice: their tests may
# run in any worker.
CHEAP_SHARED = {"small_inputs"}


@pytest.fixture(scope="session")
def small_inputs(tmp_path_factory):
    """One MiB of each paper file type plus a mixed one: {type: (path, manifest)}."""
    from wattzip.workload.inputs import generate

    root = tmp_path_factory.mktemp("inputs")
    made = {}
    for file_type in ("zero", "text", "binary", "random", "mix-50"):
        path = root / f"{file_type}.bin"
        made[file_type] = (path, generate(file_type, SMALL, path, seed=7, progress=False))
    return made


@pytest.fixture
def job_files(small_inputs, tmp_path, monkeypatch):
    """A text/gz-1 job's spec and files, in tmp_path (the working folder): tests/job_files."""
    from .job_files import make

    monkeypatch.chdir(tmp_path)
    return make(tmp_path, small_inputs["text"])


@pytest.fixture(scope="session")
def tiny_study(tmp_path_factory):
    """tests/data/tiny.yaml's study, measured once in a fresh copy of the workflow: what the
    workflow tests and the benchmarks that read a finished study look at."""
    from .test_workflow import snakemake, workflow_copy

    root = workflow_copy(tmp_path_factory.mktemp("study") / "wf")
    snakemake(root)
    return root


@pytest.fixture
def noted(monkeypatch):
    """Each change journaled during the test, as (kind, target, whether something was at
    the target when the journal named it): a change must be named before it is made."""
    from wattzip import machine

    seen, note = [], machine.note

    def spy(kind, target, *args, **kwargs):
        seen.append((kind, target, os.path.lexists(target)))
        return note(kind, target, *args, **kwargs)

    monkeypatch.setattr(machine, "note", spy)
    return seen


def pytest_sessionstart(session):
    """What a killed earlier session of the tests left changed is undone first, as a
    user's next command would (a dead FUSE mount of one failed mkfs.btrfs in the next).
    Each session journals to a folder of its own that no later session reads, so the
    folders are found by their prefix; only changes whose owner died are undone, by
    `wattzip restore` under the machine's lock."""
    from wattzip import machine
    from wattzip.errors import MachineError

    ours = machine.state_dir()
    for folder in sorted(ours.parent.glob("wattzip-test-state-*")):
        os.environ[machine.STATE_DIR_ENV] = str(folder)
        try:
            killed = folder != ours and machine.leftovers()
        except MachineError:  # not root's alone: nothing in it is undone
            killed = False
        finally:
            os.environ[machine.STATE_DIR_ENV] = str(ours)
        if killed:
            subprocess.run([sys.executable, "-m", "wattzip", "restore"], check=False,
                           env={**os.environ, machine.STATE_DIR_ENV: str(folder)})


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: a worker per CPU, and one more. The Slurm study beside the pure tests
    spends most of its time waiting for the plugin's status checks, and the extra worker
    keeps every CPU on pure tests meanwhile; a test that runs alone has the machine to
    itself whatever the number of workers."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_sessionfinish(session, exitstatus):
    """The tests' journal goes with them, unless it still names a change to undo."""
    from wattzip import machine

    state = machine.state_dir()
    if OWN_STATE_DIR and state.name.startswith("wattzip-test-state-") and not machine.pending():
        shutil.rmtree(state, ignore_errors=True)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """The 'study' tests (minutes to hours) run only when a -m expression names them,
    whatever other -m is given ("not workflow" alone would let them in unasked). Tests
    that share an expensive fixture of a module's or the session's scope go to one
    worker (xdist's loadgroup reads the mark after this hook)."""
    if "study" not in (config.getoption("markexpr") or ""):
        study = [item for item in items if item.get_closest_marker("study")]
        if study:
            config.hook.pytest_deselected(items=study)
            items[:] = [item for item in items if not item.get_closest_marker("study")]
    kinds = collections.defaultdict(set)
    for item in items:
        group = _shared_fixture(item)
        if group:
            kinds[group].add(_kind(item))
        # The tests pure ones may run beside go to one worker, one after another: in
        # several, each would wait for the others' turn while holding no pure test.
        group = "beside_pure" if _kind(item) == "beside_pure" else group
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
    mixed = sorted(group for group, of in kinds.items() if len(of) > 1)
    if mixed:  # its fixture would be made under the lock of whichever test came first
        raise pytest.UsageError(f"tests sharing {', '.join(mixed)} differ in how they share "
                                "the machine (pure, beside_pure or alone): mark them alike")
    # The tests that pure ones may run beside first, then the pure ones (the slow ones
    # that drive the workflow first, so that no long one is left for one worker at the
    # end), then those that run alone. A stable sort: each file's tests stay in their
    # order, and a shared fixture's group stays together, its tests being of one kind.
    items.sort(key=lambda item: (("beside_pure", "pure", "alone").index(_kind(item)),
                                 item.get_closest_marker("workflow") is None))


def pytest_collection_finish(session):
    """In a worker, every test of a group carries it in its id, or xdist would run the
    group's tests in several workers, each making the shared fixture again."""
    config = session.config
    if not hasattr(config, "workerinput") or not getattr(config.option, "loadgroup", False):
        return
    for item in session.items:
        if item.get_closest_marker("xdist_group") and "@" not in item.nodeid:
            raise pytest.UsageError(f"{item.nodeid}: this pytest-xdist does not group tests "
                                    f"under pytest {pytest.__version__} (see pyproject.toml)")


def _shared_fixture(item) -> str | None:
    """The group of a test that uses an expensive shared fixture of the tests': a session's
    fixture by its name (before a module's, which may be made from it: the module's tests
    then join the session fixture's worker), else the module's."""
    info = getattr(item, "_fixtureinfo", None)
    module = None
    for name in getattr(item, "fixturenames", ()):
        defs = info.name2fixturedefs.get(name) if info else None
        if not defs or name in CHEAP_SHARED:
            continue
        fixture = defs[-1]
        if not getattr(fixture.func, "__module__", "").startswith("tests."):
            continue
        if fixture.scope in ("session", "package"):
            return name
        if fixture.scope == "module":
            module = item.module.__name__
    return module


def _suite_locks(config) -> Path | None:
    """The folder of the workers' shared locks (None: one process, nothing to share; a
    session a test starts inside a worker inherits its environment, not its workers)."""
    if not hasattr(config, "workerinput"):
        return None
    run = config.workerinput["testrunuid"]
    folder = Path(tempfile.gettempdir()) / f"wattzip-suite-{run}"
    folder.mkdir(mode=0o700, exist_ok=True)
    st = folder.lstat()
    if st.st_uid != os.geteuid() or st.st_mode & 0o022:
        raise pytest.UsageError(f"{folder} is not this user's alone")
    return folder


def _kind(item) -> str:
    """How a test shares the machine: "pure", "beside_pure" or "alone"."""
    for kind in ("beside_pure", "pure"):
        if item.get_closest_marker(kind):
            return kind
    return "alone"


@contextlib.contextmanager
def _turn(folder: Path, kind: str):
    """A readers-writer lock over the workers: a pure test shares the machine with other
    pure tests and with one `beside_pure` test, any other test has it alone. The
    turnstile, held while a test waits to be alone, keeps new pure tests from starving
    it."""
    with contextlib.ExitStack() as stack:
        turnstile, machine = (stack.enter_context(open(folder / name, "a"))
                              for name in ("turnstile", "machine"))
        if kind == "beside_pure":  # one at a time among themselves
            fcntl.flock(stack.enter_context(open(folder / "beside", "a")), fcntl.LOCK_EX)
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        if kind == "alone":
            fcntl.flock(machine, fcntl.LOCK_EX)
            fcntl.flock(turnstile, fcntl.LOCK_UN)
        else:
            fcntl.flock(turnstile, fcntl.LOCK_UN)
            fcntl.flock(machine, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(machine, fcntl.LOCK_UN)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    folder = _suite_locks(item.config)
    with contextlib.ExitStack() as stack:
        if folder is not None:
            stack.enter_context(_turn(folder, _kind(item)))
        yield


@pytest.fixture(autouse=True)
def _pure_holds_no_machine(request):
    """A pure test runs with a journal of its own (inherited by its children): every
    session of the machine journals its processes' mark first, so a journal there after
    the test says it held the machine, which a pure test must not."""
    if request.node.get_closest_marker("pure") is None:
        yield
        return
    from wattzip import machine

    before = os.environ[machine.STATE_DIR_ENV]
    own = tempfile.mkdtemp(prefix="wattzip-test-pure-")
    os.environ[machine.STATE_DIR_ENV] = own
    try:
        yield
    finally:
        os.environ[machine.STATE_DIR_ENV] = before
        held = (Path(own) / "changes.jsonl").exists()
        shutil.rmtree(own, ignore_errors=True)
    assert not held, (f"{request.node.nodeid} is marked pure but held the machine (a wattzip "
                      "session): it measures or changes the machine, so it must run alone; "
                      "take its pure mark away")


def pytest_terminal_summary(terminalreporter):
    """The suite's time per file (setup, call and teardown of its tests, in the workers
    that ran them), beside pytest's slowest tests (--durations)."""
    per_file = collections.Counter()
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) in ("setup", "call", "teardown"):
                per_file[report.nodeid.split("::")[0]] += report.duration
    if not per_file:
        return
    terminalreporter.write_sep("=", "time per test file (s, summed over the workers)")
    for name, seconds in per_file.most_common():
        terminalreporter.write_line(f"{seconds:8.1f}  {name}")
    terminalreporter.write_line(f"{sum(per_file.values()):8.1f}  in all")
