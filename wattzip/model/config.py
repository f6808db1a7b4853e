"""The config as a user writes it: the files merged in order, the schema's defaults filled in."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from wattzip.resources import load_schema


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
        config = merge(config, yaml.safe_load(Path(path).read_text()) or {})
    return config
