"""Imports inside functions that do nothing (issue 39 item 6): a function-level import
of a segbench module that the importing module has already loaded, transitively, through
its module-level imports (and those of its packages' ``__init__``). Such an import
neither delays a heavy module nor breaks a cycle: the module is loaded anyway.

    python tools/lazy_imports.py [SRC_ROOT] [--list]

Prints the count of function-level internal imports, of those that do nothing, and with
``--list`` each one as ``file:line module``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path


def _module_of(path: Path, root: Path) -> tuple[str, ...]:
    parts = path.relative_to(root).with_suffix("").parts
    return tuple(parts[:-1]) if parts[-1] == "__init__" else tuple(parts)


def _is_module(root: Path, parts) -> bool:
    p = root.joinpath(*parts)
    return p.with_suffix(".py").is_file() or (p / "__init__.py").is_file()


def _type_checking(test) -> bool:
    """``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``): imports for the type checker."""
    name = test.attr if isinstance(test, ast.Attribute) else getattr(test, "id", None)
    return name == "TYPE_CHECKING"


def _imports(path: Path, root: Path):
    """(line, target module, at module level) of each import of the package."""
    me = _module_of(path, root)
    package = me if path.name == "__init__.py" else me[:-1]
    tree = ast.parse(path.read_text(encoding="utf-8"))
    stack = [(n, True) for n in tree.body]
    while stack:
        node, top = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            stack += [(c, False) for c in ast.iter_child_nodes(node)]
            continue
        if isinstance(node, ast.If) and _type_checking(node.test):
            stack += [(c, top) for c in node.orelse]  # its body never runs
            continue
        if isinstance(node, ast.ImportFrom) and node.level:
            if node.level - 1 > len(package):
                continue
            base = package[: len(package) - (node.level - 1)]
            mod = base + (tuple(node.module.split(".")) if node.module else ())
            for a in node.names:
                sub = mod + (a.name,)
                yield node.lineno, sub if _is_module(root, sub) else mod, top
        stack += [(c, top) for c in ast.iter_child_nodes(node)]


def _with_parents(mod):
    return [mod[:k] for k in range(0, len(mod) + 1)]


def analyse(root: Path):
    files = sorted(root.rglob("*.py"))
    top: dict = {}
    lazy: list = []
    for path in files:
        me = _module_of(path, root)
        edges = top.setdefault(me, set())
        for line, target, at_top in _imports(path, root):
            if at_top:
                edges.update(_with_parents(target))
            else:
                lazy.append((path.relative_to(root).as_posix(), line, me, target))

    def closure(mod):
        seen, work = set(), list(_with_parents(mod))
        while work:
            m = work.pop()
            if m in seen:
                continue
            seen.add(m)
            work += [t for t in top.get(m, ()) if t not in seen]
        return seen

    cache: dict = {}
    statements: dict = {}  # (file, line) -> [loaded already, ...] per name imported
    for rel, line, me, target in lazy:
        if me not in cache:
            cache[me] = closure(me)
        statements.setdefault((rel, line), []).append(
            (target in cache[me] and target != me, ".".join(target) or "segbench")
        )
    # a statement does nothing when everything it imports is loaded already
    idle = [
        (rel, line, ", ".join(sorted({n for _, n in got})))
        for (rel, line), got in sorted(statements.items())
        if all(k for k, _ in got)
    ]
    return list(statements), idle


def main(argv) -> int:
    args = [a for a in argv if not a.startswith("--")]
    root = (
        Path(args[0]) if args else Path(__file__).resolve().parents[1] / "src" / "segbench"
    )
    lazy, idle = analyse(root)
    print(
        f"function-level internal import statements: {len(lazy)}; of them importing "
        f"only modules loaded at module level already (doing nothing): {len(idle)}"
    )
    if "--list" in argv:
        for rel, line, target in idle:
            print(f"  {rel}:{line} {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
