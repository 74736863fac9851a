"""Per-image features for selection and the diversity report, cached by PNG sha256.

Features depend only on the pixels, so they are computed once per PNG and kept in the
`image_features` table (migration m004). A report over 1,000 images then reads rows instead
of decoding 1,000 PNGs. Bump FEATURE_VERSION when the computation changes: stale rows are
recomputed on the next read.
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
import sys
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import imagehash
import numpy as np
from PIL import Image
from tqdm import tqdm

from pool.similarity import distance as similarity
from refpool.core.errors import MissingFile
from refpool.core.store import Store
from renderer.gate import paint_mask

FEATURE_VERSION = (
    3  # 2: dHash replaced pHash; 3: the similarity signature (pool/similarity/distance.py)
)
HUE_BINS = 36  # 10 degrees each
RGB_LEVELS = 8  # 8 x 8 x 8 colour histogram bins; one more bin for "no paint at all"
COLOUR_BINS = RGB_LEVELS**3 + 1
SAT_MIN, VAL_MIN = 64, 51  # "saturated": S >= 0.25 and V >= 0.2 (PIL HSV is 0..255)
THUMB_PX = 96
_PARALLEL_MIN = 64  # below this, a process pool costs more than it saves
_SAVE_BATCH = 500  # rows per transaction while features are computed


def hex_colour(rgb: Iterable[int]) -> str:
    r, g, b = (int(c) for c in rgb)
    return f"#{r:02x}{g:02x}{b:02x}"


@dataclass(frozen=True)
class ImageFeatures:
    png_sha: str
    phash: int  # 64-bit perceptual hash (imagehash dHash; the name predates the switch)
    hue_hist: np.ndarray  # float32[HUE_BINS], share of all pixels
    colour_hist: np.ndarray  # float32[COLOUR_BINS], share of paint pixels
    palette: list[tuple[str, float]]  # up to 5 (hex, share of paint)
    thumb: bytes  # JPEG
    signature: similarity.Signature  # colour, layout, texture: what near-duplicates compare

    @property
    def saturated_share(self) -> float:
        return float(self.hue_hist.sum())


def _flatten_alpha(img: Image.Image) -> Image.Image:
    if img.mode in ("RGBA", "LA", "P"):
        img = img.convert("RGBA")
        ground = Image.new("RGB", img.size, (255, 255, 255))
        ground.paste(img, mask=img.getchannel("A"))  # composite over white, as the gate does
        return ground
    return img.convert("RGB")


def compute_features(png: bytes | Path, png_sha: str = "") -> ImageFeatures:
    """Decode one PNG and measure it. Pure: no store access (runs in worker processes)."""
    with Image.open(io.BytesIO(png) if isinstance(png, bytes) else png) as raw:
        img = _flatten_alpha(raw)
    # Work on a reduced copy: 64 px keeps hue/colour shares and is ~50x cheaper than 600 px.
    factor = max(1, min(img.size) // 128)
    reduced = img.reduce(factor) if factor > 1 else img
    # Kept for comparison (pool/similarity/threshold.py measures it beside the signature): near-duplicates
    # use the signature, since on paintings the hash sees mostly paper and a centred blob.
    phash = int(str(imagehash.dhash(reduced)), 16)
    # Sample (not average) pixels: averaging would invent mixed colours at every edge.
    small = img.resize((64, 64), Image.Resampling.NEAREST)
    rgb = np.asarray(small, dtype=np.int32).reshape(-1, 3)
    n = rgb.shape[0]

    paint = paint_mask(rgb)[0]  # the gate's rule: most common colour is the ground

    hsv = np.asarray(small.convert("HSV"), dtype=np.int32).reshape(-1, 3)
    saturated = (hsv[:, 1] >= SAT_MIN) & (hsv[:, 2] >= VAL_MIN)
    hue_bins = hsv[saturated, 0] * HUE_BINS // 256
    hue_hist = np.bincount(hue_bins, minlength=HUE_BINS).astype(np.float32) / n

    colour_hist = np.zeros(COLOUR_BINS, dtype=np.float32)
    palette: list[tuple[str, float]] = []
    painted = rgb[paint]
    if len(painted):
        b = painted >> 5
        bins = (b[:, 0] * RGB_LEVELS + b[:, 1]) * RGB_LEVELS + b[:, 2]
        counts = np.bincount(bins, minlength=RGB_LEVELS**3)
        colour_hist[: RGB_LEVELS**3] = counts / len(painted)
        for k in np.argsort(counts)[::-1][:5]:
            if counts[k] == 0:
                break
            mean = painted[bins == k].mean(axis=0).round().astype(int)
            palette.append((hex_colour(mean), round(float(counts[k] / len(painted)), 4)))
    else:
        colour_hist[-1] = 1.0  # a blank image is its own colour class

    thumb_img = img.copy()
    thumb_img.thumbnail((THUMB_PX, THUMB_PX))
    buf = io.BytesIO()
    thumb_img.save(buf, "JPEG", quality=82)
    sig = similarity.signature(img)
    return ImageFeatures(png_sha, phash, hue_hist, colour_hist, palette, buf.getvalue(), sig)


def _compute_from_path(args: tuple[str, str]) -> ImageFeatures:
    sha, path = args
    return compute_features(Path(path), sha)


def _from_row(row: sqlite3.Row) -> ImageFeatures:
    return ImageFeatures(
        png_sha=row["png_sha"],
        phash=int(row["phash"], 16),
        hue_hist=np.frombuffer(row["hue_hist"], dtype=np.float32),
        colour_hist=np.frombuffer(row["colour_hist"], dtype=np.float32),
        palette=[(str(c), float(s)) for c, s in json.loads(row["palette"])],
        thumb=bytes(row["thumb"]),
        signature=similarity.Signature.from_bytes(bytes(row["signature"])),
    )


def _save(store: Store, feats: list[ImageFeatures]) -> None:
    rows = [
        (
            f.png_sha,
            FEATURE_VERSION,
            f"{f.phash:016x}",
            f.hue_hist.astype(np.float32).tobytes(),
            f.colour_hist.astype(np.float32).tobytes(),
            json.dumps(f.palette),
            f.thumb,
            f.signature.to_bytes(),
        )
        for f in feats
    ]
    with store.transaction() as db:
        db.executemany(
            "INSERT OR REPLACE INTO image_features"
            " (png_sha, version, phash, hue_hist, colour_hist, palette, thumb, signature)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )


def measurable(store: Store, png_sha: str) -> bool:
    """Whether features of this PNG can be had now: its file exists, or they are cached at the
    current FEATURE_VERSION."""
    if store.png_path(png_sha).exists():
        return True
    sql = "SELECT 1 FROM image_features WHERE png_sha = ? AND version = ?"
    return bool(store.query(sql, (png_sha, FEATURE_VERSION)))


def load_features(
    store: Store, png_shas: Iterable[str], progress: bool = True
) -> dict[str, ImageFeatures]:
    """Features for each sha, from the cache or computed (and cached) now.

    Raises FileNotFoundError naming the missing PNGs if a file is gone and not cached.
    """
    wanted = sorted(set(png_shas))
    found: dict[str, ImageFeatures] = {}
    sql = "SELECT * FROM image_features WHERE version = ? AND png_sha IN ({marks})"
    for row in store.query_in(sql, wanted, (FEATURE_VERSION,)):
        found[row["png_sha"]] = _from_row(row)
    missing = [s for s in wanted if s not in found]
    if not missing:
        return found
    absent = [s for s in missing if not store.png_path(s).exists()]
    if absent:
        raise MissingFile(
            f"{len(absent)} PNG file(s) are missing from {store.home / 'blobs' / 'png'} and have no"
            f" cached features (first: {absent[0][:12]}). Re-render those candidates or restore the files."
        )
    jobs = [(s, str(store.png_path(s))) for s in missing]
    bar = tqdm(
        total=len(jobs), desc="image features", unit="img", file=sys.stderr, disable=not progress
    )
    batch: list[ImageFeatures] = []

    def keep(feat: ImageFeatures) -> None:
        # Saved in batches as they come: one transaction per batch, and an interrupted run
        # keeps what it measured.
        batch.append(feat)
        found[feat.png_sha] = feat
        bar.update()
        if len(batch) >= _SAVE_BATCH:
            _save(store, batch)
            batch.clear()

    if len(jobs) >= _PARALLEL_MIN:
        with ProcessPoolExecutor(max_workers=os.cpu_count() or 1) as pool:  # every core
            for feat in pool.map(_compute_from_path, jobs, chunksize=16):
                keep(feat)
    else:
        for job in jobs:
            keep(_compute_from_path(job))
    bar.close()
    _save(store, batch)
    return found
