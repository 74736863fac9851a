"""The models file: explicit vendor fields, strict keys, key defaults, roles, round counts."""

from __future__ import annotations

import asyncio
import json

import fake_vendor as fv
import pytest

from generators import llm
from generators.analysis import analyse_path
from generators.batch import generate
from generators.coders import ModelCoder
from generators.jobs import Job, Previous
from generators.llm import load_models
from refpool.core.store.photos import photo_file
from refpool.intake.photos import import_folder


def _write(tmp_path, **entry):
    path = tmp_path / "models.json"
    base = {"model": "fake/polite", "base_url": "http://127.0.0.1:9/v1"}
    path.write_text(json.dumps({"models": {"mine": base | entry}}))
    return str(path)


def test_unknown_fields_are_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match=r"model 'mine': unknown field\(s\) 'extra_bdy'") as err:
        load_models(_write(tmp_path, extra_bdy={"x": 1}))
    assert "extra_body" in str(err.value)  # the error lists the fields that exist


def test_hf_token_goes_only_to_the_router_by_default(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_do_not_send_me_anywhere")
    mine = load_models(_write(tmp_path))["mine"]
    assert mine.key_env is None and mine.api_key() == "not-needed"
    router = load_models(_write(tmp_path, base_url="https://router.huggingface.co/v1"))["mine"]
    assert router.key_env == "HF_TOKEN"
    with fv.FakeVendor() as vendor:
        cfg = load_models(_write(tmp_path, base_url=vendor.base_url))["mine"]
        _ask(cfg)
        (_, _, _, headers) = vendor.requests[0]
    auth = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
    assert "hf_do_not_send_me_anywhere" not in auth


def _ask(cfg):
    from refpool.core.store import Store

    async def go(store):
        endpoints = llm.Endpoints()
        try:
            msgs = [{"role": "user", "content": "paint"}]
            return await llm.chat(store, endpoints, cfg, msgs, purpose="coder", temperature=0.6)
        finally:
            await endpoints.close()

    store = Store.open()
    try:
        return asyncio.run(go(store))
    finally:
        store.close()


def test_extra_body_and_headers_reach_the_server(tmp_path):
    with fv.FakeVendor() as vendor:
        path = _write(
            tmp_path,
            base_url=vendor.base_url,
            extra_body={"chat_template_kwargs": {"enable_thinking": False}, "top_k": 20},
            headers={"X-Tenant": "studio"},
        )
        result = _ask(load_models(path)["mine"])
        (_, _, body, headers) = vendor.requests[0]
    assert result.outcome == "ok"
    assert body["chat_template_kwargs"] == {"enable_thinking": False} and body["top_k"] == 20
    assert {k.lower(): v for k, v in headers.items()}["x-tenant"] == "studio"


def test_presets_turn_thinking_off_where_a_model_thinks():
    models = load_models()
    for name in ("glm-5.2", "kimi-k3", "qwen3.5-122b-a10b"):
        assert models[name].extra_body.get("chat_template_kwargs"), name
    assert "critic" in models["qwen3.5-122b-a10b"].roles
    assert models["glm-5.2"].roles == ("coder",)


def test_roles_are_used_and_parseable(tmp_path, store, sample_photos):
    import_folder(store, sample_photos)
    path = _write(tmp_path, roles=["critic"], accepts_images=True)
    with pytest.raises(ValueError, match="'mine' is not declared as a coder"):
        generate(store, generators=("mine",), renderer=object(), progress=False, models_file=path)
    path = _write(tmp_path, roles=["coder"])
    with pytest.raises(ValueError, match="'mine' is not declared as a critic"):
        generate(store, critic="mine", renderer=object(), progress=False, models_file=path)
    assert load_models(_write(tmp_path, roles=["judge"]))["mine"].roles == ("judge",)
    with pytest.raises(ValueError, match="roles must be a list of coder, critic, judge"):
        load_models(_write(tmp_path, roles=["painter"]))


def test_the_revise_prompt_states_the_real_round_count(store, sample_photos, tmp_path):
    (photo,) = import_folder(store, sample_photos).imported[:1]
    path = photo_file(store, photo)
    job = Job(photo, analyse_path(str(path)), path.read_bytes(), "mine", 0, 1, 0.6, rounds=5)
    coder = ModelCoder(load_models(_write(tmp_path))["mine"], llm.Endpoints())
    prev = Previous(0, fv.SKETCH, None, None)
    text = json.dumps(coder.messages(job, 1, prev))
    assert "round 2 of 5" in text and "of 3" not in text


def test_structured_output_is_a_field_and_json_mode_says_what_replaced_it(tmp_path):
    assert load_models(_write(tmp_path))["mine"].structured_output is None  # the role decides
    cfg = load_models(_write(tmp_path, structured_output="json_object"))["mine"]
    assert llm.response_format(cfg, "judge", {"type": "object"}) == {
        "response_format": {"type": "json_object"}
    }
    default = load_models(_write(tmp_path))["mine"]
    assert llm.response_format(default, "critic") is None
    assert llm.response_format(default, "judge", {"type": "object"})["response_format"]["type"] == (
        "json_schema"
    )
    with pytest.raises(ValueError, match="structured_output must be one of none, json_object"):
        load_models(_write(tmp_path, structured_output="yes"))
    with pytest.raises(ValueError, match="'json_mode' is retired: use \"structured_output\""):
        load_models(_write(tmp_path, json_mode=True))
