"""Shared fixtures: every test runs in its own data directory; one warm browser per session."""

from __future__ import annotations

import shutil
from pathlib import Path

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
