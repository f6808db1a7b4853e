"""The config as a user writes it: the files merged in order, the schema's defaults filled in."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import yaml

from wattzip.errors import ConfigError
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
    `--configfile config/kick-the-tires.yaml` means what it means to snakemake."""
    named = [str(p) for p in paths]
    files = [WORKFLOW_CONFIG, *named] if Path(WORKFLOW_CONFIG).is_file() else named
    if not files:
        raise ConfigError(f"no {WORKFLOW_CONFIG} in {Path.cwd()} and no --configfile: run "
                          "it in the workflow's checkout, or name the study's config files")
    return files


def validate(config: dict, source: str) -> None:
    """The merged config against the schema, as the Snakefile validates it: the first
    error named by its key, a readable ConfigError, not a KeyError later on."""
    import jsonschema  # only where a config file is read (the workflow validates its own)

    schema = load_schema()
    checker = jsonschema.validators.validator_for(schema)(schema)
    error = jsonschema.exceptions.best_match(checker.iter_errors(config))
    if error is not None:
        where = ".".join(map(str, error.absolute_path)) or "top level"
        raise ConfigError(f"the config of {source}, at {where}: {error.message}")


def config_from_json(text: str) -> dict:
    """The merged config a command is given as JSON (what the workflow passes), checked
    as a config file is: JSON, an object, the schema."""
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"--config-json is not JSON: {exc}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"--config-json: an object of the config's keys was expected, not "
                          f"{type(config).__name__}")
    validate(config, "--config-json")
    return config
