"""Root trusts no folder another user could have written (issue 30): the folders the config
names (input_dir, a medium's folder, its image's folder, its mount point's parent) are
refused when another user owns one on the way, and made root's when missing; the study's
own files (a job's spec, manifest and journal) and the workflow's folder likewise.

The attacker is real: folders and links chowned to `nobody` in a sticky, world-writable
folder like /var/tmp, as a user who got there before root's first run would leave them.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from wattzip import records
from wattzip.errors import MachineError, RecordError, WattzipError
from wattzip.machine.media import Medium
from wattzip.machine.trust import trusted_folder
from wattzip.measure import crosscheck, measurement
from wattzip.model import preflight
from wattzip.workload import inputs

from .job_files import wattzip_job
from .real_machine import loops_of, mounted

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (chown to nobody)")
needs_loop = pytest.mark.skipif(not os.path.exists("/dev/loop-control"),
                                reason="mounting an image needs the loop driver")
NOBODY = pwd.getpwnam("nobody").pw_uid


@pytest.fixture
def shared(tmp_path):
    """A folder like /var/tmp: root's, writable by everyone, sticky."""
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o1777)
    return folder


@pytest.fixture
def planted(shared):
    """/var/tmp/wattzip as a user who made it before root's first run leaves it."""
    folder = shared / "wattzip"
    folder.mkdir()
    os.chown(folder, NOBODY, NOBODY)
    return folder


@pytest.fixture
def secret(tmp_path):
    """A file only root may read, of an input's size."""
    folder = tmp_path / "root-only"
    folder.mkdir(mode=0o700)
    path = folder / "shadow"
    path.write_bytes(b"s" * 4096)
    path.chmod(0o600)
    return path


def test_preflight_refuses_an_input_dir_in_a_folder_another_user_owns(planted):
    input_dir = planted / "paper" / "tb" / "inputs"
    with pytest.raises(WattzipError, match=r"input_dir .*owned by uid \d+ \(nobody\)"):
        preflight.check_inputs(str(input_dir), [str(input_dir / "zero.bin")], 4096)
    assert not (planted / "paper").exists()  # nothing made in the user's folder


def test_gen_refuses_a_link_another_user_planted_on_the_input_dir(shared, secret):
    """The user's link leads into a folder only root may write: root's input would land
    there, and the next swap would make root read what it holds."""
    link = shared / "wattzip"
    link.symlink_to(secret.parent)
    os.lchown(link, NOBODY, NOBODY)
    with pytest.raises(MachineError, match="symbolic link .*owned by uid"):
        inputs.generate("zero", 4096, link / "zero.bin", progress=False)
    assert sorted(p.name for p in secret.parent.iterdir()) == ["shadow"]


def test_gen_makes_root_s_folders_in_a_sticky_folder_whatever_the_umask(shared):
    """The /tmp-like folder is accepted, with the child root makes in it; the folders it
    makes are 0o755 even under a umask that would let the group write them."""
    out = shared / "wattzip" / "paper" / "zero.bin"
    old = os.umask(0o002)
    try:
        inputs.generate("zero", 4096, out, progress=False)
    finally:
        os.umask(old)
    assert out.stat().st_size == 4096
    for folder in (shared / "wattzip", out.parent):
        st = folder.stat()
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (0, 0o755)


def test_a_folder_writable_by_others_is_refused_even_when_sticky(shared):
    with pytest.raises(MachineError, match="writable by others"):
        trusted_folder(shared, "target_dir")
    assert trusted_folder(shared / "mine", "target_dir") == str(shared / "mine")


def test_a_job_refuses_an_input_swapped_for_a_link(tmp_path, secret):
    """The manifest's size matches, but zero.bin is now a link to a root-only file."""
    folder = tmp_path / "inputs"
    folder.mkdir()
    (folder / "zero.bin").symlink_to(secret)
    manifest = tmp_path / "zero.bin.json"
    manifest.write_text(json.dumps({"path": str(folder / "zero.bin"), "size_bytes": 4096,
                                    "sha256": "0" * 64, "file_type": "zero"}))
    with pytest.raises(MachineError, match="not a regular file"):
        measurement.read_input(str(manifest))


def test_a_job_refuses_an_input_in_a_folder_another_user_owns(tmp_path, planted):
    entry = inputs.generate("zero", 4096, tmp_path / "made" / "zero.bin", progress=False)
    os.rename(entry["path"], planted / "zero.bin")
    manifest = tmp_path / "zero.bin.json"
    manifest.write_text(json.dumps({**entry, "path": str(planted / "zero.bin")}))
    with pytest.raises(MachineError, match=r"owned by uid \d+ \(nobody\)"):
        measurement.read_input(str(manifest))


