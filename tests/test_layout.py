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
PACKAGES = ("refpool", "renderer", "generators", "curation", "pool", "studio")

# Lowest first. A module may import its own unit and anything in a lower layer. Within pool/
# the sub-packages are layered the same way (POOL_LAYERS), so each concern stands on the ones
# it needs and no lower one reaches back up.
LAYERS: dict[str, int] = {
    "refpool.core": 0,  # the records, defaults, seeds and the error base: imports nothing
    "refpool": 0,  # the package's __init__: a docstring and a version
    "refpool.core.store": 1,
    "renderer": 1,  # shared by every stage, and usable alone by an RL environment
    "refpool.intake": 2,
    "generators": 3,
    "curation": 4,
    "pool": 5,
    "studio": 6,  # the studio's web code (Gradio tabs, handlers, HTTP edge) over every stage
    "refpool.cli": 6,  # shells over everything
    "refpool.demo": 6,
    "refpool.docgen": 6,  # the docs' reference pages, generated from every layer's tables
    "app": 6,
}
POOL_LAYERS: dict[str, int] = {
    "pool": 0,  # pool/__init__: a docstring
    "pool.catalog": 0,  # PoolEntry and the eligibility rule
    "pool.similarity": 1,  # near-duplicate measurement
    "pool.reward": 2,  # judge, ladder, scorer
    "pool.selection": 3,  # drafts and versions
    "pool.diversity": 4,  # the diversity report
    "pool.dataset": 5,  # export, card, publishing, sampler
    "pool.cli": 6,
    "pool.cli_reward": 6,
    "pool.cli_versions": 6,
}
SHELLS = ("app", "refpool.cli", "refpool.demo", "refpool.docgen")
# The renderer's CLI keeps its renders in the data directory, like every other command.
EXCEPTIONS = {("renderer.cli", "refpool.core.store")}
# What the renderer may import besides itself: the records and the one error base.
RENDERER_MAY_IMPORT = ("renderer", "refpool.core")
MAX_LINES = 400
LONG_FILES_ALLOWED = {"renderer/harness.js"}  # the page's harness reads top to bottom


def _longest_prefix(module: str, table: dict[str, int]) -> str | None:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        name = ".".join(parts[:n])
        if name in table:
            return name
    return None


def unit_of(module: str) -> str | None:
    """The layered unit a dotted module name belongs to (longest prefix in LAYERS)."""
    return _longest_prefix(module, LAYERS)


def pool_unit_of(module: str) -> str | None:
    """The pool sub-package a module belongs to, or None outside pool/."""
    return _longest_prefix(module, POOL_LAYERS) if unit_of(module) == "pool" else None


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
    # `if TYPE_CHECKING:` imports are read by the type checker only, never run
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING")
        for stmt in node.body
        for inner in ast.walk(stmt)
    }
    package = (
        module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    )
    out = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
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


