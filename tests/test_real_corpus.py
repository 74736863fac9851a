"""The programs models write are accepted, and painted as the env paints them.

tests/real_corpus/ holds p5.brush programs in the idioms real model output uses (flow fields
from functions, colour channels read back, curve maths, p5.Vector statics, faint stacked
washes, the env's method list beyond the prompt's ten) and two the env's gate refuses. Its
manifest records, for each, the env's verdict and paint fraction and how they were obtained:
the env's gate rules applied to the text, and a `--env-pixels` render (the env's Chromium
flags: its exact pixels) for the paint fraction. For every program the env accepts, the
`env` profile must accept it with a paint fraction within 0.02 of the env's; for every one it
refuses, refpool must refuse it too.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from renderer.env_api import paint_fraction

CORPUS = Path(__file__).parent / "real_corpus"
MANIFEST = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))
PROGRAMS = MANIFEST["programs"]
TOLERANCE = 0.02  # the bound on the paint fraction against the env's


@pytest.fixture(scope="module")
def renders(renderer):
    """Every corpus program rendered once under the `env` profile, two at a time."""

    def one(entry: dict) -> tuple[str, object]:
        source = (CORPUS / entry["file"]).read_text(encoding="utf-8")
        return entry["file"], renderer.render(source, seed=MANIFEST["seed"], profile="env")

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, PROGRAMS))


def test_the_manifest_says_where_each_program_and_figure_came_from():
    assert {p["file"] for p in PROGRAMS} == {f.name for f in CORPUS.glob("*.js")}
    for entry in PROGRAMS:
        assert entry["licence"] and entry["origin"] and entry["idiom"]
        assert entry["env"]["gate"] in ("accepted", "refused") and entry["env"]["how"]
    assert sum(p["env"]["gate"] == "accepted" for p in PROGRAMS) >= 8


def _case(entry: dict) -> object:
    """A program the manifest names as a known gap fails its check until the gap is closed."""
    if "known_gap" not in entry:
        return entry
    return pytest.param(entry, marks=pytest.mark.xfail(strict=True, reason=entry["known_gap"]))


@pytest.mark.parametrize("entry", [_case(p) for p in PROGRAMS], ids=[p["file"] for p in PROGRAMS])
def test_refpool_judges_and_paints_each_program_as_the_env_does(entry, renders):
    result = renders[entry["file"]]
    codes = [v.code for v in result.gate.violations]
    if entry["env"]["gate"] == "refused":
        assert not result.accepted, f"the env refuses {entry['file']}; refpool accepted it"
        return
    assert result.accepted, f"{entry['file']}: the env accepts it, refpool said {codes}"
    ours, theirs = paint_fraction(result.png), entry["env"]["paint_fraction"]
    assert abs(ours - theirs) <= TOLERANCE, f"{entry['file']}: paint {ours:.4f}, env {theirs:.4f}"
