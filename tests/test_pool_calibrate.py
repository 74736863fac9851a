"""The near-duplicate threshold, measured on the real renderer: re-rendering one program with
other seeds must stay within it; a different program must fall outside it."""

from __future__ import annotations

import pytest

from pool.calibrate import SKETCHES, calibrate
from pool.selection import DEFAULT_DUP_THRESHOLD


@pytest.mark.browser
def test_threshold_separates_seeds_from_programs(renderer):
    sources = {n: (SKETCHES / f"{n}.js").read_text() for n in ("coral_hibiscus", "yellow_hibiscus")}
    result = calibrate(lambda s, seed: renderer.render(s, seed=seed), sources, seeds=(0, 1, 2))
    assert all(len(d) == 3 for d in result["within"].values())
    assert result["within_max"] <= DEFAULT_DUP_THRESHOLD < result["between_min"], result
