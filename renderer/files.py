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
from renderer.engine import Renderer
from renderer.extract import extract_program


class UnreadableFile(RefpoolError, ValueError):
    """The file is missing or is not text; the message says which, for the user."""


@dataclass(frozen=True)
class FileRender:
    """One file's outcome: its render, or why it could not be read (`unreadable`)."""

    index: int  # position in the list of files given
    file: str  # as given
    source: str | None = None
    render: Render | None = None
    unreadable: str | None = None

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


async def render_files(
    renderer: Renderer, files: Sequence[str], *, seed: int = 0
) -> AsyncIterator[FileRender]:
    """Read and render every file at once on a started renderer; yield each as it finishes."""

    async def one(index: int, name: str) -> FileRender:
        try:
            source = read_program(Path(name))
        except UnreadableFile as exc:
            return FileRender(index, name, unreadable=str(exc))
        return FileRender(index, name, source, await renderer.render(source, seed=seed))

    jobs = [asyncio.ensure_future(one(i, name)) for i, name in enumerate(files)]
    try:
        for finished in asyncio.as_completed(jobs):
            yield await finished
    finally:
        for job in jobs:  # the caller stopped early: do not leave renders running
            job.cancel()
