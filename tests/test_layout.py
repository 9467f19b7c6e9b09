"""The package reads as the pipeline: stage subpackages, short modules, imports down.

These are the rules of docs/architecture.md, checked on the source: no module
over ``MAX_LINES`` lines, the stages as subpackages, no import cycle between
lsh_frame's modules (imports under ``if TYPE_CHECKING:`` aside, as they never
run), every import pointing at the same or an earlier layer, and no public
name on ``lsh_frame`` outside ``__all__`` but its submodules.
"""

from __future__ import annotations

import ast
import types
from pathlib import Path

import pytest

import lsh_frame

PACKAGE = Path(lsh_frame.__file__).resolve().parent
MAX_LINES = 800

#: The layers, bottom first; a module may import its own layer and those below.
LAYERS: list[set[str]] = [
    {"errors", "config", "_validation", "_progress", "_warn", "_version", "_kernels"},
    {"text"},
    {"sketch"},
    {"block"},
    {"compare"},
    {"decide"},
    {"resolve"},
    {"jobs"},
    {"index", "explain", "evaluate", "plot", "datasets", "review"},
    {"accessor", "cli", "dask"},
    {"__main__"},
]
STAGES = ["text", "sketch", "block", "compare", "decide", "resolve", "jobs"]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) in {
        "TYPE_CHECKING",
        "typing.TYPE_CHECKING",
    }


def _imports(name: str, path: Path) -> set[str]:
    """The lsh_frame modules a module imports at run time."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _is_type_checking(node):
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            for alias in node.names:
                child = f"{module}.{alias.name}"
                found.add(child if child in MODULES else module)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return {module for module in found if module in MODULES}


IMPORTS = {name: _imports(name, path) - {name} for name, path in MODULES.items()}


def _layer(name: str) -> int:
    if name == "lsh_frame":
        return len(LAYERS)
    top = name.split(".")[1]
    return next(index for index, layer in enumerate(LAYERS) if top in layer)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_is_longer_than_a_newcomer_can_read(name):
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{name} has {lines} lines"


def test_the_stages_are_subpackages_in_the_order_data_flows():
    for stage in STAGES:
        assert (PACKAGE / stage / "__init__.py").is_file(), stage
    assert [_layer(f"lsh_frame.{stage}") for stage in STAGES] == sorted(
        _layer(f"lsh_frame.{stage}") for stage in STAGES
    )


def test_every_module_belongs_to_a_layer():
    for name in MODULES:
        _layer(name)  # raises StopIteration for a top-level name no layer holds


def test_imports_point_down():
    upward = [
        (name, imported)
        for name, imported_set in IMPORTS.items()
        for imported in imported_set
        if imported != "lsh_frame" and _layer(imported) > _layer(name)
    ]
    assert upward == []


def test_no_import_cycle():
    # Depth-first search for a back edge; report the cycle it closes.
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        state[name] = 1
        path.append(name)
        for imported in sorted(IMPORTS[name]):
            if state.get(imported) == 1:
                return [*path[path.index(imported) :], imported]
            if imported not in state:
                cycle = visit(imported)
                if cycle:
                    return cycle
        state[name] = 2
        path.pop()
        return None

    for name in sorted(IMPORTS):
        if name not in state:
            assert visit(name) is None, " -> ".join(path)


def test_no_module_imports_itself():
    itself = [name for name, path in MODULES.items() if name in _imports(name, path)]
    assert itself == []


def test_the_checker_finds_a_cycle():
    # The rule above can fail: two modules importing each other are a cycle.
    saved = dict(IMPORTS)
    try:
        IMPORTS["lsh_frame.text.shingle"] = {"lsh_frame.block.fields"}
        IMPORTS["lsh_frame.block.fields"] = {"lsh_frame.text.shingle"}
        with pytest.raises(AssertionError):
            test_no_import_cycle()
    finally:
        IMPORTS.clear()
        IMPORTS.update(saved)


def test_no_public_name_outside_all():
    stray = [
        name
        for name in dir(lsh_frame)
        if not name.startswith("_")
        and name not in lsh_frame.__all__
        and not isinstance(getattr(lsh_frame, name), types.ModuleType)
    ]
    assert stray == []
    assert sorted(lsh_frame.__all__) == lsh_frame.__all__
