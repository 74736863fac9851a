"""Near-duplicate photos by what a person sees: a resized copy, a recompressed one, a crop of
most of the frame.

One perceptual hash of the whole frame misses a crop: cutting 10 % off one corner moves every
low frequency, and the sample dahlia's 90 % corner crop lands 20 bits away. So each photo is
also hashed over windows of its frame, at the scales and places a crop of most of the frame
would leave (WINDOW_SCALES per axis, at either edge or the centre of what is cut). Two photos
are compared both ways, whole frame against the other's windows: a crop of a library photo
matches one of that photo's windows, and a library photo that is a crop of the new one matches
one of the new photo's windows. Resizing and recompressing barely move the hash at all.

NEAR_DUPLICATE_BITS was measured with `python bench/photo_near_duplicates.py` on such copies
of the sample photos and on distinct photos (docs/explanation/near-duplicates.md has the
figures).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import imagehash
from PIL import Image

# Per axis, the share of the frame a window keeps; a window below 1 sits at the left, centre
# or right (top, centre, bottom) of what it cuts, so a crop anywhere is within 5 % of one.
WINDOW_SCALES = (1.0, 0.9, 0.85, 0.8)
WINDOW_PLACES = (0.0, 0.5, 1.0)
# At or below this many bits (of 64) two photos are the same picture. Measured: copies of one
# photo (resized, recompressed, cropped to 80-95 % anywhere) lie at 0-8 bits, distinct photos
# at 16 and more (bench/photo_near_duplicates.py), so 10 sits in the gap with room either side.
NEAR_DUPLICATE_BITS = 10


@dataclass(frozen=True)
class PhotoHashes:
    """A photo's hash of its whole frame and of each window of it (64-bit phash as ints)."""

    whole: int
    windows: tuple[int, ...]

    def to_text(self) -> str:
        """As the photos table keeps it: hex hashes, whole frame first, space-separated."""
        return " ".join(f"{h:016x}" for h in (self.whole, *self.windows))

    @classmethod
    def from_text(cls, text: str) -> PhotoHashes:
        values = [int(h, 16) for h in text.split()]
        return cls(values[0], tuple(values[1:]))


def window_boxes(width: int, height: int) -> list[tuple[int, int, int, int]]:
    """The crop boxes hashed beside the whole frame (the whole frame itself excluded)."""
    xs = _spans(width)
    ys = _spans(height)
    boxes = []
    for x0, x1 in xs:
        for y0, y1 in ys:
            if (x0, x1, y0, y1) != (0, width, 0, height):
                boxes.append((x0, y0, x1, y1))
    return boxes


def _spans(length: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for scale in WINDOW_SCALES:
        size = round(length * scale)
        places = (0.0,) if size >= length else WINDOW_PLACES
        for place in places:
            start = round((length - size) * place)
            if (start, start + size) not in spans:
                spans.append((start, start + size))
    return spans


def _phash(img: Image.Image) -> int:
    return int(str(imagehash.phash(img)), 16)


def photo_hashes(img: Image.Image) -> PhotoHashes:
    """Hash the whole frame and every window of an (already normalised, RGB) photo."""
    # Every window is hashed from one grey copy of at most 256 px: the hash sees 32 x 32 grey
    # pixels anyway, and 100 windows of a 1600 px colour photo would cost ten times as much.
    small = img.convert("L")
    small.thumbnail((256, 256), Image.Resampling.LANCZOS)
    windows = tuple(_phash(small.crop(box)) for box in window_boxes(*small.size))
    return PhotoHashes(_phash(small), windows)


def distance(a: PhotoHashes, b: PhotoHashes) -> int:
    """Bits between what two photos show: the closest of either whole frame to the other's
    whole frame or windows. 0 for the same picture; distinct photos lie far (see above)."""
    return min(
        (a.whole ^ b.whole).bit_count(),
        min(((a.whole ^ w).bit_count() for w in b.windows), default=64),
        min(((b.whole ^ w).bit_count() for w in a.windows), default=64),
    )


def closest(
    new: PhotoHashes, library: Iterable[tuple[PhotoHashes, int, str]]
) -> tuple[int, int, str] | None:
    """(distance, photo id, file name) of the library photo nearest to `new`, or None."""
    best: tuple[int, int, str] | None = None
    for hashes, photo_id, name in library:
        d = distance(new, hashes)
        if best is None or d < best[0]:
            best = (d, photo_id, name)
    return best


def near_duplicate(
    new: PhotoHashes, library: Sequence[tuple[PhotoHashes, int, str]]
) -> tuple[int, int, str] | None:
    """The nearest library photo if it is within NEAR_DUPLICATE_BITS, else None."""
    found = closest(new, library)
    return found if found is not None and found[0] <= NEAR_DUPLICATE_BITS else None
