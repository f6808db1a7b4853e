"""The config as a user writes it: the files merged in order, the schema's defaults filled in."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import yaml

from wattzip.errors import ConfigError, did_you_mean
from wattzip.resources import load_schema

# The workflow's own config: the Snakefile's `configfile:`, which Snakemake reads before
# every --configfile.
WORKFLOW_CONFIG = "config.yaml"


def with_defaults(config: dict, schema: dict | None = None) -> dict:
    """A copy of the config with every absent key that the schema gives a `default:`."""
    schema = schema if schema is not None else load_schema()

    def fill(value, sub):
        if not isinstance(value, dict) or sub.get("type") != "object":
            return value
        for key, prop in sub.get("properties", {}).items():
            if key not in value and "default" in prop:
                value[key] = copy.deepcopy(prop["default"])
            if key in value:
                value[key] = fill(value[key], prop)
        return value

    return fill(copy.deepcopy(config), schema)


def merge_configs(paths: list[str | Path]) -> dict:
    """config.yaml and its overlays merged as Snakemake merges --configfile (mappings
    deeply, everything else replaced)."""

    def merge(a: dict, b: dict) -> dict:
        out = dict(a)
        for k, v in b.items():
            both = isinstance(v, dict) and isinstance(out.get(k), dict)
            out[k] = merge(out[k], v) if both else v
        return out

    config: dict = {}
    for path in paths:
        try:
            with open(path, encoding="utf-8") as f:  # its errors name the file
                loaded = yaml.safe_load(f) or {}
        except OSError as exc:
            raise ConfigError(f"config file {path}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {path} is not YAML: {exc}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"config file {path}: a mapping of keys was expected, "
                              f"not {type(loaded).__name__}")
        config = merge(config, loaded)
    return config


def study_files(paths: list[str | Path]) -> list[str]:
    """The files a command reads a study from, as the workflow reads them: the current
    directory's config.yaml first (when it has one), then the overlays given, so
    `--configfile config/kick-the-tires.yaml` means what it means to snakemake. A file
    named twice (`--configfile config.yaml my.yaml`) is read and named once."""
    named = [str(p) for p in paths]
    files = [WORKFLOW_CONFIG, *named] if Path(WORKFLOW_CONFIG).is_file() else named
    if not files:
        raise ConfigError(f"no {WORKFLOW_CONFIG} in {Path.cwd()} and no --configfile: run "
                          "it in the workflow's checkout, or name the study's config files")
    return once_each(files)


def once_each(files: list[str]) -> list[str]:
    """`files` without a second mention of one file (however its path is spelled)."""
    seen: set[Path] = set()
    kept = []
    for name in files:
        path = Path(name).resolve()
        if path not in seen:
            seen.add(path)
            kept.append(name)
    return kept


# A screenful: the problems after these are counted, not listed.
MOST_PROBLEMS_SHOWN = 20


def validate(config: dict, source: str, files: list[str | Path] = (),
             overrides: dict | None = None) -> None:
    """The merged config against the schema, as the Snakefile validates it, before any
    other check: one line per problem (unknown keys first), each naming the file that set
    the key (one of `files`, else `--config` for `overrides`, else `source`), its path,
    what is wrong and the closest known key or value, in one ConfigError."""
    source = " + ".join(map(_shown, files)) if files else source
    lines = problems(config, _origins(files, overrides), source)
    if len(lines) > MOST_PROBLEMS_SHOWN:
        lines = [*lines[:MOST_PROBLEMS_SHOWN],
                 f"... and {len(lines) - MOST_PROBLEMS_SHOWN} more problems"]
    if lines:
        raise ConfigError("\n".join(lines))


def validate_workflow(config: dict, configfiles, overrides: dict | None) -> None:
    """The config as Snakemake merged it, checked before Snakemake's own `validate` (whose
    error is the whole schema and config): the workflow's config.yaml, then `configfiles`
    (--configfile), then `overrides` (--config)."""
    files = once_each([name for name in (WORKFLOW_CONFIG, *map(str, configfiles))
                       if Path(name).is_file()])
    validate(config, "--config", files, overrides)


def problems(config: dict, origins: list[tuple[str, dict]], source: str) -> list[str]:
    """Every way `config` breaks the schema, one line each."""
    import jsonschema  # only where a config file is read

    schema = load_schema()
    checker = jsonschema.validators.validator_for(schema)(schema)
    found = [p for error in checker.iter_errors(config) for p in _problems_of(error)]
    found.sort(key=lambda p: p[2] != "unknown")  # unknown keys first: the likeliest typos
    # A missing key is the fault of the mapping that lacks it.
    lines = [f"{_origin(path[:-1] if kind == 'missing' else path, origins, source)}, "
             f"at {_where(path)}: {what}" for path, what, kind in found]
    return list(dict.fromkeys(lines))  # a key two parts of the schema require, once


def _problems_of(error) -> list[tuple[list, str, str | None]]:
    """(path, what is wrong, "unknown" or "missing" for such a key) of one schema error."""
    path, value, schema = list(error.absolute_path), error.instance, error.schema
    if error.validator == "additionalProperties" and isinstance(value, dict):
        known = list(schema.get("properties", {}))
        return [([*path, key], _unknown_key(key, known), "unknown") for key in value
                if key not in known]
    if error.validator == "required" and isinstance(value, dict):
        return [([*path, key], "missing, and required", "missing")
                for key in error.validator_value if key not in value]
    if error.validator in ("oneOf", "anyOf") and error.context:
        # The alternatives of the instance's own type say what is wrong with it.
        fitting = [e for e in error.context if e.validator != "type"] or error.context
        return [p for e in fitting for p in _problems_of(e)]
    if error.validator == "enum":
        return [(path, f"{value!r} is not one of {', '.join(map(str, error.validator_value))}"
                       f"{did_you_mean(value, error.validator_value)}", None)]
    examples = [str(e) for e in schema.get("examples", ())]
    if error.validator in ("pattern", "type") and examples:
        squeezed = "".join(str(value).split())  # "64 MiB" for 64MiB: the likeliest slip
        fits = (isinstance(value, str) and "pattern" in schema
                and re.search(schema["pattern"], squeezed))
        hint = f"; did you mean {squeezed}?" if fits else did_you_mean(value, examples)
        like = " or ".join([", ".join(examples[:-1]), examples[-1]] if examples[:-1]
                           else examples)
        return [(path, f"{value!r} is not written like {like}{hint}", None)]
    return [(path, error.message, None)]


def _unknown_key(key, known: list[str]) -> str:
    hint = did_you_mean(key, known)
    return f"no such key{hint or '; the keys here: ' + ', '.join(known)}"


def _where(path: list) -> str:
    """A key's path as a user would point at it: factors.medium.small.size, codecs[2]."""
    where = ""
    for part in path:
        where += f"[{part}]" if isinstance(part, int) else f".{part}" if where else str(part)
    return where or "top level"


