"""The package's layering, read from the source: imports point down only.

    cli → admin → memory → storage → core        tool → memory        mcp → memory
    cli → fleet → admin

`errors` sits below everything; `config` (settings) may use storage and core and is used by
`tool`, `mcp` and `cli` (which starts the MCP server). Every import counts: module level,
inside functions (lazy) and under TYPE_CHECKING. `core` is pure: the standard library and `cryptography`, nothing else.
"""

from __future__ import annotations

import ast
import shutil
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "s3memory"
LAYERS = ["core", "storage", "memory", "admin", "cli"]
# What each top-level unit may import from s3memory (besides itself and `errors`).
ALLOWED = {
    "errors": set(),
    "core": {"core"},
    "storage": {"core", "storage"},
    "memory": {"core", "storage", "memory"},
    "admin": {"core", "storage", "memory", "admin"},
    "config": {"core", "storage"},
    "tool": {"core", "storage", "memory", "config"},
    "mcp": {"core", "storage", "memory", "config"},  # the MCP server: an adapter like tool, without anthropic
    "fleet": {"core", "storage", "admin", "config", "fleet"},  # fleet jobs: the admin library over many agents
    "cli": {"core", "storage", "memory", "admin", "cli", "config", "tool", "mcp", "fleet"},
    "__main__": {"cli"},  # `python -m s3memory`: the command line, nothing else
}
ANTHROPIC_USERS = {"s3memory.tool", "s3memory.cli.chat"}
CORE_THIRD_PARTY = {"cryptography"}


def module_name(path: Path, root: Path = PACKAGE) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit(module: str) -> str:
    """`s3memory.storage.vault` → "storage"; `s3memory.tool` → "tool"."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def imports(path: Path, root: Path = PACKAGE, *, names: bool = False) -> list[tuple[int, str]]:
    """(line, absolute module) of every import in the file, relative ones resolved. `names`: also
    `X.name` for every `from X import name` (the name may be a module)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if node.module is None or (node.level and target.count(".") == 1):
                # `from . import x` / `from s3memory import x`: each name may itself be a module
                found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names]
            elif names:
                found += [(node.lineno, f"{target}.{alias.name}") for alias in node.names if alias.name != "*"]
            found.append((node.lineno, target))
    return found


def violations(root: Path = PACKAGE) -> list[str]:
    problems: list[str] = []
    for path in sorted(root.rglob("*.py")):
        name = module_name(path, root)
        if name == "s3memory":
            continue  # the lazy public API names its modules as strings only
        own = unit(name)
        reported: set[tuple[int, str]] = set()
        for line, target in imports(path, root):
            where = f"{path.relative_to(root.parent)}:{line}"
            top = target.split(".")[0]
            if top == "anthropic" and name not in ANTHROPIC_USERS:
                problems.append(f"{where}: {name} imports anthropic (only {sorted(ANTHROPIC_USERS)} may)")
            if own == "core" and top != "s3memory" and top not in sys.stdlib_module_names | CORE_THIRD_PARTY:
                problems.append(f"{where}: core must stay pure, but {name} imports {target}")
            if top != "s3memory" or target == "s3memory":
                continue
            other = unit(target)
            if other in ("errors", own) or other in ALLOWED[own] or (line, other) in reported:
                continue
            reported.add((line, other))  # `from ..memory import engine` names two modules of one unit
            problems.append(f"{where}: {name} ({own}) imports {target} ({other}), which is not below it")
    return problems


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Each module of the package → the package's modules it imports (every import, as `imports`
    reads them; `from x import y` counts as importing module `x.y` if there is one, else `x`)."""
    paths = sorted(root.rglob("*.py"))
    modules = {module_name(path, root) for path in paths}
    graph: dict[str, set[str]] = {}
    for path in paths:
        name = module_name(path, root)
        graph[name] = set()
        for _, target in imports(path, root, names=True):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[str]:
    """One shortest cycle through the first module (by name) of each group of modules that import
    each other, as "a → b → a"."""
    found: list[str] = []
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        # Breadth first from `start`: the shortest way back to it, if there is one.
        parent: dict[str, str] = {}
        frontier = [start]
        while frontier and start not in parent:
            following: list[str] = []
            for module in frontier:
                for target in sorted(graph.get(module, ())):
                    if target not in parent:
                        parent[target] = module
                        following.append(target)
            frontier = following
        if start not in parent:
            continue
        path = [start]
        while len(path) == 1 or path[-1] != start:
            path.append(parent[path[-1]])
        members = path[::-1]
        done.update(members)
        found.append(" → ".join(members))
    return found


def test_imports_point_down_only() -> None:
    assert violations() == []


def test_no_module_imports_itself_through_others() -> None:
    """No import cycle, not even one Python resolves (a lazy import, TYPE_CHECKING): a cycle is two
    modules that cannot be understood, tested or moved one without the other."""
    assert cycles(import_graph()) == []


def test_an_import_cycle_is_caught(tmp_path: Path) -> None:
    copy = tmp_path / "s3memory"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "core" / "bad_a.py").write_text("from . import bad_b\n", encoding="utf-8")
    (copy / "core" / "bad_b.py").write_text("def f():\n    from s3memory.core.bad_a import x\n", encoding="utf-8")
    assert "s3memory.core.bad_a → s3memory.core.bad_b → s3memory.core.bad_a" in cycles(import_graph(copy))


def test_every_module_belongs_to_a_known_unit() -> None:
    units = {unit(module_name(p)) for p in PACKAGE.rglob("*.py")} - {""}
    assert units == set(ALLOWED)
    assert set(LAYERS) <= units


@pytest.mark.parametrize(
    ("module", "line", "expected"),
    [
        (
            "core/bad.py",
            "from s3memory.storage.vault import Vault",
            "s3memory.core.bad (core) imports s3memory.storage.vault",
        ),
        ("core/bad.py", "import boto3", "core must stay pure, but s3memory.core.bad imports boto3"),
        (
            "storage/bad.py",
            "from ..memory import engine",
            "s3memory.storage.bad (storage) imports s3memory.memory.engine",
        ),
        ("memory/bad.py", "from ..cli.exits import Failed", "s3memory.memory.bad (memory) imports s3memory.cli.exits"),
        ("admin/bad.py", "def f():\n    from s3memory.tool import S3MemoryTool", "imports s3memory.tool (tool)"),
        ("memory/bad.py", "import anthropic", "s3memory.memory.bad imports anthropic"),
    ],
)
def test_an_upward_import_is_caught(tmp_path: Path, module: str, line: str, expected: str) -> None:
    """The checker itself can fail: a copy of the package with one upward import is refused."""
    copy = tmp_path / "s3memory"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / module).write_text(line + "\n", encoding="utf-8")
    found = violations(copy)
    assert len(found) == 1, found
    assert expected in found[0]
