"""Make the documentation's images from a real run: docs/images/*.png.

Why a script: the screenshots must show what refpool really draws today, and be remade the
same way whenever the studio or the report changes. In a temporary data directory it runs the
offline demo (as `refpool demo --no-studio` does), rates with two curators, builds a draft,
writes the diversity report, releases and exports a version, starts the studio and
photographs it with Playwright in /usr/bin/chromium at 1366x768, then composes the pipeline
strip with Pillow. Nothing outside --out is written; the data directory is deleted after.

    .venv/bin/python scripts/docs_images.py [--out docs/images] [--candidates 3] [--rounds 3]
"""

from __future__ import annotations

import argparse
import io
import os
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

WIDTH, HEIGHT = 1366, 768  # the smallest screen the studio is laid out for
CHROMIUM = "/usr/bin/chromium"
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"]
BUDGET = 250_000  # bytes per image
REPO = "you/watercolour-pool"
# Two curators' ratings, cycled over the candidates: mostly the same, sometimes not.
YOU = ("love", "okay", "okay", "love", "reject", "okay")
SAM = ("love", "okay", "love", "love", "okay", "reject")
LEFT_FOR_THE_STUDIO = 3  # candidates "you" has not rated when the studio opens


@dataclass
class Run:
    """What the pipeline strip and the screenshots need from the run."""

    home: Path
    photo: Path  # the photo of the painting the studio shows first
    painting: Path  # a render PNG of that photo
    report: Path
    release_files: list[tuple[str, int]]
    version: str
    pool_target: int


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def save(img: Image.Image, path: Path) -> int:
    """Write an optimised PNG; fall back to 256 colours when it is over the budget."""
    img = img.convert("RGB")
    buf = io.BytesIO()
    img.save(buf, "PNG", optimize=True)
    if buf.tell() > BUDGET:
        buf = io.BytesIO()
        img.quantize(256, method=Image.Quantize.MEDIANCUT).save(buf, "PNG", optimize=True)
    path.write_bytes(buf.getvalue())
    return buf.tell()


def pipeline_run(home: Path, n_candidates: int, rounds: int) -> Run:
    """The offline demo, two curators' ratings, a draft, its report and a released version."""
    from curation.ratings import record_rating
    from pool.dataset.export import export_version
    from pool.dataset.release import release
    from pool.diversity.report import write_report
    from pool.selection.draft import build_pool, save_draft
    from pool.selection.versions import DRAFT, resolve_tiers
    from refpool.core.store import Store, candidates
    from refpool.core.store.photos import get_photo, photo_file
    from refpool.demo import run_demo

    store = Store(home)
    run_demo(store, n_candidates, rounds, progress=False, log=print)
    ids = candidates.list_ids(store, accepted=True)
    rated = ids[:-LEFT_FOR_THE_STUDIO]
    for i, cid in enumerate(rated):
        record_rating(store, cid, "you", YOU[i % len(YOU)])
        record_rating(store, cid, "sam", SAM[i % len(SAM)])
    probe = build_pool(store, target=len(rated))  # what the ratings allow, half love
    target = 2 * min(probe.count("love"), probe.count("okay"))
    save_draft(store, build_pool(store, target=target))
    report = write_report(
        store, home / "report.html", resolve_tiers(store, DRAFT), DRAFT, progress=False
    )
    pv = release(store, notes="first pool", repo_id=REPO)
    export = export_version(store, home / "export", pv.version, progress=False)
    first = candidates.get(store, ids[-LEFT_FOR_THE_STUDIO])
    assert first is not None and first.png_sha
    photo = photo_file(store, get_photo(store, first.photo_id))
    store.close()
    return Run(
        home,
        photo,
        store.png_path(first.png_sha),
        report.html_path,
        export.files,
        pv.version,
        target,
    )


@contextmanager
def studio(home: Path) -> Iterator[str]:
    """The studio on `home`, as `refpool studio` starts it; yields its URL."""
    from app import launch
    from curation.service import Services, Settings
    from refpool.core.store import Store

    store = Store(home)
    demo, url = launch(
        Services(store, Settings()), port=free_port(), prevent_thread_lock=True, quiet=True
    )
    try:
        yield url
    finally:
        demo.close()
        store.close()


def wait_images(page: Any) -> None:
    page.wait_for_function(
        "[...document.querySelectorAll('#rp-view img')].every(i => i.complete && i.naturalWidth)"
    )


def screenshots(run: Run, out: Path) -> dict[str, Image.Image]:
    """studio.png, studio-agreement.png, studio-pool.png and report.png, as Pillow images."""
    from playwright.sync_api import sync_playwright

    shots: dict[str, Image.Image] = {}

    def grab(page: Any, name: str) -> None:
        page.wait_for_timeout(400)  # let Gradio's transitions settle
        shots[name] = Image.open(io.BytesIO(page.screenshot())).convert("RGB")

    with sync_playwright() as p, studio(run.home) as url:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        page.goto(f"{url}?curator=you")
        page.wait_for_function(
            "document.getElementById('rp-view')?.dataset.curator === 'you' && window.rp"
        )
        nonce = page.evaluate("document.getElementById('rp-view').dataset.nonce")
        page.keyboard.press("1")  # rate one in the studio: love
        page.wait_for_function(
            "n => !rp.busy && document.getElementById('rp-view').dataset.nonce !== n", arg=nonce
        )
        wait_images(page)
        grab(page, "studio.png")

        page.get_by_role("tab", name="Agreement").click()
        page.wait_for_selector("#rp-agreement td.rp-kappa")
        grab(page, "studio-agreement.png")

        page.get_by_role("tab", name="Pool").click()
        page.fill("#rp-pool-target input", str(run.pool_target))
        page.click("#rp-pool-btn")
        page.wait_for_selector("#rp-pool-total")
        page.frame_locator("iframe.rp-report-frame").locator("h1").wait_for()
        page.evaluate("document.querySelector('[role=tablist]').scrollIntoView()")
        grab(page, "studio-pool.png")

        report = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        report.goto(run.report.as_uri())
        report.wait_for_load_state("load")
        grab(report, "report.png")
        browser.close()
    for name, img in shots.items():
        print(f"{name}: {save(img, out / name):,d} bytes")
    return shots


