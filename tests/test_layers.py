"""The package's folders are its layers, and data flows one way: no module imports from a
layer above its own (docs/architecture.md draws them). Function-level imports count too."""

import ast
from pathlib import Path

import pytest

import wattzip

pytestmark = pytest.mark.pure

# Top to bottom. The package's own top-level modules (records, run_record, stats, errors,
# resources, latex, units) are the foundation every layer may use.
LAYERS = ["cli", "bench", "report", "model", "measure", "analysis", "meters", "workload",
          "machine", "foundation"]
PACKAGE = Path(wattzip.__file__).parent


def layer_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else "foundation"


def imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("wattzip"):
            for alias in node.names:
                name = f"{node.module}.{alias.name}"
                is_module = (PACKAGE.parent / (name.replace(".", "/") + ".py")).exists() \
                    or (PACKAGE.parent / name.replace(".", "/")).is_dir()
                found.add(name if is_module else node.module)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("wattzip")}
    return found


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_every_layer_folder_exists():
    assert all((PACKAGE / name).is_dir() for name in LAYERS if name != "foundation")


def test_no_module_imports_a_layer_above_its_own():
    upward = []
    for path in PACKAGE.rglob("*.py"):
        mine = module_name(path)
        if mine == "wattzip.__main__":
            continue  # `python -m wattzip` is the CLI's own door
        rank = LAYERS.index(layer_of(mine))
        upward += [f"{mine} ({layer_of(mine)}) imports {other} ({layer_of(other)})"
                   for other in imports(path) if LAYERS.index(layer_of(other)) < rank]
    assert not upward, "\n".join(sorted(upward))


def test_the_foundation_is_a_few_modules():
    top = sorted(p.stem for p in PACKAGE.glob("*.py") if p.stem not in {"__init__", "__main__"})
    assert top == ["errors", "latex", "records", "resources", "run_record", "stats", "units"]
