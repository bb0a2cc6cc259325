"""The shape of the package, checked on its source (lazy imports inside functions
included):

* the layers import only downwards, and no family module imports the engine;
* the import graph between files has no cycle, inside a package too;
* no private name (``_x``) is imported from another top-level package or module;
* no module imports ``segbench`` by its absolute name (``from segbench import ...``):
  inside the package every import is relative, so every one is checked here;
* ``importlib.import_module`` / ``__import__`` (imports the checks cannot read) only in
  the places listed in :data:`DYNAMIC_IMPORTS`.

Every rule is a function of a source root, run on ``src/segbench`` and, in the negative
tests at the end, on small planted trees that break it: a check that cannot fail checks
nothing.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "segbench"

#: Lowest first; a package may import from its own layer's modules only where listed
#: in SAME_LAYER (measure packages that build on each other) and from lower layers.
LAYERS = [
    {"errors", "_version", "compilation", "memory", "hooks"},
    {"spec", "resampling", "notebook", "families", "streaming"},
    {"io"},
    {"result"},
    {"primitives"},
    {"datasets"},
    {"algorithms"},
    {"boundary", "region", "superpixel", "semantic", "stats", "semantic_boundary"},
    {"engine"},
    {"runners"},
    {"api", "api_agreement", "api_consistency", "api_semantic", "api_stats",
     "api_superpixel", "algorithm_folders"},
    {"comparison"},
    {"stream"},
    {"submit"},
    {"report"},
    {"demo"},
    {"annotate"},
    {"cli", "__init__"},
]
SAME_LAYER: set = set()
FAMILY_PACKAGES = ("boundary", "region", "superpixel", "semantic", "stats",
                   "semantic_boundary")

#: Files that may import by a computed name, and why (the checks cannot see those
#: imports, so each one is a place a reviewer reads by hand).
DYNAMIC_IMPORTS = {
    "cli/__init__.py": "the command table: builds only the parser of the group asked for",
    "families.py": "the registry: imports a benchmark's family package (or runner) by "
                   "the name its entry gives, only when that benchmark runs",
    "compilation.py": "hides optional third-party modules (scipy, yaml) from Numba's "
                      "start-up through sys.modules; never a segbench module",
    "__init__.py": "registers the deprecated module name segbench.compare in sys.modules",
    "runners/__init__.py": "imports a runner module on first use of its public name, and "
                           "the new home of a deprecated api_* name (moved())",
}

#: Imports that go up the layers on purpose, as (importing file, imported module):
#: each is lazy (inside a function) and left out of the layer and cycle checks.
DECLARED_UPWARD: dict = {}


@dataclass(frozen=True)
class Import:
    """One import statement's view: the file it is in, its line, the module as a path
    inside the package, the names taken from it, whether it is at module level
    (not inside a function) and whether it was written as ``segbench...``."""

    file: str
    line: int
    module: tuple[str, ...]
    names: tuple[str, ...]
    absolute: bool


def _module_of(path: Path, root: Path) -> tuple[str, ...]:
    parts = path.relative_to(root).with_suffix("").parts
    return tuple(parts[:-1]) if parts[-1] == "__init__" else tuple(parts)


def _package_of(path: Path, root: Path) -> tuple[str, ...]:
    return tuple(path.relative_to(root).parts[:-1])


def _imports(path: Path, root: Path):
    """Every import of ``root``'s package in the file ``path`` (:class:`Import`)."""
    package = _package_of(path, root)
    rel = path.relative_to(root).as_posix()
    top = root.name
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names = tuple(a.name for a in node.names)
            if node.level:
                if node.level - 1 > len(package):
                    continue                        # beyond the package: not ours
                base = package[:len(package) - (node.level - 1)]
                module = base + (tuple(node.module.split(".")) if node.module else ())
                yield Import(rel, node.lineno, module, names, False)
            elif node.module and node.module.split(".")[0] == top:
                yield Import(rel, node.lineno, tuple(node.module.split(".")[1:]), names,
                             True)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == top:
                    yield Import(rel, node.lineno, tuple(alias.name.split(".")[1:]), (),
                                 True)


def _sources(root: Path) -> list[Path]:
    return sorted(root.rglob("*.py"))


def _unit(parts: tuple[str, ...]) -> str:
    """The top-level package or module a module path belongs to (``__init__`` for the
    package's own ``__init__.py``)."""
    return parts[0] if parts else "__init__"