def _origins(files, overrides: dict | None) -> list[tuple[str, dict]]:
    """Each file's own keys (and the command line's --config), in the order merged."""
    origins = []
    for name in files:
        try:
            with open(name, encoding="utf-8") as f:
                loaded = yaml.safe_load(f)
        except (OSError, yaml.YAMLError):
            continue  # merging it said so already
        origins.append((_shown(name), loaded if isinstance(loaded, dict) else {}))
    if overrides:
        origins.append(("--config", overrides))
    return origins


def _shown(name) -> str:
    """A config file's name as the user typed it, relative to here when inside it."""
    path = Path(name)
    if path.is_absolute() and path.is_relative_to(Path.cwd()):
        return str(path.relative_to(Path.cwd()))
    return str(name)


def _origin(path: list, origins: list[tuple[str, dict]], source: str) -> str:
    """The last of `origins` to set the key at `path` (it wins the merge), else `source`
    (the top level's problems, a missing key, are the whole config's)."""
    if not path:
        return source
    for label, given in reversed(origins):
        node = given
        for part in path:
            held = (part in node if isinstance(node, dict) else
                    isinstance(node, list) and isinstance(part, int) and part < len(node))
            if not held:
                break
            node = node[part]
        else:
            return label
    return source


def config_from_file(path: str) -> dict:
    """The merged config a command is given as one file (what the workflow writes: JSON,
    whose order of keys is kept), checked as a config file is."""
    config = merge_configs([path])
    validate(config, path)
    return config
