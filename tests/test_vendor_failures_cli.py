"""What a user sees when vendors fail: `refpool generate`, `pool calibrate` and
`pool judge-agreement` against the fake vendor's failure shapes (tests/fake_vendor_failures.py).

Each test drives the real CLI in-process and checks the exit status, the printed lines, the
stored rows and how many requests the vendor got, on a first run and on a rerun.
"""

from __future__ import annotations

import json

import fake_vendor as fv
import pytest
from factories import add_photo
from judge_fakes import CoverageJudge, judge_models_file, painting

from curation.ratings import record_rating
from refpool.core.store import candidates

pytestmark = pytest.mark.usefixtures("fast_retries")


def _generate(photo_id, models, coders, *more):
    return ["generate", "--photos", photo_id, "--generator", *coders, "--rounds", 1,
            "--models-file", models, "--no-progress", *more]  # fmt: skip


def _rows(store):
    return {r["generator"]: r for r in store.query("SELECT * FROM candidates ORDER BY id")}


@pytest.mark.browser
def test_generate_reads_vendor_failures_by_meaning(store, photo_id, cli, tmp_path):
    coders = [
        "or-error-200",
        "glm-network-error-always",
        "glm-sensitive",
        "surrogate",
        "or-flagged",
    ]
    with fv.FakeVendor() as vendor:
        models = fv.models_file(
            tmp_path / "m.json", vendor.base_url, [*coders, "critic-inspection"]
        )
        argv = _generate(
            photo_id, models, coders, "--critic", "critic-inspection", "--candidates", 1
        )
        code, _, err = cli(*argv)
        rows = _rows(store)
        got = {c: rows[c]["outcome"] for c in coders}
        # the critic refused one of the two images (whichever came first) and went on
        assert sorted(got[c] for c in ("or-error-200", "surrogate")) == ["critic_error", "ok"]
        got |= {c: "ok" for c in ("or-error-200", "surrogate")}
        assert got == {
            "or-error-200": "ok",  # broken off once, retried, then a real answer
            "glm-network-error-always": "http_error",  # the vendor kept failing: not a program
            "glm-sensitive": "refusal",  # the vendor's filter stopped it
            "surrogate": "ok",  # recorded, repaired, painted
            "or-flagged": "http_error",  # refused by moderation: this request only
        }
        assert rows["or-error-200"]["accepted"] and rows["surrogate"]["accepted"]
        assert code == 1 and "was disabled" not in err
        assert "coder glm-network-error-always: 1 round failed: HTTP 200 finish_reason" in err
        assert "coder or-flagged: 1 round failed: HTTP 403" in err and "flagged" in err
        assert "critic: 1 round failed: HTTP 400" in err and "data_inspection_failed" in err
        paid = store.query("SELECT COUNT(*) AS n FROM model_calls WHERE outcome = 'ok'")[0]["n"]
        broken = len(vendor.calls("glm-network-error-always"))
        asked = {s: len(vendor.calls(s)) for s in ("or-flagged", "critic-inspection")}

        code, _, err = cli(*argv)  # a rerun ...
        assert len(vendor.calls("glm-network-error-always")) == 2 * broken  # ... asks again
        assert {s: len(vendor.calls(s)) for s in asked} == asked  # refused for good: not again
        assert "flagged" in err and "data_inspection_failed" in err  # and says so again
        again = store.query("SELECT COUNT(*) AS n FROM model_calls WHERE outcome = 'ok'")[0]["n"]
        assert again == paid  # nothing already paid for was paid again
    surrogate = store.query("SELECT response FROM model_calls WHERE model = 'fake/surrogate'")
    assert len(surrogate) == 1 and "\ufffd" in surrogate[0]["response"]


def test_a_coders_permanent_failures_are_printed_and_not_asked_again(
    store, photo_id, cli, tmp_path
):
    coders = ["context-400", "extra-422", "image-413", "html-200"]
    with fv.FakeVendor() as vendor:
        models = fv.models_file(tmp_path / "m.json", vendor.base_url, coders)
        argv = _generate(photo_id, models, coders, "--candidates", 2)
        code, _, err = cli(*argv)
        assert code == 1
        assert "coder context-400: 2 rounds failed: HTTP 400" in err
        assert "maximum context length" in err and "lower max_tokens" in err
        assert "coder extra-422 (fake/extra-422" in err and "was disabled" in err
        assert "Extra inputs are not permitted" in err and "extra_body" in err
        assert "coder image-413: 2 rounds failed: HTTP 413" in err and "too large" in err
        assert "coder html-200" in err and "Bad Gateway" in err
        asked = {c: len(vendor.calls(c)) for c in coders}
        assert asked["context-400"] == 2 and asked["image-413"] == 2  # not retried
        assert asked["extra-422"] <= 2  # each request once (both may be in flight), then stopped
        # a proxy's error page, the same each time: an outage, retried, never a verdict
        assert asked["html-200"] == 8 and "coder html-200 (fake" not in err
        code, _, err = cli(*argv)
        assert code == 1 and "maximum context length" in err and "Bad Gateway" in err
        for style in ("context-400", "image-413"):
            assert len(vendor.calls(style)) == asked[style], style  # shown, not asked again
        assert len(vendor.calls("html-200")) == 2 * asked["html-200"]  # the vendor's: again


