"""Benchmark: the near-duplicate distance between photos, on copies a user is likely to have and
on distinct photos, and the threshold between them (refpool/intake/near_duplicates.py).

Same pairs: each source photo against its half-size and third-size copies, JPEG recompressions
(quality 30 and 60), crops keeping 95 %, 90 % and 85 % of each side at a corner or the centre,
a 90 %-width crop (another aspect), and a half-size, recompressed 90 % crop. Different pairs:
every copy of one source against every other source. Sources: the bundled samples,
/work/shared/photos, and any folder given with --photos (one image per distinct photo).
Prints every distance, old (one whole-frame phash) and new, and the gap the threshold sits in.

    .venv/bin/python bench/photo_near_duplicates.py [--photos DIR ...]
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Callable
from pathlib import Path

import imagehash
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from refpool.intake import near_duplicates as nd  # noqa: E402
from refpool.intake.photos import normalise_image  # noqa: E402

SUFFIXES = {".jpg", ".jpeg", ".png", ".webp"}
DEFAULT_SOURCES = [
    Path(__file__).resolve().parent.parent / "refpool" / "intake" / "samples",
    Path("/work/shared/photos"),
]


def _jpeg(img: Image.Image, quality: int = 92) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def _crop(share: float, where: str) -> Callable[[Image.Image], Image.Image]:
    def cut(img: Image.Image) -> Image.Image:
        w, h = img.size
        cw, ch = round(w * share), round(h * share)
        x = {"corner": 0, "centre": (w - cw) // 2, "far": w - cw}[where]
        y = {"corner": 0, "centre": (h - ch) // 2, "far": h - ch}[where]
        return img.crop((x, y, x + cw, y + ch))

    return cut


def _resize(share: float) -> Callable[[Image.Image], Image.Image]:
    def shrink(img: Image.Image) -> Image.Image:
        w, h = img.size
        return img.resize((round(w * share), round(h * share)), Image.Resampling.LANCZOS)

    return shrink


COPIES: dict[str, Callable[[Image.Image], bytes]] = {
    "half size": lambda im: _jpeg(_resize(0.5)(im)),
    "third size": lambda im: _jpeg(_resize(1 / 3)(im)),
    "jpeg q30": lambda im: _jpeg(im, 30),
    "jpeg q60": lambda im: _jpeg(im, 60),
    "crop 95% corner": lambda im: _jpeg(_crop(0.95, "corner")(im)),
    "crop 90% corner": lambda im: _jpeg(_crop(0.9, "corner")(im)),
    "crop 90% far corner": lambda im: _jpeg(_crop(0.9, "far")(im)),
    "crop 90% centre": lambda im: _jpeg(_crop(0.9, "centre")(im)),
    "crop 85% centre": lambda im: _jpeg(_crop(0.85, "centre")(im)),
    "crop 85% corner": lambda im: _jpeg(_crop(0.85, "corner")(im)),
    "90% width": lambda im: _jpeg(im.crop((0, 0, round(im.size[0] * 0.9), im.size[1]))),
    "half, q50, crop 90%": lambda im: _jpeg(_crop(0.9, "centre")(_resize(0.5)(im)), 50),
}


def sources(extra: list[Path]) -> dict[str, Image.Image]:
    """Distinct photos by content: the same file in two folders counts once."""
    found: dict[str, Image.Image] = {}
    seen: set[bytes] = set()
    for folder in [*DEFAULT_SOURCES, *extra]:
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            if path.suffix.lower() in SUFFIXES and (data := path.read_bytes()) not in seen:
                seen.add(data)
                found[path.name] = normalise_image(data)[0]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--photos", nargs="*", type=Path, default=[], help="more photo folders")
    args = parser.parse_args()
    photos = sources(args.photos)
    hashes = {name: nd.photo_hashes(img) for name, img in photos.items()}
    same, different = [], []
    print(f"{len(photos)} distinct photos; threshold now {nd.NEAR_DUPLICATE_BITS} bits\n")
    print(f"{'photo':<36}{'copy':<22}{'old':>5}{'new':>5}")
    for name, img in photos.items():
        for label, make in COPIES.items():
            try:
                copy = normalise_image(make(img))[0]
            except ValueError:  # below the import's minimum size: it would be refused anyway
                continue
            copy_hashes = nd.photo_hashes(copy)
            old = imagehash.phash(copy) - imagehash.phash(img)
            new = nd.distance(copy_hashes, hashes[name])
            same.append(new)
            print(f"{name[:35]:<36}{label:<22}{old:>5}{new:>5}")
            for other, other_hashes in hashes.items():
                if other != name:
                    different.append((nd.distance(copy_hashes, other_hashes), label, name, other))
    pairs = [(nd.distance(hashes[a], hashes[b]), a, b) for a in hashes for b in hashes if a < b]
    print("\ndistinct photos, whole frames:")
    for d, a, b in sorted(pairs):
        print(f"  {d:>3}  {a} / {b}")
    closest = sorted(different)[:5]
    print("\nclosest copies of one photo to another photo:")
    for d, label, a, b in closest:
        print(f"  {d:>3}  {label} of {a} / {b}")
    worst_same = max(same)
    best_diff = min([d for d, *_ in pairs] + [d for d, *_ in different])
    print(
        f"\nsame pairs: {len(same)}, max {worst_same} bits;"
        f" different pairs: {len(pairs) + len(different)}, min {best_diff} bits;"
        f" threshold {nd.NEAR_DUPLICATE_BITS}:"
        f" {'in the gap' if worst_same <= nd.NEAR_DUPLICATE_BITS < best_diff else 'NOT in the gap'}"
    )


if __name__ == "__main__":
    main()