def font(size: int, mono: bool = False) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    """DejaVu where the machine has it, else Pillow's own font."""
    name = "DejaVuSansMono.ttf" if mono else "DejaVuSans.ttf"
    path = Path("/usr/share/fonts/truetype/dejavu") / name
    if path.exists():
        return ImageFont.truetype(str(path), size)
    return ImageFont.load_default(size)


def fit(img: Image.Image, box: tuple[int, int]) -> Image.Image:
    """Scale to cover `box`, then crop the middle."""
    scale = max(box[0] / img.width, box[1] / img.height)
    scaled = img.resize(
        (round(img.width * scale), round(img.height * scale)), Image.Resampling.LANCZOS
    )
    left, top = (scaled.width - box[0]) // 2, (scaled.height - box[1]) // 2
    return scaled.crop((left, top, left + box[0], top + box[1]))


def release_panel(run: Run, size: tuple[int, int]) -> Image.Image:
    """The exported release's files, listed as a terminal would show them."""
    panel = Image.new("RGB", size, (32, 34, 38))
    draw = ImageDraw.Draw(panel)
    mono = font(12, mono=True)
    lines = [f"v{run.version}  {REPO}", ""]
    paths = sorted(path for path, _ in run.release_files)
    for folder in ("images/", "sources/"):
        inside = [p for p in paths if p.startswith(folder)]
        lines += inside[:2] + ([f"  ({len(inside)} files)"] if len(inside) > 2 else [])
    lines += [p for p in paths if "/" not in p]
    for i, line in enumerate(lines):
        colour = (250, 210, 120) if i == 0 else (220, 224, 230)
        draw.text((10, 10 + 17 * i), line, font=mono, fill=colour)
    return panel


def pipeline(run: Run, shots: dict[str, Image.Image], out: Path) -> None:
    """photo -> painting -> studio -> report -> release, one strip with captions."""
    height, gap, arrow = 210, 12, 28
    panels = [  # (title, caption, image); each crop has its tile's proportions
        ("photo", "an openly licensed photo", fit(Image.open(run.photo), (210, height))),
        ("painting", "a p5.brush program, rendered", fit(Image.open(run.painting), (210, height))),
        (
            "studio",
            "curators rate love / okay / reject",
            fit(shots["studio.png"].crop((80, 185, 880, 764)), (290, height)),
        ),
        (
            "report",
            "a diversity report on the draft",
            fit(shots["report.png"].crop((125, 20, 800, 636)), (230, height)),
        ),
        ("release", "a versioned Hub dataset", release_panel(run, (262, height))),
    ]
    width = sum(img.width for _, _, img in panels) + (len(panels) - 1) * (2 * gap + arrow)
    strip = Image.new("RGB", (width + 2 * gap, height + 80), "white")
    draw = ImageDraw.Draw(strip)
    title, caption, ink = font(17), font(13), (60, 60, 60)
    x = gap
    for i, (name, words, img) in enumerate(panels):
        strip.paste(img, (x, gap))
        draw.rectangle((x, gap, x + img.width - 1, gap + height - 1), outline=(190, 190, 190))
        middle = x + img.width // 2
        draw.text((middle, gap + height + 10), name, font=title, fill=(20, 20, 20), anchor="ma")
        draw.text((middle, gap + height + 34), words, font=caption, fill=(90, 90, 90), anchor="ma")
        x += img.width
        if i < len(panels) - 1:
            y, tip = gap + height // 2, x + gap + arrow
            draw.line((x + gap, y, tip - 4, y), fill=ink, width=3)
            draw.polygon([(tip, y), (tip - 10, y - 7), (tip - 10, y + 7)], fill=ink)
            x += 2 * gap + arrow
    print(f"pipeline.png: {save(strip, out / 'pipeline.png'):,d} bytes")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs/images"), help="image folder")
    parser.add_argument("--candidates", type=int, default=3, help="per photo (the demo's 3)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds (the demo's 3)")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).exists():
        print(f"error: {CHROMIUM} is missing (scripts/setup.sh installs it)", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="refpool-docs-") as tmp:
        os.environ["REFPOOL_HOME"] = tmp  # anything that opens the default store opens this one
        run = pipeline_run(Path(tmp), args.candidates, args.rounds)
        shots = screenshots(run, args.out)
        pipeline(run, shots, args.out)
    total = sum(f.stat().st_size for f in args.out.glob("*.png"))
    print(f"{total:,d} bytes in {args.out}, {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
