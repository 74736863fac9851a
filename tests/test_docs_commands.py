"""The docs' commands run: every ```bash block of the tutorial and the how-to pages.

Each page runs in order in a fresh folder, as a reader would type it, with `refpool` on PATH
and its own data directory. Remote services are the loopback fakes the rest of the suite uses:
the Hub at $HF_ENDPOINT, and the model servers the pages name (vLLM, llama.cpp, Ollama, the HF
router) redirected to one fake OpenAI-compatible server that answers any model in its role.
A renamed flag or a wrong command fails here, not in a reader's terminal.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from docs_blocks import HOMES, Block, read_page, runnable_pages
from fake_vendor import FakeVendor, any_role
from loopback_hub import TOKEN, LoopbackHub

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "refpool" / "intake" / "samples"
BIN = Path(sys.executable).parent
# Where the pages say a model server listens, and the hosted router: all go to the fake.
SERVER_URLS = (
    "http://localhost:8000",
    "http://localhost:8080",
    "http://localhost:11434",
    "http://localhost:30000",
    "https://router.huggingface.co",
)
BLOCK_TIMEOUT_S = 900

pytestmark = pytest.mark.browser


def _refpool(env: dict[str, str], *args: str) -> None:
    subprocess.run([str(BIN / "refpool"), *args], env=env, check=True, capture_output=True)


@pytest.fixture(scope="module")
def vendor() -> Iterator[FakeVendor]:
    with FakeVendor() as fake:
        fake.fallback = any_role
        yield fake


@pytest.fixture
def hub() -> Iterator[LoopbackHub]:
    """A Hub per page, so two pages may publish the same version of `you/...`; the test
    token's user may write to the `you` organisation the pages publish under."""
    hub = LoopbackHub().start()
    hub.orgs["ana"] = ["you"]
    try:
        yield hub
    finally:
        hub.stop()


@pytest.fixture(scope="module")
def homes(tmp_path_factory) -> dict[str, Path]:
    """The starting data directories a page may declare, each made once by the real CLI."""
    base = tmp_path_factory.mktemp("doc-homes")
    env = _env(base, base / "photos", base / "cwd")
    _refpool(env, "photos", "import", str(SAMPLES))
    shutil.copytree(base / "photos", base / "painted")
    env["REFPOOL_HOME"] = str(base / "painted")
    _refpool(env, "generate", "--candidates", "2", "--rounds", "2", "--no-progress")
    (base / "empty").mkdir()
    return {name: base / name for name in HOMES}


def _env(tmp: Path, home: Path, cwd: Path, hub_url: str = "") -> dict[str, str]:
    cwd.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "REFPOOL_"))}
    env |= {
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "REFPOOL_HOME": str(home),
        "REFPOOL_SAMPLES": str(SAMPLES),
        "HF_HOME": str(tmp / "hf-home"),  # no developer login leaks in
        "HF_HUB_DISABLE_XET": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1",
    }
    if "REFPOOL_CHROMIUM" in os.environ:
        env["REFPOOL_CHROMIUM"] = os.environ["REFPOOL_CHROMIUM"]
    if hub_url:
        env |= {"HF_ENDPOINT": hub_url, "HF_TOKEN": TOKEN}
    return env


def _redirect(text: str, vendor_root: str) -> str:
    for url in SERVER_URLS:
        text = text.replace(url, vendor_root)
    return text


def _show(block: Block, done: subprocess.CompletedProcess[str]) -> str:
    return (
        f"{block.page}:{block.line} exited {done.returncode} (expected {block.exit_status})\n"
        f"$ {block.text}\n--- stdout ---\n{done.stdout[-4000:]}\n--- stderr ---\n"
        f"{done.stderr[-4000:]}"
    )


PAGES = [read_page(p) for p in runnable_pages() if p.exists()]


@pytest.mark.parametrize("page", PAGES, ids=[p.path for p in PAGES])
def test_page_commands_run(page, vendor, hub, homes, tmp_path) -> None:
    runnable = [b for b in page.blocks if b.skip is None]
    if not page.blocks:
        pytest.skip("no commands on this page")
    assert page.home in HOMES, (
        f"{page.path}: declare where its commands start, once, on a line of its own:"
        f" <!-- docs-test: home={'|'.join(HOMES)} -->"
    )
    home = tmp_path / "refpool-data"
    if page.home != "empty":
        shutil.copytree(homes[page.home], home)
    env = _env(tmp_path, home, tmp_path / "work", hub.url)
    vendor_root = vendor.base_url.removesuffix("/v1")
    for block in runnable:
        script = _redirect(block.text, vendor_root)
        done = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=tmp_path / "work",
            env=env,
            capture_output=True,
            text=True,
            timeout=BLOCK_TIMEOUT_S,
        )
        assert done.returncode == block.exit_status, _show(block, done)


def test_most_command_blocks_run() -> None:
    """Skipping is for servers, GPUs and the internet; most of what a reader types runs."""
    blocks = [b for page in PAGES for b in page.blocks]
    assert blocks, "no ```bash blocks found in the README, the tutorial and the how-to pages"
    ran = [b for b in blocks if b.skip is None]
    assert len(ran) >= len(blocks) / 2, f"only {len(ran)} of {len(blocks)} blocks run"


@pytest.mark.parametrize(
    "directive",
    ["<!-- docs-test: skip -->", "<!-- docs-test: skip () -->", "<!-- docs-test: exit=x -->"],
)
def test_a_skip_must_say_why_and_a_directive_must_parse(tmp_path, directive) -> None:
    """A block is skipped only with a reason; a malformed directive is an error, never a
    block that silently runs or silently does not."""
    page = tmp_path / "p.md"
    page.write_text(
        f"<!-- docs-test: home=empty -->\n\n{directive}\n```bash\nrefpool studio\n```\n"
    )
    with pytest.raises(ValueError, match="not a docs-test directive"):
        read_page(page)


def test_block_reader_sees_directives(tmp_path) -> None:
    """The reader itself: a skip, an expected exit and the home are all read (else every
    check above would pass vacuously)."""
    page = tmp_path / "p.md"
    page.write_text(
        "<!-- docs-test: home=photos -->\n\n```bash\nrefpool photos list\n```\n\n"
        "<!-- docs-test: skip (starts the studio) -->\n```bash\nrefpool studio\n```\n\n"
        "<!-- docs-test: exit=1 -->\n```bash\nrefpool pool diff 9.9.9 9.9.8\n```\n"
        "```json\n{}\n```\n"
    )
    parsed = read_page(page)
    assert parsed.home == "photos"
    assert [(b.text, b.skip, b.exit_status) for b in parsed.blocks] == [
        ("refpool photos list", None, 0),
        ("refpool studio", "starts the studio", 0),
        ("refpool pool diff 9.9.9 9.9.8", None, 1),
    ]
