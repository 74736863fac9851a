"""Real chains of paintings to calibrate the near-duplicate distance on.

A chain is what one program becomes: its first render, the same program re-rendered with
other seeds, and its critique-and-revise rounds. Within a chain, a render and another seed of
it, and a parent and its revision, are the same painting to a curator (duplicates). Paintings
of other programs of the same photo, and of other photos, are distinct.

Photos: the sample photos, each also with its colours turned round the OKLab hue circle. A
turned copy keeps the flower's place, size and petals and changes only its colours: the case a
64-bit hash misses (a pink rose and a yellow hibiscus on pale paper hash alike).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from generators.analysis import ANALYSIS_SIDE, PhotoAnalysis, analyse, load_rgb
from generators.colour import oklab_to_srgb, srgb_to_oklab
from generators.critics import measure
from generators.procedural import generate_program, revise_program
from refpool.core.contracts import Render

SAMPLES = Path(__file__).resolve().parents[2] / "refpool" / "intake" / "samples"
SKETCHES = Path(__file__).resolve().parents[2] / "tests" / "sketches"
DUPLICATE_KINDS = ("seed", "revision")  # same program re-seeded; parent -> its revision
DISTINCT_KINDS = ("program", "recoloured", "photo")


@dataclass(frozen=True)
class Painting:
    name: str  # unique: chain/round/seed
    chain: str  # photo/program: every painting one program became
    photo: str  # the photo's name ("rose", "rose~120" = its colours turned 120 degrees)
    source_photo: str  # the photo file it came from (a turned copy shares it)
    round: int
    seed: int  # render seed
    parent: str | None  # name of the painting this one revises
    png: bytes


def turn_hue(rgb: np.ndarray, degrees: float) -> np.ndarray:
    """The image with every colour turned `degrees` round the OKLab hue circle."""
    lab = srgb_to_oklab(rgb)
    t = np.radians(degrees)
    a, b = lab[..., 1].copy(), lab[..., 2].copy()
    lab[..., 1] = a * np.cos(t) - b * np.sin(t)
    lab[..., 2] = a * np.sin(t) + b * np.cos(t)
    return oklab_to_srgb(lab)


def sample_photos(turns: Iterable[int] = (0, 120)) -> dict[str, tuple[str, PhotoAnalysis]]:
    """{photo name: (file stem, analysis)} for every sample photo and each hue turn."""
    out = {}
    for path in sorted(SAMPLES.glob("*.jpg")):
        rgb = load_rgb(path, ANALYSIS_SIDE)
        for turn in turns:
            name = path.stem.split("_")[0] + (f"~{turn}" if turn else "")
            out[name] = (path.stem, analyse(turn_hue(rgb, turn) if turn else rgb))
    return out


def render_chains(
    render: Callable[[str, int], Render],
    photos: dict[str, tuple[str, PhotoAnalysis]],
    programs: Iterable[int] = (0, 1),
    seeds: Iterable[int] = (0, 1),
    rounds: int = 2,
    progress: Callable[[str], None] = lambda _: None,
) -> list[Painting]:
    """For each photo and program seed: the program under each render seed, then `rounds`
    revisions (each revised from its parent's seed-0 render, as the generator does)."""
    out: list[Painting] = []

    def paint(source: str, seed: int, **fields: object) -> Painting | None:
        name = f"{fields['chain']}/r{fields['round']}/s{seed}"
        result = render(source, seed)
        if not result.png:  # an infrastructure hiccup or a gate failure: leave it out, say so
            progress(f"{name} left out: {result.gate.violations or result.infra_error}")
            return None
        progress(name)
        return Painting(name=name, seed=seed, png=result.png, **fields)  # type: ignore[arg-type]

    for photo, (stem, analysis) in photos.items():
        for program in programs:
            chain = f"{photo}/p{program}"
            base = {"chain": chain, "photo": photo, "source_photo": stem}
            source = generate_program(analysis, program)
            first = [p for s in seeds if (p := paint(source, s, round=0, parent=None, **base))]
            out += first
            parent = first[0] if first else None
            for round_ in range(1, rounds + 1):
                if parent is None:
                    break
                revised = revise_program(source, analysis, measure(analysis, parent.png), round_)
                if revised is None:
                    break
                source = revised
                parent = paint(source, 0, round=round_, parent=parent.name, **base)
                out += [parent] if parent else []
    return out


def render_sketches(
    render: Callable[[str, int], Render], paths: Iterable[Path], seeds: Iterable[int] = (0, 1)
) -> list[Painting]:
    """Hand-written sketches (each its own program and photo), under each render seed."""
    out = []
    for path in paths:
        for seed in seeds:
            result = render(path.read_text(), seed)
            if not result.png:
                continue  # nothing to measure; the pairs it would make are simply absent
            chain = f"sketch:{path.stem}"
            out.append(
                Painting(f"{chain}/r0/s{seed}", chain, chain, chain, 0, seed, None, result.png)
            )
    return out


def pair_kind(a: Painting, b: Painting) -> str:
    """seed | revision (duplicates), program | recoloured | photo (distinct), or chain: two
    paintings of one chain that are neither (a grandparent, another seed of a parent)."""
    if a.chain == b.chain:
        if a.round == b.round:
            return "seed"
        if a.parent == b.name or b.parent == a.name:
            return "revision"
        return "chain"
    if a.photo == b.photo:
        return "program"
    if a.source_photo == b.source_photo:
        return "recoloured"
    return "photo"


def pairs(paintings: list[Painting]) -> list[tuple[int, int, str]]:
    return [
        (i, j, pair_kind(paintings[i], paintings[j]))
        for i, j in itertools.combinations(range(len(paintings)), 2)
    ]


def save(paintings: list[Painting], folder: Path) -> None:
    """PNGs plus a manifest, so that a calibration can be re-measured without re-rendering."""
    folder.mkdir(parents=True, exist_ok=True)
    manifest = []
    for k, p in enumerate(paintings):
        file = f"{k:03d}.png"
        (folder / file).write_bytes(p.png)
        manifest.append(
            {
                **{f: getattr(p, f) for f in Painting.__dataclass_fields__ if f != "png"},
                "file": file,
            }
        )
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1), "utf-8")


def load(folder: Path) -> list[Painting]:
    manifest = json.loads((folder / "manifest.json").read_text("utf-8"))
    out = []
    for row in manifest:
        png = (folder / row.pop("file")).read_bytes()
        out.append(Painting(png=png, **row))
    return out


def open_rgb(png: bytes) -> Image.Image:
    import io

    with Image.open(io.BytesIO(png)) as img:
        rgba = img.convert("RGBA")
    ground = Image.new("RGB", rgba.size, (255, 255, 255))
    ground.paste(rgba, mask=rgba.getchannel("A"))
    return ground
