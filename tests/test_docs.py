"""The docs cannot drift from the code: generated pages are current, every error and gate code
has a troubleshooting entry, every command has help, and the README stays a front door."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import pkgutil
import re
from pathlib import Path

import pytest

from refpool import docgen
from refpool.cli import build_parser, commands
from refpool.core.contracts import ReleaseRow
from refpool.core.errors import RefpoolError
from refpool.core.release_columns import RELEASE_COLUMN_SOURCES, RELEASE_COLUMNS
from renderer.profiles import CODES

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("refpool", "renderer", "generators", "curation", "pool", "studio")
README_LIMIT = 12 * 1024


def test_generated_reference_pages_are_current() -> None:
    stale = docgen.stale(ROOT)
    assert not stale, f"stale: {stale}; run `python -m refpool.docgen` (or `make docs`)"


def test_a_stale_page_is_caught(tmp_path) -> None:
    docgen.write(tmp_path)
    assert docgen.stale(tmp_path) == []
    page = tmp_path / "docs/reference/cli.md"
    page.write_text(page.read_text().replace("--candidates", "--candidatez", 1))
    assert docgen.stale(tmp_path) == ["docs/reference/cli.md"]


def test_release_columns_describe_every_field_in_order() -> None:
    assert list(RELEASE_COLUMNS) == [f.name for f in dataclasses.fields(ReleaseRow)]
    assert list(RELEASE_COLUMN_SOURCES) == list(RELEASE_COLUMNS)  # each says where it comes from


def test_every_command_and_option_has_help() -> None:
    """As sqlite-utils checks: a command or option without help is a hole in the reference."""
    missing = []
    for words, summary, parser in commands(build_parser()):
        if not summary:
            missing.append(" ".join(words))
        missing += [
            f"{' '.join(words)} {action.option_strings or action.dest}"
            for action in parser._actions
            if not action.help
            and action.dest != "help"
            and not isinstance(action, argparse._SubParsersAction)
        ]
    assert not missing, missing


def _error_classes() -> set[type]:
    for package in PACKAGES:
        module = importlib.import_module(package)
        for info in pkgutil.walk_packages(module.__path__, package + "."):
            if info.name.endswith("__main__"):
                continue
            importlib.import_module(info.name)
    seen: set[type] = set()
    todo = [RefpoolError]
    while todo:
        cls = todo.pop()
        if cls.__module__.split(".")[0] in PACKAGES and cls not in seen:
            seen.add(cls)
            todo += cls.__subclasses__()
    return seen


def _headings(page: str) -> str:
    text = (ROOT / "docs" / page).read_text("utf-8")
    return "\n".join(line for line in text.splitlines() if line.startswith("#"))


def test_troubleshooting_has_a_heading_for_every_error_and_gate_code() -> None:
    headings = _headings("troubleshooting.md")
    names = sorted(cls.__name__ for cls in _error_classes())
    assert "RefpoolError" in names and "ModelsFileError" in names  # the walk found them
    missing = [n for n in names if f"`{n}`" not in headings]
    missing += [code for code in CODES if f"`{code}`" not in headings]
    missing += [w for w in ("infra_error",) if f"`{w}`" not in headings]
    assert not missing, f"docs/troubleshooting.md has no heading for: {missing}"


def _nav_pages() -> list[str]:
    text = (ROOT / "mkdocs.yml").read_text("utf-8")
    return re.findall(r":\s+([\w/.-]+\.md)\s*$", text, re.M)


def test_every_page_is_in_the_nav_and_exists() -> None:
    nav = _nav_pages()
    on_disk = sorted(str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md"))
    assert sorted(nav) == on_disk


def test_readme_is_a_front_door() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert len(readme.encode()) <= README_LIMIT, f"README is {len(readme.encode())} bytes"
    linked = set(re.findall(r"\]\((docs/[\w/.-]+\.md)", readme))
    unlinked = [p for p in _nav_pages() if f"docs/{p}" not in linked]
    assert not unlinked, f"the README does not link to: {unlinked}"
    for command in ("make demo", "make test"):
        assert command in readme


@pytest.mark.parametrize("page", ["tutorial.md", "index.md"])
def test_pictures_the_docs_show_exist(page) -> None:
    text = (ROOT / "docs" / page).read_text("utf-8")
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", text)
    assert images, f"{page} shows no picture"
    assert all((ROOT / "docs" / img).is_file() for img in images), images
