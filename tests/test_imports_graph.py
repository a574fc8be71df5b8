"""The package's imports, read from the source with `ast`: no import circle among trueno_web's modules at
module level, and no import hidden in a function except those that keep `import trueno_web` light (an
optional runtime, or a backend chosen when a device is created). So a new circle, or one hidden behind a
function-level import, fails here."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "trueno_web"

pytestmark = pytest.mark.skipif(not PACKAGE.is_dir(), reason="needs the source tree (a checkout)")

# Function-level imports that may stay: heavy or optional runtimes (loaded when a backend needs them),
# and the backends themselves (GpuDevice.create imports the one it opens).
LAZY_EXTERNAL = {"numpy", "wgpu", "js", "pyodide", "wasmtime"}
LAZY_INTERNAL = {"trueno_web.device": "trueno_web.backends."}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py")) if "__pycache__" not in p.parts}


def is_package(name: str) -> bool:
    return MODULES[name].name == "__init__.py"


def targets(node: ast.Import | ast.ImportFrom, importer: str) -> list[str]:
    """The modules an import statement names (absolute; only trueno_web's modules and the top-level name of
    an outside one)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if node.level:
        base = importer.split(".") if is_package(importer) else importer.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module
    subs = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in MODULES]
    return subs + ([module] if len(subs) < len(node.names) else [])


def imports(name: str):
    """(target, line, at module level) of every import in a module. A class body runs at import (module
    level); a function body does not, nor does an `if TYPE_CHECKING:` block."""
    tree = ast.parse(MODULES[name].read_text(), str(MODULES[name]))
    out = []

    def visit(node, in_function: bool):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                out.extend((t, child.lineno, not in_function) for t in targets(child, name))
            visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return out


def runs(importer: str, target: str) -> list[str]:
    """trueno_web's modules whose code an import of `target` runs from `importer`: the target and the packages
    above it that are not above the importer (those are being imported already)."""
    parts = target.split(".")
    chain = [".".join(parts[: i + 1]) for i in range(len(parts))]
    return [m for m in chain if m in MODULES and not importer.startswith(m + ".") and m != importer]


def module_graph() -> dict[str, set[str]]:
    return {
        name: {m for target, _, top in imports(name) if top for m in runs(name, target)} - {name} for name in MODULES
    }


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph (its modules in order, the first again at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def dfs(node: str):
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt) :] + [nxt]
            if nxt not in state:
                found = dfs(nxt)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return None

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10 * len(graph)))
    for start in sorted(graph):
        if start not in state:
            found = dfs(start)
            if found:
                return found
    return None


def test_the_module_level_import_graph_has_no_cycle():
    graph = module_graph()
    assert "trueno_web.tensor.core" in graph and "trueno_web.tensor.views" in graph["trueno_web.tensor.core"]
    cycle = find_cycle(graph)
    assert cycle is None, f"import circle: {' -> '.join(cycle)}"


def test_the_cycle_finder_finds_one():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def lazy_allowed(importer: str, target: str) -> bool:
    if not target.startswith("trueno_web"):
        return target.split(".")[0] in LAZY_EXTERNAL
    prefix = LAZY_INTERNAL.get(importer)
    return prefix is not None and target.startswith(prefix)


def test_function_level_imports_only_keep_the_import_light():
    hidden = [
        f"{MODULES[name].relative_to(PACKAGE.parent)}:{line}: {target}"
        for name in MODULES
        for target, line, top in imports(name)
        if not top and not lazy_allowed(name, target)
    ]
    assert hidden == [], "function-level imports that are not there to keep `import trueno_web` light:\n" + "\n".join(
        hidden
    )


def test_the_tensor_mixins_do_not_import_the_tensor_class():
    """views, reduce and linalg get what they need through the hooks Tensor implements (_new, _const,
    _apply, _tensors), so they sit below core.py; lower.py reads a tensor through its expression only."""
    for low in ("views", "reduce", "linalg", "expr", "lower"):
        name = f"trueno_web.tensor.{low}"
        reached = {name}
        todo = [name]
        graph = module_graph()
        while todo:
            for m in graph[todo.pop()]:
                if m not in reached:
                    reached.add(m)
                    todo.append(m)
        above = {"trueno_web.tensor", "trueno_web.tensor.core", "trueno_web.tensor.creation", "trueno_web.tensor.join"}
        assert not reached & above, (name, sorted(reached & above))
