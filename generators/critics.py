"""Critics: compare a render with its photo and say what to change.

* `HeuristicCritic` (`heuristic_critique(analysis, png)`): offline, from image measurements
  (palette distance in OKLab, silhouette overlap, coverage, edge softness, layering).
* `VLMCritic`: any OpenAI-compatible vision model; sees photo + render, answers JSON.

Both give a contracts.Critique with scores 0-10 for fidelity, watercolour, composition and
coverage, plus concrete advice for the next round.
"""

from __future__ import annotations

import asyncio
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image
from scipy import ndimage

from generators import critique_json, llm
from generators.analysis import ANALYSIS_SIDE, PhotoAnalysis
from generators.colour import (
    colour_name,
    hex_to_oklab,
    kmeans,
    oklab_to_srgb,
    srgb_to_oklab,
    to_hex,
)
from generators.jobs import Job
from refpool.core.contracts import Critique, Violation
from refpool.core.finish import LENGTH, finish_meaning
from refpool.core.store import Store
from renderer.gate import paint_mask  # one definition of "paint" for gate, critic and pool

SCORE_KEYS = ("fidelity", "watercolour", "composition", "coverage")


# -- measurements ---------------------------------------------------------------------------
def _normalised(mask: np.ndarray, side: int = 96) -> np.ndarray:
    """The mask moved to the frame's centre and scaled to a fixed equivalent radius."""
    ys, xs = np.nonzero(mask)
    if len(ys) < 5:
        return np.zeros((side, side), bool)
    cy, cx = ys.mean(), xs.mean()
    r = math.sqrt(len(ys) / math.pi)
    target = side * 0.3
    yy, xx = np.mgrid[0:side, 0:side]
    src_y = np.clip(((yy - side / 2) * r / target + cy).round().astype(int), 0, mask.shape[0] - 1)
    src_x = np.clip(((xx - side / 2) * r / target + cx).round().astype(int), 0, mask.shape[1] - 1)
    inside = (np.abs((yy - side / 2) * r / target + cy - src_y) < 1) & (
        np.abs((xx - side / 2) * r / target + cx - src_x) < 1
    )
    return mask[src_y, src_x] & inside