def _file_unit(path: Path, root: Path) -> str:
    rel = path.relative_to(root).parts
    return rel[0] if len(rel) > 1 else rel[0][:-3]


def _targets(imp: Import, root: Path) -> list[tuple[str, ...]]:
    """The modules (files) an import loads: ``from pkg import name`` loads the module
    ``pkg.name`` when there is one, else ``pkg`` itself."""
    def is_module(parts):
        p = root.joinpath(*parts)
        return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()
    if not imp.names:
        return [imp.module]
    out = []
    for name in imp.names:
        sub = imp.module + (name,)
        out.append(sub if name != "*" and is_module(sub) else imp.module)
    return out


def _declared(imp: Import, target: tuple[str, ...]) -> bool:
    return (imp.file, _unit(target)) in DECLARED_UPWARD


def layer_violations(root: Path = SRC) -> list[str]:
    """Imports of a higher layer, or of the same layer where SAME_LAYER does not list
    the pair."""
    bad = []
    for path in _sources(root):
        a = _file_unit(path, root)
        for imp in _imports(path, root):
            for target in _targets(imp, root):
                b = _unit(target)
                if b == a or _declared(imp, target):
                    continue
                la, lb = _layer(a), _layer(b)
                if lb > la or (lb == la and (a, b) not in SAME_LAYER):
                    bad.append(f"{imp.file}:{imp.line} imports segbench."
                               f"{'.'.join(target)}")
    return bad


def _layer(name: str) -> int:
    for n, layer in enumerate(LAYERS):
        if name in layer:
            return n
    raise AssertionError(f"segbench.{name} is in no layer of tests/test_architecture.py")


def engine_in_families(root: Path = SRC) -> list[str]:
    """Family modules that import the engine."""
    return [f"{imp.file}:{imp.line}" for p in _sources(root)
            if _file_unit(p, root) in FAMILY_PACKAGES for imp in _imports(p, root)
            if imp.module and imp.module[0] == "engine"]


def families_in_engine(root: Path = SRC) -> list[str]:
    """Engine modules that import a family package or the algorithms: the engine
    runs family specs and names none (issue 39)."""
    named = set(FAMILY_PACKAGES) | {"algorithms"}
    return [f"{imp.file}:{imp.line}" for p in _sources(root)
            if _file_unit(p, root) == "engine" for imp in _imports(p, root)
            if imp.module and imp.module[0] in named]


def import_graph(root: Path = SRC) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    """File -> the files it imports (module paths; ``()`` is the package's
    ``__init__.py``), lazy imports included, declared upward imports left out."""
    graph: dict[tuple[str, ...], set[tuple[str, ...]]] = {}
    for path in _sources(root):
        me = _module_of(path, root)
        edges = graph.setdefault(me, set())
        for imp in _imports(path, root):
            edges.update(t for t in _targets(imp, root)
                         if t != me and not _declared(imp, t))
    return graph


def cycles(root: Path = SRC) -> list[list[str]]:
    """The import cycles between files: one list of files per strongly connected group
    of more than one file (Tarjan's algorithm, iterative), each group in cycle order
    where a simple cycle runs through it."""
    graph = import_graph(root)
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    groups = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    group = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        group.append(w)
                        if w == v:
                            break
                    if len(group) > 1:
                        groups.append(sorted("/".join(g) or "__init__" for g in group))
    return groups


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(root: Path = SRC) -> list[str]:
    """Private modules or names (``_x``, dunders excepted) imported from another
    top-level package or module. A private top-level module (``segbench._version``)
    is private to segbench as a whole, so any part of it may use it."""
    bad = []
    for path in _sources(root):
        a = _file_unit(path, root)
        for imp in _imports(path, root):
            if _unit(imp.module) == a:
                continue
            inner = imp.module[1:] + tuple(n for n in imp.names if n != "*")
            if any(_private(p) for p in inner):
                bad.append(f"{imp.file}:{imp.line} imports "
                           f"{'.'.join(imp.module) or 'segbench'}: "
                           f"{', '.join(p for p in inner if _private(p))}")
    return bad


def absolute_imports(root: Path = SRC) -> list[str]:
    """Imports of the package by its own name (``from segbench import api``)."""
    return [f"{imp.file}:{imp.line}" for p in _sources(root) for imp in _imports(p, root)
            if imp.absolute]


#: What loads or reaches a module by a computed name, which the import checks cannot
#: read: importlib's import_module and util, __import__, sys.modules, pkgutil, runpy,
#: exec and eval.
_DYNAMIC_CALLS = {"import_module", "__import__", "exec", "eval"}
_DYNAMIC_MODULES = {"pkgutil", "runpy", "importlib.util"}


