"""Shared fixtures: every test runs in its own data directory; one warm browser per session."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path
from typing import NamedTuple

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "refpool" / "intake" / "samples"
SKETCHES = ROOT / "tests" / "sketches"


@pytest.fixture(autouse=True)
def refpool_home(tmp_path, monkeypatch) -> Path:
    """Point REFPOOL_HOME at a fresh temporary folder (never the user's data)."""
    home = tmp_path / "refpool-data"
    monkeypatch.setenv("REFPOOL_HOME", str(home))
    for secret in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "OPENAI_API_KEY"):
        monkeypatch.delenv(secret, raising=False)
    return home


@pytest.fixture
def store(refpool_home):
    from refpool.core.store import Store

    s = Store(refpool_home)
    yield s
    s.close()


@pytest.fixture
def sample_photos(tmp_path) -> Path:
    """A writable copy of the three CC BY 2.0 sample photos with their photos.csv."""
    dest = tmp_path / "photos"
    shutil.copytree(SAMPLES, dest)
    return dest


@pytest.fixture(scope="session")
def renderer():
    """One warm Chromium shared by every test (a SyncRenderer: usable from sync tests)."""
    from renderer import RenderConfig, SyncRenderer

    with SyncRenderer(RenderConfig(slots=2, deadline_s=20)) as r:
        yield r


@pytest.fixture
def fast_retries(monkeypatch) -> None:
    """Retries after hundredths of a second: tests of failing vendors wait for nothing."""
    from generators import llm

    monkeypatch.setattr(llm, "RETRY_BASE_S", 0.01)


@pytest.fixture
def photo_id(store, sample_photos) -> int:
    """The sample photos imported; the id of the first."""
    from refpool.intake.photos import import_folder

    import_folder(store, sample_photos)
    return store.query("SELECT id FROM photos ORDER BY id LIMIT 1")[0]["id"]


class CliRun(NamedTuple):
    code: int  # the exit status
    out: str
    err: str


@pytest.fixture
def cli(monkeypatch, renderer, capsys):
    """`refpool ...` in-process, rendering with the shared warm browser: a CliRun of the exit
    status and what it printed (a fresh Chromium per run would add nothing but time)."""
    from generators import batch
    from refpool.cli import main

    monkeypatch.setattr(batch, "generate", functools.partial(batch.generate, renderer=renderer))

    def run(*argv: object) -> CliRun:
        code = main([str(a) for a in argv])
        printed = capsys.readouterr()
        return CliRun(code, printed.out, printed.err)

    return run
