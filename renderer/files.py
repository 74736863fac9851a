"""Rendering sketch files: read each one, unwrap a model reply's ```js block, render in parallel.

`refpool render` is a shell over `render_files`; anything else that renders files from disk
can use it the same way (results arrive as they finish, each saying which file it was).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from refpool.core.contracts import Render
from refpool.core.errors import RefpoolError
from refpool.core.text import repair_data
from renderer.engine import Renderer
from renderer.extract import extract_program
from renderer.jsfacts import StaticPassUnavailable


class UnreadableFile(RefpoolError, ValueError):
    """The file is missing or is not text; the message says which, for the user."""


@dataclass(frozen=True)
class FileRender:
    """One file's outcome: its render, why it could not be read (`unreadable`), or why our
    machinery could not judge it (`failed`, e.g. the static pass broke)."""

    index: int  # position in the list of files given
    file: str  # as given
    source: str | None = None
    render: Render | None = None
    unreadable: str | None = None
    failed: str | None = None

    @property
    def path(self) -> Path:
        return Path(self.file)


def read_program(path: Path) -> str:
    """The program in a file; a model reply is unwrapped from its ```js block.

    A reply without a usable block gives "" (the gate then reports an empty program).
    Raises UnreadableFile for a missing or binary file.
    """
    if not path.is_file():
        raise UnreadableFile(f"file not found: {path}")
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UnreadableFile(
            f"{path} is not UTF-8 text (binary file?); pass a .js sketch"
        ) from None
    if "\x00" in text:
        raise UnreadableFile(f"{path} contains NUL bytes (binary file?); pass a .js sketch")
    if "```" in text:
        return extract_program(text) or ""
    return text


def repaired(result: Render) -> Render:
    """The render with every string valid Unicode (a sketch's console may hold lone
    surrogates), so the store, files and terminals that take it never refuse it."""
    return Render.from_dict({**repair_data(result.to_dict()), "png": result.png})


async def render_files(
    renderer: Renderer, files: Sequence[str], *, seed: int = 0
) -> AsyncIterator[FileRender]:
    """Read and render every file at once on a started renderer; yield each as it finishes."""

    async def one(index: int, name: str) -> FileRender:
        try:
            source = read_program(Path(name))
        except UnreadableFile as exc:
            return FileRender(index, name, unreadable=str(exc))
        try:
            return FileRender(
                index, name, source, repaired(await renderer.render(source, seed=seed))
            )
        except StaticPassUnavailable as exc:  # ours, and it ends only this file's judging
            return FileRender(index, name, source, failed=f"the static pass failed: {exc}")

    jobs = [asyncio.ensure_future(one(i, name)) for i, name in enumerate(files)]
    try:
        for finished in asyncio.as_completed(jobs):
            yield await finished
    finally:
        for job in jobs:  # the caller stopped early: do not leave renders running
            job.cancel()