def _dynamic_uses(tree) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in _DYNAMIC_CALLS:
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute):
            if node.attr in _DYNAMIC_CALLS - {"exec", "eval"}:
                found.append((node.lineno, node.attr))
            elif node.attr == "modules" and isinstance(node.value, ast.Name) and \
                    node.value.id.lstrip("_") == "sys":
                found.append((node.lineno, "sys.modules"))
            elif node.attr == "util" and isinstance(node.value, ast.Name) and \
                    node.value.id == "importlib":
                found.append((node.lineno, "importlib.util"))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names
                      if a.name in _DYNAMIC_MODULES]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module in _DYNAMIC_MODULES:
                found.append((node.lineno, node.module))
            elif node.module == "importlib":
                found += [(node.lineno, f"importlib.{a.name}") for a in node.names
                          if a.name in ("util", "import_module")]
        elif isinstance(node, ast.alias) and node.name.split(".")[-1] in _DYNAMIC_CALLS:
            found.append((getattr(node, "lineno", 0), node.name))
    return found


def dynamic_imports(root: Path = SRC) -> list[str]:
    """Imports by a computed name outside :data:`DYNAMIC_IMPORTS`: ``import_module``,
    ``__import__``, ``sys.modules``, ``pkgutil``, ``importlib.util``, ``runpy``,
    ``exec``, ``eval`` (an upward or cyclic import made through one of these would
    pass every other check)."""
    bad = []
    for path in _sources(root):
        rel = path.relative_to(root).as_posix()
        if rel in DYNAMIC_IMPORTS:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bad += [f"{rel}:{line} {what}" for line, what in _dynamic_uses(tree)]
    return bad


# -- on segbench's own source ------------------------------------------------------


def test_layers_import_only_downwards():
    bad = layer_violations()
    assert not bad, "imports against the layering:\n" + "\n".join(bad)


def test_no_family_module_imports_the_engine():
    bad = engine_in_families()
    assert not bad, "family modules importing the engine: " + ", ".join(bad)


def test_the_engine_imports_no_family_and_no_algorithm():
    bad = families_in_engine()
    assert not bad, "engine modules naming a family or an algorithm: " + ", ".join(bad)


def test_no_import_cycle_between_files():
    found = cycles()
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_no_private_names_across_packages():
    bad = private_imports()
    assert not bad, "private names imported across packages:\n" + "\n".join(bad)


def test_no_absolute_import_of_segbench_inside_it():
    bad = absolute_imports()
    assert not bad, "write these imports relative: " + ", ".join(bad)


def test_dynamic_imports_only_where_listed():
    bad = dynamic_imports()
    assert not bad, "imports by a computed name (the checks cannot read them):\n" + \
        "\n".join(bad)


def test_declared_exceptions_still_exist():
    """Each DECLARED_UPWARD and DYNAMIC_IMPORTS entry names a real import, so the
    lists cannot outlive the code they excuse."""
    for file, target in DECLARED_UPWARD:
        imps = _imports(SRC / file, SRC)
        assert any(_unit(t) == target for i in imps for t in _targets(i, SRC)), file
    for file in DYNAMIC_IMPORTS:
        assert _dynamic_uses(ast.parse((SRC / file).read_text(encoding="utf-8"))), file


@pytest.mark.parametrize("module", ["segbench.superpixel", "segbench.cli.superpixel"])
def test_checker_sees_imports(module):
    """The checks read real imports (guard against a parser that finds nothing)."""
    path = SRC.joinpath(*module.split(".")[1:])
    path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
    assert list(_imports(path, SRC))


def test_graph_has_the_package_edges():
    graph = import_graph()
    assert ("datasets", "bsds") in graph[("datasets",)]
    assert ("io",) in graph[("datasets", "bsds")]


