"""Issue 31: model servers read by what they mean.

* the model a server says it served is recorded beside the one requested, and shown where it
  differs (the run's summary, `candidates list`, the release's `served_model` column);
* a key echoed by a vendor is scrubbed by its value, prefixed or not, masked or not;
* a critic's JSON cut by max_tokens keeps what came (scores, complete advice) and says so.

The generate runs go through the real CLI against the loopback fake vendor
(tests/fake_vendor.py; these styles: tests/fake_vendor_provenance.py).
"""

from __future__ import annotations

import json

import fake_vendor as fv
import pytest
from fake_vendor_provenance import FALLBACK, UNPREFIXED_KEY

from curation.ratings import record_rating
from generators import critique_json
from generators.replies import parse_body
from generators.served import same_model
from pool.dataset import publish
from pool.dataset.release import release
from pool.selection.draft import build_pool, save_draft
from refpool.core import loose_json, secret_values
from refpool.core.store import model_calls, releases

pytestmark = pytest.mark.usefixtures("fast_retries")


@pytest.fixture(autouse=True)
def no_keys_from_other_tests(monkeypatch) -> None:
    """Each test registers its own keys only (the registry is per process)."""
    monkeypatch.setattr(secret_values, "_KEYS", set())


def _generate(cli, tmp_path, photo_id, coders, critic="heuristic", **entry):
    """`refpool generate` of one candidate per coder; returns (exit, stdout, stderr)."""
    styles = [*coders, *([critic] if critic != "heuristic" else [])]
    with fv.FakeVendor() as vendor:
        models = fv.models_file(tmp_path / "m.json", vendor.base_url, styles)
        if entry:
            data = json.loads((tmp_path / "m.json").read_text())
            for style in coders:
                data["models"][style] |= entry
            (tmp_path / "m.json").write_text(json.dumps(data))
        return cli(
            "generate", "--photos", photo_id, "--generator", *coders, "--critic", critic,
            "--candidates", 1, "--rounds", 1, "--models-file", models, "--no-progress",
        )  # fmt: skip


# -- the served model -----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("requested", "served"),
    [
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "qwen/qwen3-coder-30b-a3b-instruct"),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen/Qwen3-Coder-30B-A3B-Instruct:nebius"),
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", "Qwen3-Coder-30B-A3B-Instruct"),
        ("llama3.1", "llama3.1:latest"),
        ("gpt-4o-mini", "gpt-4o-mini-2024-07-18"),
        ("claude-3-5-sonnet", "claude-3-5-sonnet-20241022"),
        ("z-ai/glm-4.6", None),
    ],
)
def test_a_name_spelled_otherwise_is_the_same_model(requested, served):
    assert same_model(requested, served)


@pytest.mark.parametrize(
    ("requested", "served"),
    [
        ("z-ai/glm-4.6", "z-ai/glm-4.5"),
        ("moonshotai/kimi-k2", "moonshotai/kimi-k2-thinking"),
        ("gpt-4o", "gpt-4o-mini"),
        ("fake/polite", "fake"),
    ],
)
def test_a_router_fallback_is_another_model(requested, served):
    assert not same_model(requested, served)


def test_the_served_model_is_read_from_a_body_and_from_a_stream():
    body = json.loads(fv.completion("hi", model=FALLBACK).body)
    assert parse_body(json.dumps(body).encode()).served_model == FALLBACK
    chunk = {"model": FALLBACK, "choices": [{"index": 0, "delta": {"content": "hi"}}]}
    stream = f"data: {json.dumps(chunk)}\n\ndata: [DONE]\n\n".encode()
    assert parse_body(stream).served_model == FALLBACK
    assert parse_body(json.dumps(body | {"model": ""}).encode()).served_model is None


@pytest.mark.browser
def test_a_router_fallback_is_recorded_shown_and_released(store, photo_id, cli, tmp_path):
    coders = ["served-fallback", "served-stream", "served-spelling", "polite"]
    code, out, err = _generate(cli, tmp_path, photo_id, coders, "critic-served-fallback")
    assert code == 0, err
    served = {
        r["model"]: r["served_model"]
        for r in store.query("SELECT model, served_model FROM model_calls")
    }
    assert served == {
        "fake/served-fallback": FALLBACK,
        "fake/served-stream": FALLBACK,
        "fake/served-spelling": "FAKE/SERVED-SPELLING:nebius",
        "fake/polite": "fake/polite",
        "fake/critic-served-fallback": FALLBACK,
    }
    # the summary says it where it differs, and only there
    assert f"coder served-fallback: 1 reply served by {FALLBACK}, not fake/served-fallback" in out
    assert f"coder served-stream: 1 reply served by {FALLBACK}" in out
    assert "coder served-spelling:" not in out and "coder polite:" not in out
    assert f"critic: 4 replies served by {FALLBACK}, not fake/critic-served-fallback" in out

    rows = {r["model"]: r for r in json.loads(cli("candidates", "list", "--json").out)}
    listed = cli("candidates", "list").out
    fallback_id = rows["served-fallback"]["id"]
    assert f"served-fallback: candidate(s) {fallback_id} written by {FALLBACK}" in listed
    assert "served-spelling:" not in listed
    assert rows["served-fallback"]["served_model"] == FALLBACK
    assert rows["served-fallback"]["requested_model"] == "fake/served-fallback"

    # the release keeps the model asked for, what the server said and the models-file name
    # (the four wrote the same sketch: one of them is released, the others are duplicates)
    record_rating(store, fallback_id, "ana", "love")
    save_draft(store, build_pool(store, target=1, love_fraction=1.0, dup_threshold=0))
    pv = release(store, with_diversity=False)
    [row] = releases.rows(store, pv.version)
    assert (row.generator_model, row.served_model) == ("fake/served-fallback", FALLBACK)
    assert row.generator_name == "served-fallback"  # the models-file name, beside the model id