def test_stage_leaves_no_copy_of_a_master_swapped_for_a_link(tmp_path, secret):
    """The master's name now leads to a root-only file: its bytes are not the master's,
    and no copy of them is left where others may read it."""
    (tmp_path / "master.bin").symlink_to(secret)
    master = tmp_path / "master.bin.json"
    master.write_text(json.dumps({"path": str(tmp_path / "master.bin"), "size_bytes": 4096,
                                  "sha256": "0" * 64, "file_type": "zero"}))
    out = tmp_path / "inputs" / "zero.bin"
    with pytest.raises(WattzipError, match="not a regular file"):
        inputs.stage(str(master), str(out), str(tmp_path / "zero.bin.json"))
    assert not out.exists()


def test_a_directory_medium_in_a_folder_another_user_owns_is_refused(planted):
    medium = Medium(name="m", path=str(planted / "target"))
    with pytest.raises(MachineError, match="owned by uid"):
        medium.attach()
    assert not (planted / "target").exists()


@needs_loop
@pytest.mark.parametrize("where", ["image", "mount point"])
def test_an_image_medium_with_a_folder_another_user_owns_is_refused(tmp_path, planted, where):
    """No mkfs, losetup or mount when the image's folder, or the mount point's parent,
    is a user's: they could rename a link over the image between mkfs and losetup."""
    mine = tmp_path / "mine"
    path, image = ((mine / "target", planted / "disk.img") if where == "image"
                   else (planted / "target", mine / "disk.img"))
    medium = Medium(name="m", kind="image", path=str(path), image=str(image), size="16MiB")
    try:
        with pytest.raises(MachineError, match="owned by uid"):
            medium.attach()
        assert not image.exists() and not mounted(path) and not loops_of(image)
    finally:
        medium.detach()


@pytest.fixture
def open_folder():
    """A folder of root's that every user may enter (tmp_path's are root's alone)."""
    folder = tempfile.mkdtemp(prefix="wattzip-test-open-")
    os.chmod(folder, 0o755)
    yield Path(folder)
    shutil.rmtree(folder, ignore_errors=True)


def enters(user: int, folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["sh", "-c", 'cd "$1"', "sh", str(folder)], user=user,
                          capture_output=True, text=True, check=False)


@needs_loop
@pytest.mark.parametrize("kind", ["image", "tmpfs"])
def test_media_are_mounted_nosuid_nodev_and_only_root_enters_their_root(open_folder, kind):
    """Only root may write or enter a medium's root: another user's shell sitting in it
    would keep the undo from unmounting it."""
    medium = Medium(name="m", kind=kind, path=str(open_folder / "target"), size="16MiB")
    medium.attach()
    try:
        with open("/proc/self/mounts") as f:
            options = [line.split()[3].split(",") for line in f
                       if line.split()[1] == medium.path][-1]
        assert {"nosuid", "nodev"} <= set(options)
        assert stat.S_IMODE(os.stat(medium.path).st_mode) == 0o700
        assert enters(NOBODY, open_folder).returncode == 0
        refused = enters(NOBODY, Path(medium.path))
        assert refused.returncode != 0 and "can't cd" in refused.stderr
    finally:
        medium.detach()


@pytest.fixture
def block_device(tmp_path):
    """A block device with an ext4 of its own (root 0755), as an administrator made it."""
    image = tmp_path / "disk.img"
    with open(image, "wb") as f:
        f.truncate(32 << 20)
    subprocess.run(["mkfs.ext4", "-F", "-q", str(image)], check=True)
    device = subprocess.run(["losetup", "--find", "--show", str(image)], check=True,
                            capture_output=True, text=True).stdout.strip()
    try:
        yield device
    finally:
        subprocess.run(["losetup", "--detach", device], check=False)