# -- each rule catches a planted violation ----------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    """A package ``segbench`` under ``tmp_path`` with these files (and every
    ``__init__.py`` its folders need)."""
    root = tmp_path / "segbench"
    for rel, text in {"__init__.py": "", **files}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(root).parents:
            init = root / parent / "__init__.py"
            if not init.exists():
                init.write_text("")
        path.write_text(text)
    return root


CLEAN = {"io/__init__.py": "from ._atomic import write\n",
         "io/_atomic.py": "def _reason(e):\n    return str(e)\n\n"
                          "def write(p):\n    return _reason(p)\n",
         "datasets/__init__.py": "from .bsds import Dataset\n",
         "datasets/bsds.py": "from ..io import write\n\nclass Dataset:\n    pass\n",
         "datasets/synthetic.py": "from .bsds import Dataset\n",
         "cli/__init__.py": "from importlib import import_module\n"}


def test_planted_tree_without_violations_passes(tmp_path):
    root = _tree(tmp_path, CLEAN)
    assert (layer_violations(root), cycles(root), private_imports(root),
            absolute_imports(root), dynamic_imports(root)) == ([], [], [], [], [])


@pytest.mark.parametrize("file, text", [
    ("datasets/bsds.py", "from ..io import write\n\ndef f():\n"
                         "    from .synthetic import Dataset\n"),      # lazy, in a package
    ("io/_atomic.py", "from ..datasets import Dataset\n"),             # through __init__
])
def test_cycle_is_caught(tmp_path, file, text):
    root = _tree(tmp_path, {**CLEAN, file: text})
    found = cycles(root)
    assert len(found) == 1 and len(found[0]) >= 2


@pytest.mark.parametrize("file, text, culprit", [
    ("datasets/bsds.py", "from ..io import _reason\n", "_reason"),
    ("datasets/bsds.py", "from ..io._atomic import write\n", "_atomic"),
    ("datasets/bsds.py", "def f():\n    from ..io._atomic import _reason\n", "_atomic"),
])
def test_private_import_across_packages_is_caught(tmp_path, file, text, culprit):
    root = _tree(tmp_path, {**CLEAN, file: text})
    bad = private_imports(root)
    assert len(bad) == 1 and culprit in bad[0]


def test_private_import_inside_a_package_is_allowed(tmp_path):
    root = _tree(tmp_path, {**CLEAN, "io/_other.py": "from ._atomic import _reason\n"})
    assert private_imports(root) == []


@pytest.mark.parametrize("text", ["from segbench import api\n",
                                  "import segbench.datasets\n",
                                  "def f():\n    from segbench.datasets import bsds\n"])
def test_absolute_import_is_caught(tmp_path, text):
    root = _tree(tmp_path, {**CLEAN, "io/_seg.py": text})
    assert len(absolute_imports(root)) == 1


def test_import_of_a_higher_layer_is_caught(tmp_path):
    """``from segbench import api`` in io: an upward import the old check read as an
    import of nothing."""
    root = _tree(tmp_path, {**CLEAN, "api.py": "",
                            "io/_seg.py": "def f():\n    from segbench import api\n"})
    assert layer_violations(root) == ["io/_seg.py:2 imports segbench.api"]


@pytest.mark.parametrize("text", [
    "from importlib import import_module\n",
    "import importlib\n\ndef f():\n    return importlib.import_module('segbench.api')\n",
    "def f():\n    return __import__('segbench.api')\n",
    "import sys\n\ndef f():\n    return sys.modules['segbench.api'].evaluate\n",
    "import pkgutil\n\ndef f():\n    return pkgutil.resolve_name('segbench.api:evaluate')\n",
    "import importlib.util\n\ndef f():\n    importlib.util.find_spec('segbench.api')\n",
    "from importlib import util\n",
    "import runpy\n\ndef f():\n    runpy.run_module('segbench.api')\n",
    "def f():\n    exec('from segbench import api')\n",
])
def test_dynamic_import_is_caught(tmp_path, text):
    root = _tree(tmp_path, {**CLEAN, "datasets/bsds.py": text})
    bad = dynamic_imports(root)
    assert bad and all(b.startswith("datasets/bsds.py:") for b in bad)


def test_family_importing_another_family_is_caught(tmp_path):
    root = _tree(tmp_path, {**CLEAN, "region/_family.py": "from ..boundary import thin\n"})
    assert layer_violations(root) == ["region/_family.py:1 imports segbench.boundary"]


def test_engine_importing_a_family_is_caught(tmp_path):
    root = _tree(tmp_path, {**CLEAN, "engine/_run.py": "def f():\n    from ..boundary import thin\n"})
    assert families_in_engine(root) == ["engine/_run.py:2"]


def test_family_importing_the_engine_is_caught(tmp_path):
    root = _tree(tmp_path, {**CLEAN, "engine/__init__.py": "",
                            "boundary/_family.py": "from ..engine import run\n"})
    assert engine_in_families(root) == ["boundary/_family.py:1"]