def test_inside_pool_no_concern_imports_a_later_one() -> None:
    wrong = []
    for module, imported in project_imports().items():
        mine = pool_unit_of(module)
        if mine is None:
            continue
        for name, _ in imported:
            theirs = pool_unit_of(name)
            if theirs is None or theirs == mine:
                continue
            if POOL_LAYERS[theirs] > POOL_LAYERS[mine] or (
                POOL_LAYERS[theirs] == POOL_LAYERS[mine] and POOL_LAYERS[mine] < 6
            ):
                wrong.append(f"{module} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_every_pool_module_belongs_to_a_concern() -> None:
    loose = [m for m in project_imports() if unit_of(m) == "pool" and pool_unit_of(m) == "pool"]
    assert loose == ["pool"], loose


def test_the_renderer_imports_nothing_but_the_core_records() -> None:
    wrong = [
        f"{module} imports {name}"
        for module, imported in project_imports().items()
        if unit_of(module) == "renderer"
        for name, _ in imported
        if not name.startswith(RENDERER_MAY_IMPORT)
        or (unit_of(name) == "refpool.core.store" and (module, unit_of(name)) not in EXCEPTIONS)
    ]
    assert not wrong, "\n".join(wrong)


def test_shells_live_on_top_and_nothing_imports_them() -> None:
    """app.py, refpool/cli.py and refpool/demo.py compose every stage; no stage may lean on
    them (a stage's own cli.py is a shell of its package, registered by refpool/cli.py)."""
    wrong = [
        f"{module} imports {name}"
        for module, imported in project_imports().items()
        if unit_of(module) not in SHELLS
        for name, _ in imported
        if unit_of(name) in SHELLS
    ]
    assert not wrong, "\n".join(wrong)
    bottom = [m for m in project_imports() if m.startswith("refpool.core") and m in SHELLS]
    assert not bottom


def test_publishing_does_not_import_the_studio() -> None:
    """Writing a release needs no web UI: the dataset and its card import no curation UI
    module and nothing that starts an event loop of its own."""
    ui = ("curation.views", "curation.service", "studio", "gradio")
    wrong = []
    for module in transitive_imports("pool.dataset.publish") | transitive_imports(
        "pool.dataset.export"
    ):
        for name, _ in project_imports().get(module, []):
            if name.startswith(ui):
                wrong.append(f"{module} imports {name}")
    assert not wrong, "\n".join(wrong)


def test_choosing_candidates_does_not_load_the_llm_client() -> None:
    assert "generators.llm" not in transitive_imports("pool.selection.draft", top_only=True)


def transitive_imports(module: str, top_only: bool = False) -> set[str]:
    """Every project module `module` reaches, lazy imports included unless top_only."""
    imports = project_imports()
    seen: set[str] = set()
    todo = [module]
    while todo:
        node = todo.pop()
        if node in seen:
            continue
        seen.add(node)
        for name, top in imports.get(node, []):
            if top or not top_only:
                todo += [n for n in (name, name.rpartition(".")[0]) if n in imports]
    return seen


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """The first import cycle in a module graph, as a path that ends where it starts."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in path:
            return path[path.index(node) :] + [node]
        if node in done:
            return None
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt != node and (cycle := visit(nxt)):
                return cycle
        path.pop()
        done.add(node)
        return None

    for module in sorted(graph):
        if cycle := visit(module):
            return cycle
    return None


def module_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports, at module scope or lazily inside a function:
    a lazy import still ties the two modules together, it only hides the tie until run time."""
    imports = project_imports()
    return {
        module: {name for name, _ in imported if name in imports}
        for module, imported in imports.items()
    }


def test_no_import_cycles_between_modules_lazy_imports_included() -> None:
    cycle = find_cycle(module_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_cycle_check_sees_a_lazy_import(tmp_path: Path) -> None:
    """The circle that once hid behind a lazy import (selection -> ladder -> versions ->
    selection) is a cycle to this check."""
    lazy = tmp_path / "ladder.py"
    lazy.write_text("def f():\n    from pool.selection.versions import DRAFT\n")
    assert imports_of(lazy) == [("pool.selection.versions", False)]
    graph = {
        "pool.selection.draft": {"pool.reward.ladder"},
        "pool.reward.ladder": {"pool.selection.versions"},
        "pool.selection.versions": {"pool.selection.draft"},
    }
    assert find_cycle(graph) == [
        "pool.reward.ladder",
        "pool.selection.versions",
        "pool.selection.draft",
        "pool.reward.ladder",
    ]


def test_the_layering_check_catches_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from pool.selection.draft import build_pool\nimport curation.ratings\n")
    names = [name for name, _ in imports_of(bad)]
    assert [unit_of(n) for n in names] == ["pool", "curation"]
    assert LAYERS[unit_of(names[0]) or ""] > LAYERS["generators"]


def table_sql(table: str) -> re.Pattern[str]:
    return re.compile(
        rf"(FROM|JOIN|INTO|UPDATE|TABLE)\s+{table}\b|insert\(\s*[\"']{table}[\"']", re.I
    )


@pytest.mark.parametrize("table", ["candidates", "model_calls"])
def test_only_the_record_module_queries_its_table(table: str) -> None:
    store = ROOT / "refpool" / "core" / "store"
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
    files += [*(ROOT / "studio" / "static").glob("*.js"), ROOT / "renderer" / "harness.js"]
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
