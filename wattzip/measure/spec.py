"""A measuring command's slice of the study as one versioned JSON document, its spec.

The study model writes a job's and an idle calibration's spec (wattzip.model.study), the
workflow keeps each beside the runs (results/<study>/<testbed>/specs/), and `wattzip job`
and `wattzip idle` read it here into the objects they run with; a hand run naming the
study's config (`--configfile`) runs the same document, made by the model. It carries
the config's sections the command reads whole, under their own keys and names, so
nothing is translated on the way: the meter is the testbed's `meter:` as the config
holds it, the drift check's fields are `drift:`'s keys, the medium the fields of
wattzip.machine.media.Medium; what the model derives for one job (drift_pool, looks)
stands beside them. A key added to one of those sections reaches its object here with
no line of this module: the object's field of the key's name takes it. The document is
checked against data/spec.schema.yaml, so a hand-written one is refused with its key
named, as a config is.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping
from pathlib import Path

from wattzip import resources
from wattzip.analysis.stopping import RepeatRule
from wattzip.errors import ConfigError
from wattzip.machine import trust
from wattzip.machine.factors import MACHINE_FACTORS
from wattzip.machine.media import Medium
from wattzip.measure.disturbance import DriftCheck, QuietLimits

JOB = "wattzip-job/2"
IDLE = "wattzip-idle/2"


@functools.cache
def _checker():
    """The spec's schema, its keys that the config has read from the config's schema
    (`$ref: "schema.yaml#/..."`), where each is declared once."""
    import jsonschema  # only where a spec is read
    import referencing

    schema = resources.load_yaml(
        (resources.data() / "spec.schema.yaml").read_text(encoding="utf-8"))
    config = referencing.Resource.from_contents(resources.load_schema())
    registry = referencing.Registry().with_resource("schema.yaml", config)
    return jsonschema.validators.validator_for(schema)(schema, registry=registry)


def check(spec: object, kind: str, source: str = "--spec") -> dict:
    """`spec` if it is a document of `kind` (JOB or IDLE) as the schema describes it;
    else a ConfigError naming the first wrong key."""
    import jsonschema

    if not isinstance(spec, dict):
        raise ConfigError(f"{source}: a JSON object was expected, not {type(spec).__name__}")
    if spec.get("spec") != kind:
        given = str(spec.get("spec"))
        same = given.partition("/")[0] == kind.partition("/")[0]
        raise ConfigError(
            f"{source}: its \"spec\" is {spec.get('spec')!r}, not {kind!r}: "
            + ("a document of another version. The study's workflow writes its specs "
               "again itself; a spec written by hand must be written again in this "
               "version's shape (data/spec.schema.yaml: the config's sections whole, under "
               "their own keys), or the command run with --configfile" if same
               else "a spec of another command"))
    error = jsonschema.exceptions.best_match(_checker().iter_errors(spec))
    if error is not None:
        where = ".".join(map(str, error.absolute_path)) or "top level"
        raise ConfigError(f"{source}: at {where}: {error.message}")
    unknown = set(spec["setting"]) - {"name", "bandwidth", "copies", *MACHINE_FACTORS}
    if unknown:
        raise ConfigError(f"{source}: at setting: factors no command sets: "
                          f"{sorted(unknown)}; valid: {', '.join(MACHINE_FACTORS)}")
    return spec


def read_json(given: str, what: str = "--spec"):
    """The JSON in the file `given`, or `given` itself when it is an object's text."""
    try:
        text = (given if given.lstrip().startswith("{")
                else Path(given).read_text(encoding="utf-8"))
        return json.loads(text)
    except OSError as exc:
        raise ConfigError(f"{what} {given}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{what}: not JSON ({exc})") from None


def read(given: str, kind: str) -> dict:
    """The spec of `kind` in the file `given` (one only root could have written: it names
    what root runs, formats and mounts), or `given` itself (its text)."""
    if not given.lstrip().startswith("{"):
        trust.trusted_file(given, "--spec")
    return check(read_json(given), kind)


def text(spec: Mapping) -> str:
    """The spec as the workflow writes it: one line, keys sorted, so that the same slice
    of the study is the same bytes."""
    return json.dumps(spec, sort_keys=True)


# --- the objects a spec describes ------------------------------------------------------


def medium(spec: Mapping) -> Medium:
    m = spec["medium"]
    return Medium.from_spec(m["name"], m)


def machine_factors(spec: Mapping) -> dict[str, str]:
    """The values of the factors that are machine settings (a missing one: kept)."""
    from wattzip.machine.factors import KEEP

    return {name: spec["setting"].get(name, KEEP) for name in MACHINE_FACTORS}


def of_section(cls, section: Mapping, **derived):
    """An object of the dataclass `cls` whose fields are named as a config section's keys:
    those of the section's keys it has, and what the model derived (`derived`)."""
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in section.items() if k in names}, **derived)


def quiet(spec: Mapping) -> QuietLimits:
    return of_section(QuietLimits, spec["quiet"])


def drift(spec: Mapping, phases: tuple = ()) -> DriftCheck | None:
    """The job's drift check (config drift), with the idle calibration's phases and the
    study's journal folder (drift_pool); None: 0 repeats."""
    check = of_section(DriftCheck, spec["drift"], phases=phases, pool=spec["drift_pool"])
    return check if check.repeats else None


def repeats(spec: Mapping) -> RepeatRule:
    """The job's repeat rule (config repeats), with its planned looks and the kinds they
    decide, if it looks: they set its least and most runs."""
    looks = spec.get("looks") or {}
    return RepeatRule.of(spec["repeats"], looks.get("runs", ()), looks.get("kinds", ()))


def expected(spec: Mapping) -> tuple[str | None, str | None]:
    """The Slurm node and the host the command must run on."""
    e = spec.get("expect") or {}
    return e.get("node"), e.get("host")
