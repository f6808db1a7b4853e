"""The conda environments (`snakemake --sdm conda`) name a package for every binary the
rules run, checked statically: conda channels are out of reach of this project's CI.

Each env file's dependency comment names the binaries that package provides; a
`# host: NAMES -- why` line names binaries that come from the host, with the reason
(no conda-forge package, or the base system). Every binary of the codec registry, of the
package's commands, of the rules' shell lines and of their scripts must be one or the
other in the env file of the rule that runs it.
"""

from __future__ import annotations

import ast
import re
import shutil
from functools import cache

import pytest
import yaml

from wattzip.cli import build_parser
from wattzip.machine import media
from wattzip.workload import codec_registry

from .test_workflow import REPO

pytestmark = pytest.mark.pure

ENVS = REPO / "envs"
# conda-forge names whose package is not the command one would guess from them.
NOT_THE_COMMAND = {
    "lz4": "the Python binding; the lz4 command is conda-forge's lz4-c",
    "p7zip": "7z and 7za, not 7zz",
    "python-zstd": "a Python binding",
}
SHELL_BUILTINS = {"cd", "set", "exec", "test", "["}


@cache
def env(name: str) -> tuple[dict[str, str], dict[str, str]]:
    """(binary -> package, binary -> why the host provides it) of one env file."""
    path = ENVS / name
    text = path.read_text()
    provides: dict[str, str] = {}
    for line in text.splitlines():
        dep = re.match(r"\s+- ([^#]+?)\s*(?:#\s*(.*))?$", line)
        if dep and dep.group(2):
            package = re.split(r"[=<>]", dep.group(1))[0]
            for word in dep.group(2).split("(")[0].split():
                provides[word] = package
    host = {}
    for names, why in re.findall(r"^# host: ([^\n]*?) -- (.+)$", text, re.M):
        host.update(dict.fromkeys(names.split(), why))
    yaml.safe_load(text)  # and it is an env file
    return provides, host


def rules() -> list[dict]:
    """Each rule's env file, script and the commands its shell line runs."""
    out = []
    for smk in sorted((REPO / "rules").glob("*.smk")):
        blocks = re.split(r"^\s*(?:rule|checkpoint) (\w+):", smk.read_text(), flags=re.M)
        for name, body in zip(blocks[1::2], blocks[2::2], strict=True):
            conda = re.search(r'conda:\s*\n\s*"([^"]+)"', body)
            script = re.search(r'script:\s*\n\s*"([^"]+)"', body)
            shell = re.search(r"shell:\s*\n((?:\s*\"[^\n]*\"\n)+)", body)
            line = "".join(re.findall(r'"([^\n]*)"', shell.group(1))) if shell else ""
            commands = {seg.split()[0] for seg in re.split(r"&&|\|\||;|\|", line)
                        if seg.split() and seg.split()[0] not in SHELL_BUILTINS}
            out.append({"rule": f"{smk.name}:{name}",
                        "env": conda.group(1).split("/")[-1] if conda else None,
                        "script": script.group(1) if script else None,
                        "commands": commands})
    return out


def package_binaries() -> set[str]:
    """The commands the package runs: the first word of every list or tuple literal in
    wattzip/ and scripts/ that is a command on this machine (setup.sh installs them all),
    and mkfs for every filesystem a medium can have; wattzip's own subcommands are not
    commands."""
    subcommands = set(build_parser()._subparsers._group_actions[0].choices)
    found = {f"mkfs.{fs}" for fs in media._MKFS_QUIET}
    for path in [*REPO.glob("wattzip/**/*.py"), *REPO.glob("scripts/*.py")]:
        tree = ast.parse(path.read_text())
        # a literal a loop iterates over is a list of names, not an argv, nor are its items
        loops = [n.iter for n in ast.walk(tree) if isinstance(n, ast.For | ast.comprehension)]
        looped = {id(n) for n in loops} | {id(item) for n in loops
                                           if isinstance(n, ast.List | ast.Tuple)
                                           for item in n.elts}
        for node in ast.walk(tree):
            if isinstance(node, ast.List | ast.Tuple) and node.elts and id(node) not in looped:
                first = node.elts[0]
                if (isinstance(first, ast.Constant) and isinstance(first.value, str)
                        and first.value not in subcommands and shutil.which(first.value)):
                    found.add(first.value)
    return found


def every_codec_binary() -> set[str]:
    return {argv[0] for c in codec_registry.resolve(["all", "fs"])
            for argv in (c.compress, c.decompress) if argv}


def missing(env_name: str, binaries: set[str]) -> list[str]:
    provides, host = env(env_name)
    return sorted(b for b in binaries if b not in provides and b not in host)


def test_every_rule_that_runs_something_names_its_env():
    for r in rules():
        if r["script"] or r["commands"]:
            assert r["env"] and (ENVS / r["env"]).exists(), r


def test_every_codec_binary_has_a_package_or_a_reason():
    assert not missing("wattzip.yaml", every_codec_binary())


def test_every_command_of_the_package_has_a_package_or_a_reason():
    binaries = package_binaries()
    assert {"dd", "losetup", "mount", "mkfs.ext2", "compsize"} <= binaries  # the scan sees
    assert not missing("wattzip.yaml", binaries)


@pytest.mark.parametrize("rule", rules(), ids=lambda r: r["rule"])
def test_every_command_of_a_rule_is_in_its_env(rule):
    if not rule["env"]:
        return
    need = set(rule["commands"])
    if rule["script"]:
        need.add("Rscript" if rule["script"].endswith(".R") else "python3")
    if "latexmk" in need:
        need.add("pdflatex")  # latexmk -pdf
    assert not missing(rule["env"], need), rule


def test_a_host_binary_says_why_and_a_package_is_the_command_not_a_binding():
    for path in ENVS.glob("*.yaml"):
        provides, host = env(path.name)
        assert all(len(why) > 10 for why in host.values()), path
        for binary, package in provides.items():
            assert package not in NOT_THE_COMMAND, (path.name, binary,
                                                    NOT_THE_COMMAND.get(package))
    assert env("wattzip.yaml")[0]["lz4"] == "lz4-c"


def test_every_debian_package_a_host_line_names_is_one_setup_sh_installs():
    """A host binary's Debian package is what the README's first command installs: the
    perf meter's linux-perf was named here and not installed, so its real test was
    skipped wherever the README was followed."""
    setup = (REPO / "setup.sh").read_text()
    installs = set(re.search(r"^debs=\(\n(.*?)^\)", setup, re.M | re.S).group(1).split())
    # the compressors' packages, which setup.sh reads from the codec registry's data
    installs |= {c.package for c in codec_registry.REGISTRY.values()}
    named = set()
    for path in ENVS.glob("*.yaml"):
        for why in env(path.name)[1].values():
            for packages in re.findall(r"Debian's ([\w.+-]+(?:, [\w.+-]+)*)", why):
                named.update(packages.split(", "))
    assert {"7zip", "linux-perf"} <= named  # the reading sees them
    assert named <= installs, sorted(named - installs)
