"""The near-duplicate distance on real paintings rendered in Chromium, where dHash is wrong.

The procedural generator takes a plan's structure from its seed, so two photos with alike
flowers get the same composition in other colours. On pale paper, a 64-bit dHash of such a
pair is as close as two seeds of one program; a curator sees two different paintings.
"""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from PIL import Image

from generators.colour import hex_to_oklab, oklab_to_srgb, to_hex
from pool.similarity import distance as sim
from pool.similarity.chains import SKETCHES
from pool.similarity.clusters import near_duplicate_clusters
from pool.similarity.features import compute_features
from pool.similarity.threshold import OLD_DHASH_THRESHOLD
from refpool.core.defaults import DUP_THRESHOLD


def turn_colours(source: str, degrees: float) -> str:
    """The program with every #rrggbb turned round the OKLab hue circle, lightness kept."""

    def turn(match: re.Match[str]) -> str:
        lab = hex_to_oklab(match.group(0))
        t = np.radians(degrees)
        a, b = lab[1], lab[2]
        lab[1], lab[2] = a * np.cos(t) - b * np.sin(t), a * np.sin(t) + b * np.cos(t)
        return to_hex(oklab_to_srgb(lab))

    return re.sub(r"#[0-9a-fA-F]{6}", turn, source)


def rendered(renderer, source: str, seed: int) -> bytes:
    result = renderer.render(source, seed=seed)
    assert result.accepted and result.png, result.gate.violations or result.infra_error
    return result.png


def measures(a: bytes, b: bytes) -> tuple[int, float]:
    """(dHash bits apart, similarity distance 0..100)."""
    fa, fb = compute_features(a), compute_features(b)
    return (fa.phash ^ fb.phash).bit_count(), sim.distance(fa.signature, fb.signature)


@pytest.fixture(scope="module")
def paintings(renderer) -> dict[str, bytes]:
    coral = (SKETCHES / "coral_hibiscus.js").read_text()
    return {
        "coral s0": rendered(renderer, coral, 0),
        "coral s1": rendered(renderer, coral, 1),
        # the same composition in another flower's colours: a painting of another photo
        "teal s0": rendered(renderer, turn_colours(coral, 180), 0),
        "yellow s0": rendered(renderer, (SKETCHES / "yellow_hibiscus.js").read_text(), 0),
    }


@pytest.mark.browser
def test_another_seed_of_one_program_is_a_duplicate(paintings):
    _, d = measures(paintings["coral s0"], paintings["coral s1"])
    assert d <= DUP_THRESHOLD


@pytest.mark.browser
def test_another_photos_colours_are_not_a_duplicate_though_dhash_says_so(paintings):
    bits, d = measures(paintings["coral s0"], paintings["teal s0"])
    assert bits <= OLD_DHASH_THRESHOLD  # dHash: the same picture
    assert d > DUP_THRESHOLD  # a curator's view: a coral flower and a teal one
    _, d_yellow = measures(paintings["coral s0"], paintings["yellow s0"])
    assert d_yellow > DUP_THRESHOLD


@pytest.mark.browser
def test_a_blank_canvas_is_its_own_kind(paintings):
    blank = io.BytesIO()
    Image.new("RGB", (600, 600), (246, 239, 226)).save(blank, "PNG")
    blank_sig = compute_features(blank.getvalue()).signature
    assert sim.distance(blank_sig, blank_sig) == pytest.approx(0, abs=1e-3)
    assert sim.distance(blank_sig, compute_features(paintings["coral s0"]).signature) > 50


@pytest.mark.browser
def test_clusters_of_real_paintings_hold_only_the_repaint(paintings):
    names = list(paintings)
    sigs = [compute_features(paintings[n]).signature for n in names]
    clusters = near_duplicate_clusters(sim.distance_matrix(sigs), DUP_THRESHOLD)
    assert [[names[i] for i in c] for c in clusters] == [["coral s0", "coral s1"]]
