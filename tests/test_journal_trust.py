"""The journal of changes is trusted only when it can be (issue 30): root alone can
write it, each kind of change touches only what it makes, entries from another host
or boot are reported, and undo goes on past a failure.

Each test forges entries in a state folder of its own, as another user could have
written them, and runs the real `wattzip restore`.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from wattzip import machine

from .real_machine import loops_of, mounted
from .test_shared_server import run

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root")


def own_state(tmp_path: Path, mode: int = 0o700) -> dict:
    state = tmp_path / "state"
    state.mkdir(mode=mode)
    state.chmod(mode)
    return {machine.STATE_DIR_ENV: str(state)}


def forge(state: Path, target: Path, kind: str = "sysfs", **extra) -> None:
    """A hand-written entry of a dead owner, as another user could add it."""
    entry = {"op": "change", "id": "f" * 32, "owner": {"pid": 1, "start": "0"},
             "kind": kind, "target": str(target), "original": "owned", "extra": extra,
             "at": "2026-01-01T00:00:00+00:00", **machine.here()}
    with open(state / "changes.jsonl", "a") as f:
        f.write(json.dumps(entry) + "\n")


def test_a_state_folder_others_can_write_is_refused(tmp_path):
    env = own_state(tmp_path, 0o777)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    forge(tmp_path / "state", victim)
    out = run("restore", env=env)
    assert out.returncode == 2
    assert "cannot be trusted" in out.stderr and "writable by others" in out.stderr
    assert victim.read_text() == "precious\n"


def test_a_journal_owned_by_another_user_is_refused(tmp_path):
    env = own_state(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    forge(tmp_path / "state", victim)
    os.chown(tmp_path / "state" / "changes.jsonl", 65534, 65534)
    out = run("restore", env=env)
    assert out.returncode == 2 and "owned by uid 65534" in out.stderr
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("kind, extra", [("sysfs", {}), ("dir", {}), ("file", {}), ("serial", {}),
                                         ("cgroup", {"return_to": "/sys/fs/cgroup"})])
def test_each_kind_of_change_touches_only_what_it_makes(tmp_path, kind, extra):
    """Even in a trusted journal, a "sysfs" entry outside /sys (or any other kind's
    entry naming some other file) is refused, named, and left alone."""
    env = own_state(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "scheduler").write_text("precious\n")
    forge(tmp_path / "state", victim / "scheduler" if kind == "sysfs" else victim, kind,
          **extra)
    out = run("restore", env=env)
    assert out.returncode == 2 and "refused" in out.stderr and str(victim) in out.stderr
    assert (victim / "scheduler").read_text() == "precious\n"


def test_a_mount_wattzip_did_not_make_is_not_unmounted(tmp_path):
    target = tmp_path / "theirs"
    target.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1M", "theirs", str(target)],
                   check=True)
    try:
        env = own_state(tmp_path)
        forge(tmp_path / "state", target, "mount", source="/dev/loop999")
        out = run("restore", env=env)
        assert out.returncode == 2 and "refused" in out.stderr
        assert mounted(target)
    finally:
        subprocess.run(["umount", str(target)], check=False)


def test_entries_name_host_and_boot_and_another_boot_s_are_reported_not_undone(tmp_path):
    env = own_state(tmp_path)
    victim = tmp_path / "wattzip-victim"
    victim.mkdir()
    forge(tmp_path / "state", victim, "dir")
    journal = tmp_path / "state" / "changes.jsonl"
    entry = json.loads(journal.read_text())
    entry["boot"] = "00000000-0000-0000-0000-000000000000"
    journal.write_text(json.dumps(entry) + "\n")
    out = run("restore", env=env)
    assert out.returncode == 0, out.stderr
    assert "not undone, from another host or boot" in out.stderr and str(victim) in out.stderr
    assert victim.exists()
    mine = machine.note("dir", str(tmp_path / "wattzip-mine"))
    try:
        made = [e for e in machine.pending() if e["id"] == mine][0]
        assert made["host"] == os.uname().nodename
        assert made["boot"] == Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    finally:
        machine.undone(mine)


def test_undo_goes_on_past_a_failure_and_restore_exits_non_zero(tmp_path):
    env = own_state(tmp_path)
    state = tmp_path / "state"
    later = tmp_path / "wattzip-later"
    later.mkdir()
    forge(state, later, "dir")  # made first, undone last
    bad = tmp_path / "bad"
    forge(state, bad, "sysfs")  # undone first: refused, stays changed
    journal = state / "changes.jsonl"
    lines = journal.read_text().splitlines()
    second = json.loads(lines[1])
    second["id"] = "e" * 32
    journal.write_text(lines[0] + "\n" + json.dumps(second) + "\n")
    out = run("restore", env=env)
    assert out.returncode == 2
    assert f"sysfs {bad}" in out.stderr and "stay changed" in out.stderr
    assert not later.exists()  # undone although the entry after it failed


def test_an_unwritable_state_folder_is_a_named_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = run("restore", env={machine.STATE_DIR_ENV: str(blocker / "state")})
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"the state folder {blocker / 'state'}" in out.stderr


def test_a_loop_device_of_an_image_wattzip_did_not_make_is_left_attached(tmp_path):
    image = tmp_path / "theirs.img"
    image.write_bytes(b"")
    os.truncate(image, 8 << 20)
    loop = subprocess.run(["losetup", "--find", "--show", str(image)], capture_output=True,
                          text=True, check=True).stdout.strip()
    try:
        env = own_state(tmp_path)
        forge(tmp_path / "state", image, "loop")
        out = run("restore", env=env)
        assert out.returncode == 2 and "refused" in out.stderr
        assert loops_of(image) == [loop]
    finally:
        subprocess.run(["losetup", "--detach", loop], check=False)


def test_the_folders_made_for_the_state_folder_are_root_s_alone_whatever_the_umask(tmp_path):
    """The folders above the state folder are made as every folder root uses
    (wattzip.machine.trust), not with the umask's mode: a 0777 one above the journal
    would let any user swap the state folder."""
    state = tmp_path / "made" / "for" / "state"
    code = ("import os; os.umask(0); from wattzip import machine; "
            "machine.undone(machine.note('sysfs', '/nowhere'))")
    subprocess.run([sys.executable, "-c", code], check=True,
                   env={**os.environ, machine.STATE_DIR_ENV: str(state)})
    modes = {p.name: p.stat().st_mode & 0o777 for p in (state.parent.parent, state.parent,
                                                       state)}
    assert modes == {"made": 0o755, "for": 0o755, "state": 0o700}
    assert (state / "changes.jsonl").stat().st_mode & 0o777 == 0o600


@pytest.fixture
def full_state(tmp_path, monkeypatch):
    """The state folder on a real small filesystem (a tmpfs), to be filled."""
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=700", "wattzip-test-full",
                    str(state)], check=True)
    monkeypatch.setenv(machine.STATE_DIR_ENV, str(state))
    try:
        yield state
    finally:
        subprocess.run(["umount", "-l", str(state)], check=False)


def test_undo_finishes_when_the_journal_s_disk_is_full_and_stderr_is_dead(tmp_path,
                                                                          full_state):
    """Three folders journaled, then the state folder's disk filled: every one is undone,
    though the journal records none of it, and a log that cannot be written stops
    nothing; the error names each undone but unmarked change."""
    folders = [tmp_path / f"wattzip-{i}" for i in range(3)]
    for folder in folders:
        folder.mkdir()
        machine.note("dir", str(folder))
    journal = full_state / "changes.jsonl"
    with open(journal, "ab") as f:  # blank lines to the page's end: the next line needs one
        f.write(b"\n" * (-journal.stat().st_size % 4096))
    with contextlib.suppress(OSError), open(full_state / "filler", "wb", buffering=0) as f:
        while True:
            f.write(b"\0" * 4096)

    def dead_stderr(_: str) -> None:
        raise BrokenPipeError(32, "Broken pipe")

    with pytest.raises(machine.MachineError, match="undone but the journal could not") as err:
        machine.undo(machine.pending(), log=dead_stderr, why="a test")
    assert not any(folder.exists() for folder in folders)
    assert all(str(folder) in str(err.value) for folder in folders)


def test_the_journal_is_compacted_to_what_is_still_pending(tmp_path, monkeypatch):
    """Every command appends and marks its changes undone: past COMPACT_BYTES the next
    append rewrites the journal with only the changes still pending, which stay."""
    monkeypatch.setenv(machine.STATE_DIR_ENV, own_state(tmp_path)[machine.STATE_DIR_ENV])
    monkeypatch.setattr(machine, "COMPACT_BYTES", 8192)
    live = machine.note("dir", str(tmp_path / "wattzip-live"))
    for i in range(60):
        machine.undone(machine.note("dir", str(tmp_path / f"wattzip-{i}")))
    last = machine.note("dir", str(tmp_path / "wattzip-last"))
    journal = Path(machine.journal_path())
    assert journal.stat().st_size < 8192 + 2048
    assert [e["id"] for e in machine.pending()] == [live, last]
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600
    for change in (live, last):
        machine.undone(change)
