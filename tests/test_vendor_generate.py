"""`refpool generate` against the fake vendor: every chain finishes with the right outcome.

The command runs in-process through refpool.cli.main; only the renderer is the tests' shared
warm one (a fresh Chromium per run would add nothing but time).
"""

from __future__ import annotations

import json

import fake_vendor as fv
import pytest

from generators import batch
from refpool.intake.photos import import_folder

# style -> (outcome of its round, accepted by the gate)
EXPECTED = {
    "polite": ("ok", True),
    "truncated-json": ("ok", True),
    "error-200": ("ok", True),
    "empty-choices": ("ok", True),
    "kimi-think": ("ok", True),
    "two-blocks": ("ok", True),
    "first-html": ("ok", True),
    "first-json": ("ok", True),
    "first-text": ("ok", True),
    "first-jsx": ("ok", True),
    "first-ts": ("ok", True),
    "prose-bare": ("ok", True),
    "crlf": ("ok", True),
    "slow-drip": ("ok", True),
    "retry-after-seconds": ("ok", True),
    "retry-after-date": ("ok", True),
    "refusal-field": ("refusal", False),
    "curly-refusal": ("refusal", False),
    "reasoning-only": ("reasoning_code", True),
    "key-echo-401": ("http_error", False),
}


pytestmark = pytest.mark.usefixtures("fast_retries")


def _outcomes(store):
    rows = store.query("SELECT * FROM candidates ORDER BY id")
    return {r["generator"]: r for r in rows}


@pytest.mark.browser
def test_generate_finishes_every_chain_against_a_real_world_vendor(
    store, photo_id, cli, tmp_path, monkeypatch
):
    monkeypatch.setenv("FAKE_KEY", "hf_SecretKeyT123")
    styles = [*EXPECTED, "critic-lenient"]
    with fv.FakeVendor() as vendor:
        models = fv.models_file(tmp_path / "m.json", vendor.base_url, styles)
        data = json.loads((tmp_path / "m.json").read_text())
        data["models"]["key-echo-401"]["key_env"] = "FAKE_KEY"
        (tmp_path / "m.json").write_text(json.dumps(data))
        status, out, err = cli(
            "generate", "--photos", photo_id, "--generator", *EXPECTED, "--critic",
            "critic-lenient", "--candidates", 1, "--rounds", 1, "--models-file", models,
            "--json", "--no-progress",
        )  # fmt: skip
    summary = json.loads(out)
    rows = _outcomes(store)
    got = {style: (rows[style]["outcome"], bool(rows[style]["accepted"])) for style in EXPECTED}
    assert got == EXPECTED
    # the one bad key stopped its own model only, said so once, and the exit status says so
    assert status == 1 and err.count("was disabled") == 1 and "HTTP 401" in err
    assert "coder key-echo-401 (fake/key-echo-401" in err
    assert "T123" not in err and "T123" not in json.dumps(summary)
    # every coded round was critiqued by the lenient VLM critic, none fell back
    critiqued = [r for r in rows.values() if r["png_sha"]]
    assert all(json.loads(r["critique"])["critic"] == "critic-lenient" for r in critiqued)
    assert all(m["critic_fallbacks"] == 0 for m in summary["models"].values())
    assert summary["models"]["reasoning-only"]["from_reasoning"] == 1
    bad_first = store.query(
        "SELECT model, error FROM model_calls WHERE outcome != 'ok' AND purpose = 'coder'"
    )
    errors = {r["model"].removeprefix("fake/"): r["error"] for r in bad_first}
    assert "Unterminated string" in errors["truncated-json"]
    assert "upstream model overloaded" in errors["error-200"]
    assert "no reply within 1.5 s" in errors["slow-drip"]


@pytest.mark.browser
def test_a_critic_that_cannot_take_images_is_disabled_once_and_not_repaid(
    store, photo_id, cli, tmp_path
):
    with fv.FakeVendor() as vendor:
        models = fv.models_file(
            tmp_path / "m.json", vendor.base_url, ["polite", "critic-no-images"], concurrency=1
        )
        args = [
            "generate", "--photos", photo_id, "--generator", "polite", "--critic",
            "critic-no-images", "--candidates", 3, "--rounds", 2, "--models-file", models,
            "--no-progress",
        ]  # fmt: skip
        code, _, err = cli(*args)
        assert code == 1
        assert err.count("image input not supported") == 1  # one message, naming the model
        assert "critic critic-no-images (fake/critic-no-images" in err and "HTTP 400" in err
        assert len(vendor.calls("critic-no-images")) == 1  # the other chains did not pay
        rows = store.query("SELECT outcome, png_sha FROM candidates")
        assert len(rows) == 3 and all(r["outcome"] == "critic_error" and r["png_sha"] for r in rows)

        code, _, err = cli(*args)
        assert code == 1  # a rerun does not ask again ...
        assert "refused permanently" in err and "--retry-failed" in err
        assert len(vendor.calls("critic-no-images")) == 1
        assert len(vendor.calls("polite")) == 3

        assert cli(*args, "--retry-failed").code == 1  # ... unless told to
        assert len(vendor.calls("critic-no-images")) == 2
        assert len(vendor.calls("polite")) == 3  # programs and renders were kept


def test_an_endpoints_limit_is_the_lowest_of_its_models(store, sample_photos, tmp_path):
    import_folder(store, sample_photos)
    with fv.FakeVendor() as vendor:
        vendor.delay_s = 0.3  # hold each request in flight a while
        path = tmp_path / "m.json"
        fv.models_file(path, vendor.base_url, ["curly-refusal", "refusal-field"])
        data = json.loads(path.read_text())
        data["models"]["curly-refusal"]["concurrency"] = 3  # asked for first
        data["models"]["refusal-field"]["concurrency"] = 1
        path.write_text(json.dumps(data))
        summary = batch.generate(
            store,
            generators=("curly-refusal", "refusal-field"),
            candidates=2,
            rounds=1,
            concurrency=4,
            renderer=object(),  # refusals render nothing
            progress=False,
            models_file=str(path),
        )
        assert len(vendor.requests) == 12 and vendor.max_in_flight == 1
    assert summary["models"]["curly-refusal"]["failures"] == {"refusal": 6}


def test_one_chains_unexpected_error_stops_only_that_chain(store, photo_id, tmp_path, monkeypatch):
    from generators.coders import ModelCoder

    real_write = ModelCoder.write

    async def write(self, store_, job, round_, prev):
        if self.name == "refusal-field":
            raise ValueError("a bug in one chain")
        return await real_write(self, store_, job, round_, prev)

    monkeypatch.setattr(ModelCoder, "write", write)
    with fv.FakeVendor() as vendor:
        path = fv.models_file(
            tmp_path / "m.json", vendor.base_url, ["curly-refusal", "refusal-field"]
        )
        summary = batch.generate(
            store,
            photo_ids=[photo_id],
            generators=("refusal-field", "curly-refusal"),
            candidates=2,
            rounds=2,
            renderer=object(),
            progress=False,
            models_file=path,
        )
    assert summary["models"]["curly-refusal"]["failures"] == {"refusal": 4}
    assert len(summary["chain_errors"]) == 2 and "a bug in one chain" in summary["chain_errors"][0]
