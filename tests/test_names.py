"""Names that become paths or setting names are restricted by the schema (issue 30): a
medium called `ssd$(touch PWNED)` or `my ssd` is refused, naming itself, before any
rule pastes it into a command."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from snakemake.utils import validate

from wattzip.errors import ConfigError
from wattzip.machine.media import Medium
from wattzip.model.config import merge_configs

pytestmark = pytest.mark.pure

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = str(ROOT / "config" / "schema.yaml")


def config() -> dict:
    return yaml.safe_load((ROOT / "config.yaml").read_text())


@pytest.mark.parametrize("name", ["ssd$(touch PWNED)", "my ssd", "../etc", "-x", "a;b"])
def test_a_medium_name_a_shell_or_a_path_could_misread_is_refused(name, tmp_path):
    c = config()
    c.setdefault("factors", {})["medium"] = {name: str(tmp_path)}
    with pytest.raises(Exception, match="does not match") as err:
        validate(copy.deepcopy(c), SCHEMA)
    assert name in str(err.value)
    with pytest.raises(ConfigError, match="letters, digits"):
        Medium.from_spec(name, str(tmp_path))


@pytest.mark.parametrize("key, value", [("codecs", ["gz-6; reboot"]),
                                         ("file_size", "64 MB"),
                                         ("compare_testbeds", ["../other"])])
def test_other_names_and_sizes_are_one_word(key, value):
    c = config()
    c[key] = value
    with pytest.raises(Exception, match="does not match"):
        validate(c, SCHEMA)


def test_every_shipped_config_still_validates():
    for overlay in [ROOT / "config.yaml", *sorted((ROOT / "config").glob("*.yaml"))]:
        if overlay.name == "schema.yaml":
            continue
        # merged as Snakemake merges --configfile: mappings deeply
        validate(merge_configs([ROOT / "config.yaml", overlay]), SCHEMA)


def test_the_package_never_hands_a_string_to_a_shell():
    """Tools run from argument lists. The one shell script (the duty cycle's loop) is
    built from shlex-quoted paths and argvs and numbers, never a raw config string."""
    found = []
    for path in sorted((ROOT / "wattzip").rglob("*.py")):
        text = path.read_text()
        for bad in ("shell=True", "os.system(", "os.popen(", "subprocess.getoutput("):
            if bad in text:
                found.append(f"{path.name}: {bad}")
        if '"sh", "-c"' in text and path.name != "job.py":
            found.append(f"{path.name}: sh -c")
    assert found == []