# -- keys scrubbed by value -----------------------------------------------------------------
def test_a_registered_key_is_redacted_by_any_run_of_six_characters():
    key = "q7w8e9r0t1y2u3i4o5p6a7s8d9f0g1h2"
    secret_values.register(key)
    said = f"Incorrect API key provided: {key[:8]}****{key[-4:]}. Also {key[10:16]} and {key[3:8]}"
    scrubbed = model_calls.scrub_secrets(said)
    assert scrubbed == f"Incorrect API key provided: [redacted]. Also [redacted] and {key[3:8]}"
    assert model_calls.scrub_secrets(key) == "[redacted]"
    # the shape rules still hold for keys never registered
    assert model_calls.scrub_secrets("token hf_S****T123 here") == "token [redacted] here"
    public = [v for name, v in vars(secret_values).items() if not name.startswith("_")]
    assert not any(key in repr(v) for v in public)  # kept in the private set only


def test_a_hub_token_is_registered_when_it_is_read():
    publish.resolve_token("z9y8x7w6v5u4t3s2r1q0")
    assert (
        model_calls.scrub_secrets("HTTP 401 for token z9y8x7w6…q0")
        == "HTTP 401 for token [redacted]"
    )


@pytest.mark.browser
def test_an_unprefixed_key_echoed_masked_is_never_stored_or_printed(
    store, photo_id, cli, tmp_path, monkeypatch
):
    monkeypatch.setenv("FAKE_KEY", UNPREFIXED_KEY)
    code, out, err = _generate(cli, tmp_path, photo_id, ["key-echo-unprefixed"], key_env="FAKE_KEY")
    assert code == 1 and "was disabled" in err and "HTTP 401" in err
    stored = store.query("SELECT error FROM model_calls")
    assert stored and all("[redacted]" in r["error"] for r in stored)
    shown = out + err + json.dumps([r["error"] for r in stored])
    assert UNPREFIXED_KEY[:8] not in shown and UNPREFIXED_KEY[-4:] not in shown
    assert "Incorrect API key provided: [redacted]." in err


# -- a critic cut by max_tokens -------------------------------------------------------------
def test_a_cut_object_is_closed_at_what_came_whole():
    cut = 'Keep {soft} edges. {"scores": {"a": 1, "b": [2, 3'
    closings = list(loose_json.close_cut(cut))
    assert [json.loads(text) for text, _ in closings] == [
        {"scores": {"a": 1, "b": [2, 3]}},
        {"scores": {"a": 1, "b": [2]}},
    ]
    assert list(loose_json.close_cut('{"a": 1} and {"b": 2}')) == []


def test_a_cut_critique_keeps_its_scores_and_complete_sentences():
    from fake_vendor_provenance import CUT_BEFORE_ADVICE, CUT_IN_ADVICE

    critique, cost = critique_json.parse_cut_critique(CUT_IN_ADVICE, "vlm")
    assert critique.scores == {"fidelity": 6, "watercolour": 7, "composition": 8, "coverage": 5}
    assert (critique.advice, cost) == ("Enlarge the petals by a third.", "partial")
    critique, cost = critique_json.parse_cut_critique(CUT_BEFORE_ADVICE, "vlm")
    assert critique.scores["coverage"] == 5 and (critique.advice, cost) == ("", "lost")
    with pytest.raises(ValueError):
        critique_json.parse_cut_critique('{"scores": {"fidelity": 6, "water', "vlm")


@pytest.mark.browser
@pytest.mark.parametrize(
    ("critic", "advice", "cost"),
    [
        ("critic-cut-advice", "Enlarge the petals by a third.", "advice partial"),
        ("critic-cut-scores", None, "advice lost, the heuristic critic's used"),
    ],
)
def test_a_critic_cut_by_max_tokens_keeps_its_scores_and_says_so(
    store, photo_id, cli, tmp_path, critic, advice, cost
):
    code, out, err = _generate(cli, tmp_path, photo_id, ["polite"], critic)
    assert code == 0, err
    critique = json.loads(store.query("SELECT critique FROM candidates")[0]["critique"])
    assert critique["critic"] == critic  # its scores, not the heuristic's
    assert critique["scores"] == {
        "fidelity": 6.0,
        "watercolour": 7.0,
        "composition": 8.0,
        "coverage": 5.0,
    }
    if advice is None:  # lost: the heuristic's advice stands in, named as such
        assert critique["advice"] and "heuristic" in critique["summary"]
    else:
        assert critique["advice"] == advice
    assert f"critic reply cut by max_tokens: {cost}; raise max_tokens" in critique["summary"]
    assert "critic reply cut by max_tokens (1 round)" in out
    assert "raise max_tokens for the critic" in out
