"""`refpool generate` against answer shapes real servers send (tests/fake_vendor_replies.py).

A user runs the command; the sketch written through a tool call, HTML-escaped, glued inside
GLM's tags or followed by an "Option B" fragment is found, rendered and accepted; a critic on
a 0-100 scale is mapped and says so; a 3 MB runaway is gated as too_long and its revise
prompt does not send it back whole.
"""

from __future__ import annotations

import json

import fake_vendor as fv
import pytest

from generators import coders

FOUND = ["tool-write-file", "tool-glm-xml", "html-escaped", "option-b", "thinking-parts"]


pytestmark = pytest.mark.usefixtures("fast_retries")


@pytest.mark.browser
def test_every_answer_shape_becomes_an_accepted_painting(store, photo_id, cli, tmp_path):
    with fv.FakeVendor() as vendor:
        models = fv.models_file(tmp_path / "m.json", vendor.base_url, [*FOUND, "critic-percent"])
        status, _, err = cli(
            "generate", "--photos", photo_id, "--generator", *FOUND, "--critic", "critic-percent",
            "--candidates", 1, "--rounds", 1, "--models-file", models, "--json", "--no-progress",
        )  # fmt: skip
    assert status == 0, err
    rows = {r["generator"]: r for r in store.query("SELECT * FROM candidates")}
    assert {s: (rows[s]["outcome"], rows[s]["accepted"]) for s in FOUND} == dict.fromkeys(
        FOUND, ("ok", 1)
    )
    critique = json.loads(rows["option-b"]["critique"])
    assert critique["critic"] == "critic-percent"
    assert critique["scores"] == {
        "fidelity": 7.2,
        "watercolour": 8.5,
        "composition": 9.0,
        "coverage": 0.8,
    }
    assert "scored on 0-100" in critique["summary"]


@pytest.mark.browser
def test_a_runaway_is_gated_too_long_and_not_fed_back_whole(store, photo_id, cli, tmp_path):
    with fv.FakeVendor() as vendor:
        models = fv.models_file(tmp_path / "m.json", vendor.base_url, ["runaway-length"])
        cli(
            "generate", "--photos", photo_id, "--generator", "runaway-length", "--candidates", 1,
            "--rounds", 2, "--models-file", models, "--no-progress",
        )  # fmt: skip
        first, second = vendor.calls("runaway-length")
    rows = store.query("SELECT round, outcome, violations FROM candidates ORDER BY round")
    assert [r["outcome"] for r in rows] == ["truncated", "truncated"]
    assert json.loads(rows[0]["violations"])[0]["code"] == "too_long"
    revise = json.dumps(second[2]["messages"])
    assert len(revise) < coders.REVISE_PROGRAM_CHARS * 2 and "only the first" in revise
