"""Test data built straight into a real store: photos and candidates with real PNG files.

For tests of curation and the pool that must not wait on the browser.
"""

from __future__ import annotations

import colorsys
import random

from PIL import Image, ImageDraw

from refpool.core.store import Store, candidates, sha256_bytes


def png_bytes(hue: float, size: int = 96, seed: int = 0, blobs: int = 6) -> bytes:
    """A watercolour-ish stand-in: pale ground and a few translucent discs of one hue."""
    import io

    rng = random.Random(seed)
    img = Image.new("RGB", (size, size), (246, 239, 226))
    draw = ImageDraw.Draw(img, "RGBA")
    for _ in range(blobs):
        r, g, b = colorsys.hsv_to_rgb(hue % 1.0, rng.uniform(0.4, 0.9), rng.uniform(0.5, 0.95))
        cx, cy, rad = (
            rng.uniform(0.3, 0.7) * size,
            rng.uniform(0.3, 0.7) * size,
            rng.uniform(0.1, 0.3) * size,
        )
        draw.ellipse(
            (cx - rad, cy - rad, cx + rad, cy + rad),
            fill=(int(r * 255), int(g * 255), int(b * 255), 150),
        )
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def add_photo(
    store: Store,
    name: str = "rose.jpg",
    licence: str = "CC-BY",
    author: str = "someone",
    url: str = "https://example.org/photo/1",
) -> int:
    data = png_bytes(0.0, seed=hash(name) % 1000)
    sha = store._write_blob("png", data)
    return store.insert(
        "photos",
        {
            "sha256": sha_of(name),
            "file_name": name,
            "path": str(store.png_path(sha).relative_to(store.home)),
            "licence": licence,
            "licence_version": "2.0",
            "author": author,
            "source_url": url,
            "width": 96,
            "height": 96,
            "phash": "0" * 16,
            "subject": name.split(".")[0],
        },
    )


def sha_of(name: str) -> str:
    return sha256_bytes(name.encode())


def add_candidate(
    store: Store,
    photo_id: int,
    generator: str = "procedural",
    round_: int = 0,
    hue: float = 0.0,
    seed: int = 0,
    parent_id: int | None = None,
    accepted: bool = True,
    coverage: float = 0.25,
) -> int:
    png_sha = store.put_png(png_bytes(hue, seed=seed))
    program_sha = store.put_program(
        f"// test program {photo_id} {generator} {round_} {seed} {hue}\n"
    )
    return candidates.save(
        store,
        {
            "job_key": f"test/{photo_id}/{generator}/{seed}/{round_}/{hue}",
            "photo_id": photo_id,
            "generator": generator,
            "round": round_,
            "seed": seed,
            "parent_id": parent_id,
            "program_sha": program_sha,
            "accepted": int(accepted),
            "coverage": coverage,
            "png_sha": png_sha,
            "critique": {
                "critic": "heuristic",
                "scores": {"fidelity": 6.0},
                "advice": "more bleed",
                "summary": "",
            },
        },
    )


def populate(
    store: Store, n: int = 12, photos: int = 3, models: tuple[str, ...] = ("procedural", "glm-x")
) -> list[int]:
    """n accepted candidates spread over photos, models and hues; returns their ids."""
    photo_ids = [
        add_photo(store, f"flower{i}.jpg", url=f"https://example.org/{i}") for i in range(photos)
    ]
    return [
        add_candidate(
            store,
            photo_ids[i % photos],
            models[i % len(models)],
            round_=i % 3,
            hue=(i * 0.137) % 1.0,
            seed=i,
        )
        for i in range(n)
    ]