@pytest.mark.browser
def test_a_critic_a_text_only_server_refuses_is_stopped_and_not_asked_again(
    store, photo_id, cli, tmp_path
):
    with fv.FakeVendor() as vendor:
        models = fv.models_file(
            tmp_path / "m.json", vendor.base_url, ["polite", "critic-llama-images"], concurrency=1
        )
        argv = _generate(
            photo_id, models, ["polite"], "--critic", "critic-llama-images", "--candidates", 3
        )
        code, _, err = cli(*argv)
        assert code == 1 and "critic critic-llama-images (fake/critic-llama-images" in err
        assert "can only concatenate" in err and '"accepts_images"' in err
        # the request carried images: evidence about the entry, so one call, not a retry
        assert len(vendor.calls("critic-llama-images")) == 1
        code, _, err = cli(*argv)
        assert code == 1 and "refused permanently" in err and "can only concatenate" in err
        assert len(vendor.calls("critic-llama-images")) == 1


def _candidate(store, cov: float, name: str, tier: str | None = None) -> int:
    photo = add_photo(store, f"{name}.jpg", url=f"https://example.org/{name}")
    cid = candidates.save(
        store,
        {
            "job_key": f"fail/{name}",
            "photo_id": photo,
            "generator": "procedural",
            "round": 1,
            "seed": 0,
            "accepted": 1,
            "coverage": cov,
            "png_sha": store.put_png(painting(cov, colour=(20, 120, 60))),
        },
    )
    if tier:
        record_rating(store, cid, "alice", tier)
    return cid


def _policy(tmp_path, coverages):
    folder = tmp_path / "policy"
    folder.mkdir()
    for i, cov in enumerate(coverages):
        (folder / f"p{i}.png").write_bytes(painting(cov, colour=(170, 50, 90)))
    return folder


def _judge_file(tmp_path, base_url, style, **fields):
    path = tmp_path / f"{style}.json"
    fv.models_file(path, base_url, [style])
    data = json.loads(path.read_text())
    data["models"][style] |= {"concurrency": 1} | fields
    path.write_text(json.dumps(data))
    return str(path)


def test_a_judge_refusing_json_schema_says_which_field_to_set(store, cli, tmp_path):
    for cov in (0.1, 0.3, 0.5):
        _candidate(store, cov, f"c{cov}")
    folder = _policy(tmp_path, [0.2, 0.4])
    with fv.FakeVendor() as vendor:
        models = _judge_file(tmp_path, vendor.base_url, "judge-no-json-schema")
        code, out, err = cli("pool", "calibrate", "--paintings", folder, "--models-file", models)
        assert len(vendor.calls("judge-no-json-schema")) == 1  # stopped at once
        assert code == 1 and "The result above is incomplete: 3 of 3 candidates" in err
        assert "judge judge-no-json-schema (fake/judge-no-json-schema" in err
        assert '"structured_output" to "json_object"' in err and "unresolved" in out
        models = _judge_file(
            tmp_path, vendor.base_url, "judge-no-json-schema", structured_output="json_object"
        )
        code, out, err = cli("pool", "calibrate", "--paintings", folder, "--models-file", models)
        assert code == 0 and "unresolved" not in out and "error" not in err
        sent = [b.get("response_format") for _, _, b, _ in vendor.calls("judge-no-json-schema")]
        assert sent[1:] == [{"type": "json_object"}] * 12


def test_judge_agreement_prints_the_judges_last_error(store, cli, tmp_path):
    _candidate(store, 0.4, "loved", "love")
    _candidate(store, 0.2, "okayed", "okay")
    with fv.FakeVendor() as vendor:
        models = _judge_file(tmp_path, vendor.base_url, "judge-down")
        code, out, err = cli("pool", "judge-agreement", "--models-file", models)
    assert "no love/okay pair resolved" in out
    # every pair says why, and a judge that resolved nothing fails (issue 31)
    assert "call failed: HTTP 500" in out and "love 1 vs okay 2" in out
    assert code == 1 and "error: judge fake/judge-down gave no verdict" in err
    assert "upstream exploded" in err


def test_calibrate_keeps_the_judges_limit_full(store, cli, tmp_path):
    for i in range(6):
        _candidate(store, 0.1 + 0.07 * i, f"c{i}")
    folder = _policy(tmp_path, [0.3])  # one painting: two requests per candidate
    with CoverageJudge(delay=0.3) as server:
        models = judge_models_file(tmp_path / "m.json", server.base_url, concurrency=4)
        code, out, err = cli("pool", "calibrate", "--paintings", folder, "--models-file", models)
        assert code == 0, err
        assert len(server.requests) == 12
        assert server.max_in_flight == 4  # one candidate at a time held only 2


def test_a_judge_outage_is_the_vendors_so_a_rerun_asks_again(store, cli, tmp_path):
    """An outage repeats identically by nature: the pairs stay unresolved, not refused for
    good, and the judge is not stopped for the run (issue 31)."""
    for cov in (0.1, 0.3):
        _candidate(store, cov, f"c{cov}")
    folder = _policy(tmp_path, [0.2])
    with fv.FakeVendor() as vendor:
        models = _judge_file(tmp_path, vendor.base_url, "judge-down")
        argv = ("pool", "calibrate", "--paintings", folder, "--models-file", models)
        code, out, err = cli(*argv)
        first = len(vendor.calls("judge-down"))
        assert code == 1 and "call failed: HTTP 500" in out and "was disabled" not in err
        assert first == 2 * 2 * 4  # two candidates, two orders, four attempts each
        code, out, err = cli(*argv)
        assert code == 1 and len(vendor.calls("judge-down")) == 2 * first  # asked again
