"""The package's structure in numbers: lines per module and its longest function.

``python benchmarks/structure.py [PACKAGE_DIR] [--min-lines N]`` prints one row per module
(lines, the longest function or method and its length), largest first, then any import
cycle between the package's modules. Run it on two checkouts to compare a restructuring.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def longest_function(tree: ast.AST) -> tuple[str, int]:
    best = ("", 0)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            if length > best[1]:
                best = (node.name, length)
    return best


def imports(tree: ast.AST, name: str, is_package: bool) -> set[str]:
    """The package's modules that module ``name`` imports (relative imports resolved)."""
    out = set()
    base = name.split(".") if is_package else name.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                stem = base[: len(base) - node.level + 1]
                target = ".".join(stem + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            out.add(target)
            out.update(f"{target}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Import cycles among module-level imports (depth-first search)."""
    found, state, stack = [], {}, []

    def visit(node):
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", nargs="?", default="exactclf")
    parser.add_argument("--min-lines", type=int, default=0)
    args = parser.parse_args()
    root = Path(args.package).resolve()
    rows, graph = [], {}
    trees = {}
    for path in sorted(root.rglob("*.py")):
        name = module_name(path, root)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        trees[name] = (tree, path.name == "__init__.py")
        lines = len(path.read_text(encoding="utf-8").splitlines())
        rows.append((lines, name, *longest_function(tree)))
    for name, (tree, is_package) in trees.items():
        # only imports at module level make a cycle at import time
        top = ast.Module(body=[n for n in tree.body
                               if isinstance(n, ast.Import | ast.ImportFrom)],
                         type_ignores=[])
        graph[name] = {m for m in imports(top, name, is_package) if m in trees} - {name}
    print(f"{'lines':>6}  {'module':<40} longest function")
    for lines, name, fn, length in sorted(rows, reverse=True):
        if lines >= args.min_lines:
            print(f"{lines:>6}  {name:<40} {fn} ({length})" if fn else f"{lines:>6}  {name}")
    found = cycles(graph)
    print(f"\n{len(rows)} modules, {sum(r[0] for r in rows)} lines; import cycles: "
          + ("none" if not found else "; ".join(" -> ".join(c) for c in found)))


if __name__ == "__main__":
    main()
