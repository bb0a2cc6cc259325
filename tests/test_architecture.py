"""The shape of the package, checked on its source: the layers import only downwards
(no import circle, lazy imports included), no family module imports the engine, and no
private name is imported from another package."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "segbench"

#: Lowest first; a package may import from its own layer's modules only where listed
#: in SAME_LAYER (measure packages that build on each other) and from lower layers.
LAYERS = [
    {"errors", "__version__", "compilation", "memory"},
    {"spec", "resampling", "notebook"},
    {"io"},
    {"result"},
    {"boundary"},
    {"region"},
    {"datasets"},
    {"algorithms", "superpixel", "semantic", "stats"},
    {"engine"},
    {"api", "api_agreement", "api_consistency", "api_semantic", "api_stats",
     "api_superpixel"},
    {"compare"},
    {"stream"},
    {"submit"},
    {"report"},
    {"demo"},
    {"annotate"},
    {"cli", "__init__"},
]
SAME_LAYER = {("superpixel", "algorithms"), ("stats", "algorithms"),
              ("algorithms", "superpixel")}
FAMILY_PACKAGES = ("boundary", "region", "superpixel", "semantic", "stats")


def _layer(name: str) -> int:
    for n, layer in enumerate(LAYERS):
        if name in layer:
            return n
    raise AssertionError(f"segbench.{name} is in no layer of tests/test_architecture.py")


def _imports(path: Path):
    """(line, imported module path inside segbench as a list) of every import."""
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)] if node.level > 1 \
                    else package
                mod = base + (node.module.split(".") if node.module else [])
                if node.module is None:
                    for alias in node.names:
                        yield node.lineno, mod + [alias.name]
                    continue
                yield node.lineno, mod
            elif node.module and node.module.split(".")[0] == "segbench":
                yield node.lineno, node.module.split(".")[1:]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "segbench":
                    yield node.lineno, alias.name.split(".")[1:]


def _sources():
    return sorted(SRC.rglob("*.py"))


def _top(path: Path) -> str:
    rel = path.relative_to(SRC).parts
    return rel[0] if len(rel) > 1 else rel[0][:-3]


def test_layers_import_only_downwards():
    bad = []
    for path in _sources():
        a = _top(path)
        for line, mod in _imports(path):
            if not mod or mod[0] == a:
                continue
            b = mod[0]
            if _layer(b) > _layer(a) or (_layer(b) == _layer(a)
                                         and (a, b) not in SAME_LAYER):
                bad.append(f"{path.relative_to(SRC)}:{line} imports segbench.{'.'.join(mod)}")
    assert not bad, "imports against the layering:\n" + "\n".join(bad)


def test_no_family_module_imports_the_engine():
    bad = [f"{p.relative_to(SRC)}:{line}" for p in _sources()
           if _top(p) in FAMILY_PACKAGES for line, mod in _imports(p)
           if mod and mod[0] == "engine"]
    assert not bad, "family modules importing the engine: " + ", ".join(bad)


def test_no_private_names_across_packages():
    bad = []
    for path in _sources():
        a = _top(path)
        for line, mod in _imports(path):
            if len(mod) >= 2 and mod[0] != a and any(p.startswith("_") for p in mod[1:]):
                bad.append(f"{path.relative_to(SRC)}:{line} imports segbench."
                           f"{'.'.join(mod)}")
    assert not bad, "private modules imported across packages:\n" + "\n".join(bad)


@pytest.mark.parametrize("module", ["segbench.superpixel", "segbench.cli.superpixel"])
def test_checker_sees_imports(module):
    """The checks read real imports (guard against a parser that finds nothing)."""
    path = SRC.joinpath(*module.split(".")[1:])
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    assert list(_imports(path))