def measure(analysis: PhotoAnalysis, png: bytes) -> dict[str, Any]:
    """Image measurements of a render against the photo's analysis (all plain JSON types)."""
    with Image.open(io.BytesIO(png)) as img:
        rgba = img.convert("RGBA")
    white = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
    small = Image.alpha_composite(white, rgba).convert("RGB")
    small.thumbnail((ANALYSIS_SIDE, ANALYSIS_SIDE), Image.Resampling.BILINEAR)
    rgb = np.asarray(small, dtype=np.uint8)
    mask, ground = paint_mask(rgb)
    h, w = mask.shape
    coverage = float(mask.mean())
    out: dict[str, Any] = {"coverage": round(coverage, 4), "ground": to_hex(ground)}
    if mask.sum() < 10:
        return out | {"empty": True}
    lab = srgb_to_oklab(rgb)
    paint = lab[mask]
    centres, labels = kmeans(paint[:: max(1, len(paint) // 3000)], 5)
    weights = np.bincount(labels, minlength=len(centres)) / len(labels)
    photo = np.array([s.lab for s in analysis.palette])
    photo_w = np.array([s.weight for s in analysis.palette])
    d = np.linalg.norm(photo[:, None, :] - centres[None], axis=2)
    photo_to_render = float((d.min(1) * photo_w).sum() / photo_w.sum())
    render_to_photo = float((d.min(0) * weights).sum())
    # each render colour -> the photo colour it should move towards (only if clearly off)
    shift = []
    for j, c in enumerate(centres):
        k = int(d[:, j].argmin())
        if d[k, j] > 0.06 and weights[j] > 0.1:
            shift.append([to_hex(oklab_to_srgb(c)), analysis.palette[k].hex])
    ys, xs = np.nonzero(mask)
    iou = _iou(_normalised(analysis.mask), _normalised(mask))
    # edge softness: how gradually paint meets the ground (wide ramps = soft, bled edges)
    grey = lab[..., 0]
    grad = np.hypot(ndimage.sobel(grey, 0), ndimage.sobel(grey, 1))
    edge = mask ^ ndimage.binary_erosion(mask, iterations=1)
    contrast = abs(float(np.median(paint[:, 0])) - float(srgb_to_oklab(ground)[0])) + 1e-3
    sharpness = float(np.median(grad[edge])) / (contrast * 8) if edge.any() else 1.0
    # layering: spread of lightness inside the paint, and how many distinct tones it has
    tones = np.histogram(paint[:, 0], bins=12, range=(0.2, 1.0))[0] / len(paint)
    layering = (
        min(1.0, float(np.std(paint[:, 0])) * 6) * 0.5 + min(1.0, (tones > 0.04).sum() / 6) * 0.5
    )
    border = np.concatenate([mask[0], mask[-1], mask[:, 0], mask[:, -1]]).mean()
    return out | {
        "palette_distance": round(photo_to_render, 4),
        "palette_excess": round(render_to_photo, 4),
        "palette_shift": shift,
        "render_palette": [to_hex(oklab_to_srgb(c)) for c in centres],
        "silhouette_iou": round(iou, 4),
        "centre": [round(float(xs.mean() / w), 4), round(float(ys.mean() / h), 4)],
        "radius": round(math.sqrt(mask.sum() / math.pi) / min(h, w), 4),
        "edge_softness": round(max(0.0, min(1.0, 1.0 - sharpness)), 4),
        "layering": round(layering, 4),
        "touches_border": round(float(border), 4),
    }


def _iou(a: np.ndarray, b: np.ndarray) -> float:
    union = (a | b).sum()
    return float((a & b).sum() / union) if union else 0.0


# -- the heuristic critic -------------------------------------------------------------------
def _clamp10(x: float) -> float:
    return round(max(0.0, min(10.0, x)), 1)


def heuristic_critique(
    analysis: PhotoAnalysis, png: bytes | None, violations: Sequence[Violation] = ()
) -> tuple[Critique, dict[str, Any]]:
    """(Critique, measurements). Works offline; advice is concrete enough to act on."""
    if not png:
        why = " ".join(f"[{v.code}] {v.message}" for v in violations)
        said = f"No image was produced. {why}".strip()
        return Critique("heuristic", dict.fromkeys(SCORE_KEYS, 0.0), said, "nothing rendered"), {}
    m = measure(analysis, png)
    if m.get("empty"):
        scores = dict.fromkeys(SCORE_KEYS, 0.0)
        return (
            Critique(
                "heuristic",
                scores,
                "The canvas is blank: paint the flower with brush fills of opacity 180-230.",
                "blank canvas",
            ),
            m,
        )
    advice: list[str] = []
    palette = _clamp10(10 - (m["palette_distance"] - 0.03) * 60)
    excess = _clamp10(10 - (m["palette_excess"] - 0.04) * 50)
    silhouette = _clamp10(m["silhouette_iou"] * 13)
    fidelity = _clamp10(0.45 * palette + 0.2 * excess + 0.35 * silhouette)
    for render_hex, photo_hex in m["palette_shift"][:3]:
        advice.append(
            f"Move the {colour_name(hex_to_oklab(render_hex))} {render_hex} areas towards the photo's"
            f" {colour_name(hex_to_oklab(photo_hex))} {photo_hex}."
        )
    missing = [s for s in analysis.palette if s.weight > 0.15]
    if palette < 6 and missing:
        advice.append(
            "The main photo colours are under-represented: "
            + ", ".join(f"{s.name} {s.hex}" for s in missing[:3])
            + "."
        )
    if silhouette < 5:
        advice.append(
            f"The outline differs from the photo's flower; it has about {analysis.petals}"
            " petals around the centre - match their count and proportions."
        )
    softness, layering = m["edge_softness"], m["layering"]
    watercolour = _clamp10(4 * softness + 4 * layering + 2 * min(1.0, m["coverage"] * 4))
    if softness < 0.5:
        advice.append(
            "Edges look hard: raise brush.fillBleed towards 0.28 and fillTexture border to 0.5."
        )
    if layering < 0.45:
        advice.append(
            "Too few translucent layers: paint 2-3 overlapping rings of petals, light outer"
            " petals then deeper inner ones, opacity 180-230."
        )
    cx, cy = m["centre"]
    off = math.hypot(cx - 0.5, cy - 0.5)
    size = m["radius"]
    composition = _clamp10(10 - off * 30 - max(0, 0.25 - size) * 30 - max(0, size - 0.45) * 30)
    composition = _clamp10(composition - m["touches_border"] * 10)
    if off > 0.08:
        advice.append(f"Centre the flower: it sits at ({cx:.2f}, {cy:.2f}) of the canvas.")
    if m["touches_border"] > 0.15:
        advice.append(
            "Paint runs off the canvas edge: leave a margin of pale paper around the flower."
        )
    cov = m["coverage"]
    coverage = _clamp10(10 - max(0, 0.2 - cov) * 50 - max(0, cov - 0.6) * 30)
    if cov < 0.2:
        advice.append(
            f"Coverage is {cov:.0%}: enlarge the flower to fill about 30-50% of the canvas."
        )
    elif cov > 0.6:
        advice.append(f"Coverage is {cov:.0%}: shrink the flower so pale paper shows around it.")
    scores = {
        "fidelity": fidelity,
        "watercolour": watercolour,
        "composition": composition,
        "coverage": coverage,
    }
    summary = (
        f"palette distance {m['palette_distance']:.3f}, silhouette IoU {m['silhouette_iou']:.2f},"
        f" coverage {cov:.2f}, edge softness {softness:.2f}, layering {layering:.2f}"
    )
    if not advice:
        advice.append("Close to the photo; refine petal edges and keep the palette.")
    return Critique("heuristic", scores, " ".join(advice), summary), m


# -- the VLM critic -------------------------------------------------------------------------
parse_critique = critique_json.parse_critique  # lenient: see generators/critique_json.py


# -- critics as the loop uses them ----------------------------------------------------------
@dataclass
class CritiqueResult:
    """A critic's answer on one round (a Verdict is the pairwise judge's, pool.reward.judge)."""

    critique: Critique
    measures: dict[str, Any]
    call_id: int | None = None
    error: str | None = None  # the critic call failed in transport: no critique happened


class HeuristicCritic:
    name = "heuristic"

    async def judge(
        self, store: Store, job: Job, round_: int, png: bytes | None, violations: list[Violation]
    ) -> CritiqueResult:
        critique, measures = await asyncio.to_thread(
            heuristic_critique, job.analysis, png, violations
        )
        return CritiqueResult(critique, measures)


class VLMCritic:
    """A vision model critic; falls back to the heuristic critique if its reply is unusable.

    A failed call (http_error/timeout after retries) is not papered over: the result carries
    `error` and the round is stored as critic_error, which a rerun critiques again.
    """

    def __init__(self, cfg: llm.ModelConfig, endpoints: llm.Endpoints) -> None:
        if not cfg.accepts_images:
            raise llm.ModelsFileError(
                f"critic {cfg.name!r} must accept images: if its model does, set accepts_images"
                " to true in its models-file entry",
                hint=("choose a critic", "choose a models file"),
            )
        self.cfg, self.endpoints, self.name = cfg, endpoints, cfg.name

    async def judge(
        self, store: Store, job: Job, round_: int, png: bytes | None, violations: list[Violation]
    ) -> CritiqueResult:
        heuristic, measures = await asyncio.to_thread(
            heuristic_critique, job.analysis, png, violations
        )
        if not png:
            return CritiqueResult(heuristic, measures)
        key = job.key(round_) + "/critic"
        reused = llm.paid_reply(store, key, "critic")
        if reused is not None:  # a crash after the critic answered: do not pay twice
            result = reused[1]
        else:
            result = await llm.chat(
                store,
                self.endpoints,
                self.cfg,
                self._messages(job, png),
                purpose="critic",
                temperature=0.2,
                extra=llm.response_format(self.cfg, "critic"),
                job_key=key,
            )
        if result.outcome != "ok":  # no reply at all: the round waits for a rerun to critique it
            error = f"VLM critic {self.cfg.name}: {result.outcome} ({result.error or 'no detail'})"
            return CritiqueResult(heuristic, measures, result.call_id, error=error)
        cut = finish_meaning(result.finish_reason) == LENGTH  # its JSON may stop mid-way
        try:
            if cut:  # read as far as it came, and say so: never dropped silently
                critique = critique_json.cut_critique(result.reply.answer, self.name, heuristic)
            else:
                critique = parse_critique(result.reply.answer, self.cfg.name)  # not the reasoning
        except (ValueError, TypeError, AttributeError) as exc:
            why = f"{critique_json.CUT_NOTE.format('lost')}: " if cut else ""
            note = (
                f"(VLM critic {self.cfg.name} reply unusable: {why}{exc}; heuristic critique used)"
            )
            critique = Critique(
                heuristic.critic, heuristic.scores, heuristic.advice, f"{heuristic.summary} {note}"
            )
        return CritiqueResult(critique, measures, result.call_id)

    def _messages(self, job: Job, png: bytes) -> list[dict[str, Any]]:
        text = llm.prompt("critic.md", brief="Photo analysis:\n" + job.analysis.brief())
        parts = [
            {"type": "text", "text": text},
            llm.image_part(job.photo_jpeg, "image/jpeg"),
            llm.image_part(png, "image/png"),
        ]
        return [{"role": "user", "content": parts}]