@needs_loop
@pytest.mark.parametrize("kind", ["image", "block"])
def test_a_medium_s_root_is_never_open_to_a_shell_waiting_for_the_mount(open_folder, kind,
                                                                        monkeypatch,
                                                                        request):
    """Another user's shell enters the mount point the moment the medium is mounted there
    (before any chmod), and would pin the mount: its root is already 0700, for an image
    and for a block device wattzip does not format."""
    target = open_folder / "target"
    shells: list[subprocess.Popen] = []
    real_mount = Medium.mount

    def mount_then_enter(self, **at):
        real_mount(self, **at)
        if not at:
            shell = subprocess.Popen(["sh", "-c", 'cd "$1" && echo in && exec sleep 30',
                                      "sh", self.path], user=NOBODY, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            shell.stdout.readline()  # in, or refused: before wattzip goes on
            shells.append(shell)

    monkeypatch.setattr(Medium, "mount", mount_then_enter)
    if kind == "block":
        medium = Medium(name="m", kind="block", device=request.getfixturevalue("block_device"),
                        fs="ext4", path=str(target))
    else:
        medium = Medium(name="m", kind="image", path=str(target), size="16MiB")
    medium.attach()
    try:
        assert shells and all(shell.wait(timeout=10) != 0 for shell in shells)
        assert stat.S_IMODE(os.stat(medium.path).st_mode) == 0o700
    finally:
        for shell in shells:
            shell.kill()
            shell.wait()
        medium.detach()
    assert not mounted(target)


def test_journals_are_never_appended_through_a_link(tmp_path, secret):
    journal = tmp_path / "runs.jsonl"
    journal.symlink_to(secret)
    with pytest.raises(RecordError, match="symbolic link"):
        records.append_journal(journal, {"run": 1})
    assert secret.read_bytes() == b"s" * 4096


def test_crosscheck_refuses_a_target_in_a_folder_another_user_owns(planted):
    with open(os.devnull, "w") as log, pytest.raises(MachineError, match="owned by uid"):
        crosscheck.compare("tb", {"path": "x", "file_type": "zero"}, [], str(planted / "cc"),
                           [], 1, 1, log)


def test_a_medium_folder_others_can_write_is_refused_even_when_sticky(tmp_path):
    """The duty cycle's and hyperfine's shell `>` write in the medium's folder by name:
    attach() refuses a folder where another user could plant a link first."""
    target = tmp_path / "target"
    target.mkdir()
    target.chmod(0o1777)
    with pytest.raises(MachineError, match="writable by others"):
        Medium(name="m", path=str(target)).attach()


@pytest.mark.parametrize(("forged", "how"), [
    ("--spec", "nobody"), ("--spec", "0o666"), ("--journal", "nobody"),
    ("--manifest", "nobody")])
def test_a_job_refuses_a_study_file_another_user_could_have_written(job_files, forged, how):
    """A spec names what root runs, formats and mounts; a journal's lines become runs; a
    manifest names the input root reads: one another user owns, or can write, is refused
    before anything is measured, and names the file and its owner or mode."""
    path = job_files[forged]
    if not path.exists():  # a journal with a forged run in it
        path.write_text(json.dumps({"job_key": "forged", "verified": True}) + "\n")
    if how == "nobody":
        os.chown(path, NOBODY, NOBODY)
    else:
        path.chmod(int(how, 8))
    proc = wattzip_job(job_files)
    assert proc.returncode != 0
    said = "owned by uid" if how == "nobody" else "writable by others"
    assert f"{path} cannot be trusted" in proc.stderr and said in proc.stderr, proc.stderr
    assert not job_files["--out"].exists()
    if forged != "--journal":
        assert not job_files["--journal"].exists()


def test_the_same_job_s_files_of_root_s_are_measured(job_files):
    proc = wattzip_job(job_files)
    assert proc.returncode == 0, proc.stderr
    assert len(job_files["--out"].read_text().splitlines()) == 4


def test_the_workflow_refuses_a_folder_another_user_can_write(tmp_path):
    """The study's specs, journals and runs are written and read back in the workflow's
    folder: as root, Snakemake stops before any job where another user could write it."""
    from .test_workflow import SNAKEMAKE, TINY, workflow_copy

    root = workflow_copy(tmp_path / "clone")
    root.chmod(0o777)
    proc = subprocess.run([*SNAKEMAKE, "-n", "--configfile", str(TINY)], cwd=root,
                          capture_output=True, text=True, check=False)
    assert proc.returncode != 0
    said = proc.stdout + proc.stderr
    assert f"the workflow {root} cannot be trusted" in said, said[-2000:]
    assert f"chown -R root: {root}" in said  # the whole tree, not its top folder alone
    root.chmod(0o755)
    proc = subprocess.run([*SNAKEMAKE, "-n", "--configfile", str(TINY)], cwd=root,
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.fixture
def alices(shared):
    """A source folder of another user's (nobody's) in a /tmp-like folder: her text, a link
    and a hard link to a file only root may read (a hard link she could make where
    protected_hardlinks is off, or to a file root gave her)."""
    folder = shared / "texts"
    folder.mkdir()
    (folder / "hers.txt").write_bytes(b"her own words\n")
    os.chown(folder / "hers.txt", NOBODY, NOBODY)
    os.chown(folder, NOBODY, NOBODY)
    return folder


def test_a_source_swapped_for_a_link_by_its_owner_is_refused(alices, secret, tmp_path):
    """The study names her folder; she replaces it by a link to a folder only root reads.
    Root refuses the link, and makes no input of the secret's bytes."""
    shutil.rmtree(alices)
    alices.symlink_to(secret.parent)
    os.lchown(alices, NOBODY, NOBODY)
    for file_type, size in (("text", 4096), ("user", None)):
        out = tmp_path / "in" / f"{file_type}.bin"
        with pytest.raises(WattzipError, match=r"symbolic link of uid \d+ \(nobody\)"):
            inputs.generate(file_type, size, out, sources=[str(alices)], progress=False)
        assert not out.exists()


def test_a_user_s_source_is_read_as_she_could_and_the_input_is_root_s(alices, secret,
                                                                      tmp_path):
    """Her link and her hard link to the root-only file give nothing: the opener runs as
    her. The input holds only her bytes, is readable by root alone, and the manifest says
    whose they are and names no file outside her folder."""
    (alices / "link.txt").symlink_to(secret)
    os.lchown(alices / "link.txt", NOBODY, NOBODY)
    os.link(secret, alices / "hard.txt")
    out = tmp_path / "in" / "user.bin"
    entry = inputs.generate("user", None, out, sources=[str(alices)], progress=False)
    assert out.read_bytes() == b"her own words\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    source = entry["sources"][0]
    assert source["source"] == str(alices) and "nobody" in source["read_as"]
    assert source["private"] is True and source["files"] == 1
    text = inputs.generate("text", 28, tmp_path / "in" / "text.bin", sources=[str(alices)],
                           progress=False)
    assert (tmp_path / "in" / "text.bin").read_bytes() == b"her own words\n" * 2
    assert stat.S_IMODE((tmp_path / "in" / "text.bin").stat().st_mode) == 0o600
    assert "s" * 16 not in json.dumps(text)


def test_a_source_of_root_s_skips_what_another_user_owns_inside(tmp_path, secret):
    """A folder of root's with a user's folder inside: read as root, her folder (where she
    could plant links and hard links) is skipped and counted, and root's public files make
    a public input."""
    source = tmp_path / "src"
    (source / "hers").mkdir(parents=True)
    (source / "a.txt").write_bytes(b"root's words\n")
    os.link(secret, source / "hers" / "hard.txt")
    os.chown(source / "hers", NOBODY, NOBODY)
    out = tmp_path / "in" / "text.bin"
    entry = inputs.generate("text", 13, out, sources=[str(source)], progress=False)
    assert out.read_bytes() == b"root's words\n"
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert entry["sources"][0]["skipped_of_other_users"] == 1
    assert "read_as" not in entry["sources"][0]


def test_a_source_in_a_folder_others_can_write_is_refused(tmp_path):
    folder = tmp_path / "open"
    (folder / "texts").mkdir(parents=True)
    (folder / "texts" / "a.txt").write_bytes(b"words\n")
    folder.chmod(0o777)
    with pytest.raises(WattzipError, match="writable by others"):
        inputs.generate("text", 6, tmp_path / "in" / "t.bin",
                        sources=[str(folder / "texts")], progress=False)


def test_stage_trusts_no_master_or_manifest_another_user_could_write(planted, secret,
                                                                     tmp_path):
    """She can write the master's folder: she turns the master into a link to a root-only
    file and writes its sha256 (learnt from an earlier mismatch) into the manifest. Root
    refuses the manifest, then the master, and no copy of the secret is made."""
    digest = inputs.sha256_file(secret)
    (planted / "master.bin").symlink_to(secret)
    os.lchown(planted / "master.bin", NOBODY, NOBODY)
    manifest = planted / "master.bin.json"
    manifest.write_text(json.dumps({"path": str(planted / "master.bin"), "size_bytes": 4096,
                                    "sha256": digest, "file_type": "text"}))
    os.chown(manifest, NOBODY, NOBODY)
    out = tmp_path / "inputs" / "text.bin"
    with pytest.raises(MachineError, match=r"owned by uid \d+ \(nobody\)"):
        inputs.stage(str(manifest), str(out), str(tmp_path / "text.bin.json"))
    ours = tmp_path / "master.bin.json"  # a manifest of root's naming her master
    ours.write_text(manifest.read_text())
    with pytest.raises(MachineError, match=r"owned by uid \d+ \(nobody\)"):
        inputs.stage(str(ours), str(out), str(tmp_path / "text.bin.json"))
    assert not out.exists()


def test_a_stage_mismatch_does_not_say_the_digest_of_what_it_read(tmp_path):
    master = tmp_path / "master.bin"
    master.write_bytes(b"m" * 4096)
    manifest = tmp_path / "master.bin.json"
    manifest.write_text(json.dumps({"path": str(master), "size_bytes": 4096,
                                    "sha256": "0" * 64, "file_type": "text"}))
    with pytest.raises(WattzipError, match="does not have the sha256") as err:
        inputs.stage(str(manifest), str(tmp_path / "inputs" / "t.bin"),
                     str(tmp_path / "t.bin.json"))
    assert inputs.sha256_file(master) not in str(err.value)


@pytest.fixture
def checkout(tmp_path):
    """A workflow's checkout, root's (umask 022), beside a Python environment of root's."""
    top = tmp_path / "clone"
    for name in ("rules/measure.smk", "scripts/fig.R", "config/paper.yaml",
                 ".snakemake/metadata/x"):
        (top / name).parent.mkdir(parents=True, exist_ok=True)
        (top / name).write_text("")
    (top / "Snakefile").write_text('rule rehearsal:\n    shell: "touch ran"\n')
    (tmp_path / "venv" / "lib").mkdir(parents=True)
    (tmp_path / "venv" / "lib" / "site.py").write_text("")
    return top


def test_snakemake_s_records_writable_by_root_s_group_are_trusted(checkout):
    """Snakemake makes its records (metadata, a job's incomplete marker) group-writable:
    root's group, with root alone in it, is no other user (a Slurm job's Snakemake reads
    the checkout after its submitter wrote such a marker)."""
    from wattzip.machine.trust import trusted_workflow

    record = checkout / ".snakemake" / "incomplete" / "x"
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text("")
    os.chown(record, 0, 0)
    record.chmod(0o660)
    trusted_workflow(checkout, [], environment=str(checkout.parent / "venv"))


@pytest.mark.parametrize(("planted", "how"), [
    ("clone/Snakefile", "nobody"), ("clone/rules/measure.smk", "nobody"),
    ("clone/scripts/fig.R", "0o666"), ("clone/rules/common.smk", "nogroup"),
    ("clone/config/paper.yaml", "nobody"),
    ("clone/.snakemake/metadata", "0o777"), ("venv/lib/site.py", "nobody"),
    ("theirs.yaml", "nobody")])
def test_root_refuses_a_workflow_whose_code_another_user_can_write(checkout, planted, how):
    """The clone is root's folder, but another user owns or can write a file root runs
    or reads as code (rules, scripts, config, Snakemake's state, the environment, a
    --configfile): the first such file is named, with advice that makes the tree root's."""
    from wattzip.machine.trust import trusted_workflow

    path = checkout.parent / planted
    if not path.exists():
        path.write_text("ipmi_command: ...\n")
    if how == "nobody":
        os.chown(path, NOBODY, NOBODY)
    elif how == "nogroup":  # root's, but writable by a group another user is in
        os.chown(path, 0, pwd.getpwnam("nobody").pw_gid)
        path.chmod(0o664)
    else:
        path.chmod(int(how, 8))
    env = str(checkout.parent / "venv")
    with pytest.raises(MachineError, match="cannot be trusted") as refused:
        trusted_workflow(checkout, [str(checkout.parent / "theirs.yaml")]
                         if planted == "theirs.yaml" else [], environment=env)
    said = str(refused.value)
    assert str(path) in said and f"chown -R root: {checkout}" in said
    assert "chmod -R go-w" in said


def test_rehearse_refuses_a_checkout_another_user_can_write(checkout, tmp_path):
    """`wattzip rehearse --directory` runs the checkout's Snakefile as root: refused before
    Snakemake starts, when another user owns it."""
    from wattzip.model import rehearsal

    os.chown(checkout / "Snakefile", NOBODY, NOBODY)
    assert rehearsal.run_workflow([str(checkout / "config" / "paper.yaml")], 1,
                                  str(checkout), []) == 2
    assert not (checkout / "ran").exists()


def test_the_test_suite_s_own_checkout_is_trusted_and_checked_fast():
    """A root-owned checkout under umask 022, with its .venv: trusted, in well under a
    second or two (one lstat per entry, no process per file)."""
    import time

    from wattzip.machine.trust import trusted_workflow

    repo = Path(__file__).resolve().parents[1]
    started = time.monotonic()
    trusted_workflow(repo, [str(repo / "config" / "paper.yaml")])
    assert time.monotonic() - started < 5
