"""Counts behind issue 39 ("a family is declared once"), on a source tree:

* string literals naming a family (its registry name, e.g. 'boundary', 'semantic_boundary',
  or its command, 'semantic-boundary') outside that family's own package and the
  registry (families.py);
* exceptions the architecture test declares (DECLARED_UPWARD, SAME_LAYER entries);
* union-find implementations (functions named like find/union over a parent array).

    python tools/architecture_counts.py [SRC_ROOT] [TESTS_DIR]

Run it on two checkouts (``git worktree add /tmp/before <commit>``) for before -> after.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import Counter
from pathlib import Path

FAMILIES = {"boundary": "boundary", "region": "region", "superpixel": "superpixel",
            "semantic": "semantic", "stats": "stats",
            "semantic_boundary": "semantic_boundary", "semantic-boundary":
            "semantic_boundary", "consistency": "region", "human": "boundary",
            "crispness": "boundary"}


def family_literals(src: Path) -> Counter:
    per_file: Counter = Counter()
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src)
        own = rel.parts[0] if len(rel.parts) > 1 else None
        if str(rel) == "families.py":        # the registry: where a family is declared
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                pkg = FAMILIES.get(node.value)
                if pkg is not None and pkg != own:
                    per_file[str(rel)] += 1
    return per_file


def declared_exceptions(tests: Path) -> dict:
    text = (tests / "test_architecture.py").read_text(encoding="utf-8")
    tree = ast.parse(text)
    out = {}
    for node in tree.body:
        target = None
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            target, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target, value = node.target.id, node.value
        if target in ("DECLARED_UPWARD", "SAME_LAYER"):
            if isinstance(value, (ast.Set, ast.Dict)):
                out[target] = len(value.elts if isinstance(value, ast.Set) else value.keys)
            else:
                out[target] = 0            # set() or an empty literal
    return out


def union_finds(src: Path) -> list[str]:
    found = []
    for path in sorted(src.rglob("*.py")):
        for m in re.finditer(r"^def (_?find\w*)\(parent", path.read_text(encoding="utf-8"),
                             re.M):
            found.append(f"{path.relative_to(src)}:{m.group(1)}")
    return found


def main(argv):
    here = Path(__file__).resolve().parents[1]
    src = Path(argv[1]) if len(argv) > 1 else here / "src" / "segbench"
    tests = Path(argv[2]) if len(argv) > 2 else src.parents[1] / "tests"
    lit = family_literals(src)
    print(f"string literals naming a family outside its package: {sum(lit.values())} "
          f"in {len(lit)} files")
    for f, n in lit.most_common(6):
        print(f"    {n:4d}  {f}")
    print(f"declared exceptions in the architecture test: {declared_exceptions(tests)}")
    uf = union_finds(src)
    print(f"union-find implementations: {len(uf)} ({', '.join(uf)})")


if __name__ == "__main__":
    main(sys.argv)
