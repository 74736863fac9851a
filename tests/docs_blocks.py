"""The docs' shell blocks, read the way tests/test_docs_commands.py runs them.

A page that has ```bash blocks declares where it starts, on a line of its own:
`<!-- docs-test: home=empty|photos|painted -->`. The line right before a block may say
`<!-- docs-test: skip (why) -->` (a server that never exits, a GPU, the real internet) or
`<!-- docs-test: exit=N -->` (the block shows a failure on purpose).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
HOMES = ("empty", "photos", "painted")
_HOME = re.compile(r"^<!-- docs-test: home=(\w+) -->\s*$", re.M)
_DIRECTIVE = re.compile(r"^<!-- docs-test: (skip \(.+\)|exit=\d+) -->\s*$")
_ANY_DIRECTIVE = "<!-- docs-test:"
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w-]*)")


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # 1-based line of the opening fence
    text: str
    skip: str | None  # why it is not run
    exit_status: int


@dataclass(frozen=True)
class Page:
    path: str
    home: str | None
    blocks: tuple[Block, ...]


def runnable_pages() -> list[Path]:
    """The pages whose commands a reader types: the README, the tutorial and every how-to."""
    return [ROOT / "README.md", DOCS / "tutorial.md", *sorted((DOCS / "how-to").glob("*.md"))]


def read_page(path: Path) -> Page:
    text = path.read_text("utf-8")
    rel = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    homes = _HOME.findall(text)
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        fence = _FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        indent, marker, lang = fence.groups()
        end = i + 1
        while end < len(lines) and not lines[end].strip().startswith(marker):
            end += 1
        if lang == "bash":
            before = lines[i - 1].strip() if i else ""
            directive = _DIRECTIVE.match(before)
            if before.startswith(_ANY_DIRECTIVE) and not directive:  # e.g. a skip with no why
                raise ValueError(f"{rel}:{i}: not a docs-test directive: {before}")
            skip = exit_status = None
            if directive and directive.group(1).startswith("skip"):
                skip = directive.group(1)[6:-1]
            elif directive:
                exit_status = int(directive.group(1).split("=")[1])
            body = "\n".join(line.removeprefix(indent) for line in lines[i + 1 : end])
            blocks.append(Block(rel, i + 1, body, skip, exit_status or 0))
        i = end + 1
    return Page(rel, homes[0] if len(homes) == 1 else None, tuple(blocks))
