"""The layout a newcomer can rely on: arrows point one way, one home per concept, small files.

Every import in the product code is read with `ast` (lazy imports inside functions too), so
a shortcut taken anywhere shows up here.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("refpool", "renderer", "generators", "curation", "pool")

# Lowest first. A module may import its own package and anything in a lower layer.
LAYERS: dict[str, int] = {
    "refpool.contracts": 0,
    "refpool": 0,  # the package's __init__: a docstring and a version
    "refpool.store": 1,
    "renderer": 1,  # shared by every stage, and usable alone by an RL environment
    "refpool.intake": 2,
    "generators": 3,
    "curation": 4,
    "pool": 5,
    "refpool.cli": 6,  # shells over everything
    "refpool.demo": 6,
    "app": 6,
}
# The renderer's CLI keeps its renders in the data directory, like every other command.
EXCEPTIONS = {("renderer.cli", "refpool.store")}
MAX_LINES = 400
LONG_FILES_ALLOWED = {"renderer/harness.js"}  # the page's harness reads top to bottom


def unit_of(module: str) -> str | None:
    """The layered unit a dotted module name belongs to (longest prefix in LAYERS)."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in LAYERS:
            return name
    return None


def source_files() -> list[Path]:
    files = [ROOT / "app.py"]
    for package in PACKAGES:
        files += sorted((ROOT / package).rglob("*.py"))
    return files


def module_name(path: Path) -> str:
    rel = (path.relative_to(ROOT) if path.is_relative_to(ROOT) else Path(path.name)).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(path: Path) -> list[tuple[str, bool]]:
    """(imported module, at module scope?) for every import statement in the file."""
    tree = ast.parse(path.read_text("utf-8"))
    top = {id(node) for node in tree.body}
    package = (
        module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    )
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # `from pkg import sub` may import a submodule: count it as pkg.sub when it is one
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                is_module = (ROOT / Path(*candidate.split("."))).with_suffix(".py").exists() or (
                    ROOT / Path(*candidate.split("."))
                ).is_dir()
                out.append((candidate if is_module else base, id(node) in top))
    return out


@functools.cache
def project_imports() -> dict[str, list[tuple[str, bool]]]:
    graph = {}
    for path in source_files():
        graph[module_name(path)] = [
            (name, top) for name, top in imports_of(path) if unit_of(name) is not None
        ]
    return graph


def test_every_module_belongs_to_a_layer() -> None:
    assert all(unit_of(m) for m in project_imports()), [
        m for m in project_imports() if unit_of(m) is None
    ]


def test_no_stage_imports_a_later_stage() -> None:
    wrong = []
    for module, imported in project_imports().items():
        mine = unit_of(module)
        for name, _ in imported:
            theirs = unit_of(name)
            assert mine is not None and theirs is not None
            if theirs == mine or (module, theirs) in EXCEPTIONS:
                continue
            upward = LAYERS[theirs] > LAYERS[mine]
            sideways = LAYERS[theirs] == LAYERS[mine] and LAYERS[mine] < 6
            if upward or sideways:
                wrong.append(f"{module} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_the_renderer_imports_nothing_but_the_contracts() -> None:
    wrong = [
        f"{module} imports {name}"
        for module, imported in project_imports().items()
        if unit_of(module) == "renderer"
        for name, _ in imported
        if unit_of(name) not in ("renderer", "refpool.contracts")
        and (module, unit_of(name)) not in EXCEPTIONS
    ]
    assert not wrong, "\n".join(wrong)


def test_no_import_cycles_between_modules() -> None:
    imports = project_imports()
    graph = {
        module: {name for name, top in imported if top and name in imports}
        for module, imported in imports.items()
    }
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> None:
        if node in path:
            cycle = path[path.index(node) :] + [node]
            pytest.fail("import cycle: " + " -> ".join(cycle))
        if node in done:
            return
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt != node:
                visit(nxt)
        path.pop()
        done.add(node)

    for module in sorted(graph):
        visit(module)


def test_the_layering_check_catches_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from pool.selection import build_pool\nimport curation.ratings\n")
    names = [name for name, _ in imports_of(bad)]
    assert [unit_of(n) for n in names] == ["pool", "curation"]
    assert LAYERS[unit_of(names[0]) or ""] > LAYERS["generators"]


def table_sql(table: str) -> re.Pattern[str]:
    return re.compile(
        rf"(FROM|JOIN|INTO|UPDATE|TABLE)\s+{table}\b|insert\(\s*[\"']{table}[\"']", re.I
    )


@pytest.mark.parametrize("table", ["candidates", "model_calls"])
def test_only_the_record_module_queries_its_table(table: str) -> None:
    store = ROOT / "refpool" / "store"
    home = {store / f"{table}.py", store / "migrations.py"}
    offenders = []
    for path in source_files():
        if path in home:
            continue
        for n, line in enumerate(path.read_text("utf-8").splitlines(), 1):
            if table_sql(table).search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_no_source_file_is_long() -> None:
    files = [*source_files(), *(ROOT / "tests").glob("*.py"), *(ROOT / "bench").glob("*.py")]
    files += [*(ROOT / "curation" / "static").glob("*.js"), ROOT / "renderer" / "harness.js"]
    long = {
        str(p.relative_to(ROOT)): n
        for p in files
        if (n := len(p.read_text("utf-8").splitlines())) > MAX_LINES
        and str(p.relative_to(ROOT)) not in LONG_FILES_ALLOWED
    }
    assert not long, long


def test_no_comment_points_outside_the_repo() -> None:
    """The repo stands alone: no reference to design notes that are not in it."""
    files = [*source_files(), *(ROOT / "tests").glob("*.py"), *(ROOT / "bench").glob("*.py")]
    marker = "DESIGN" + ".md"  # spelled apart so this file does not match itself
    offenders = [str(p.relative_to(ROOT)) for p in files if marker in p.read_text("utf-8")]
    assert not offenders, offenders


def test_the_table_check_catches_raw_sql() -> None:
    assert table_sql("candidates").search('store.query("SELECT id FROM candidates WHERE x")')
    assert table_sql("model_calls").search('store.insert("model_calls", row)')
    assert not table_sql("candidates").search("candidates.list_ids(store, accepted=True)")


def test_packaging_ships_every_package_and_its_data() -> None:
    """The wheel names no generic top-level module but app.py, leaves out no subpackage, and
    every package-data glob matches a file (a glob matching nothing ships nothing, silently)."""
    import tomllib

    tool = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    assert tool["py-modules"] == ["app"]
    found = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for package in PACKAGES
        for init in (ROOT / package).rglob("__init__.py")
    }
    assert set(tool["packages"]) == found
    for package, globs in tool["package-data"].items():
        folder = ROOT / Path(*package.split("."))
        for pattern in globs:
            assert list(folder.glob(pattern)), f"{package}: {pattern} matches nothing"
