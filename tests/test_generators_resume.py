"""Resuming rounds: failed critic calls are redone, paid replies keep their finish reason."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections import deque

import pytest
from test_generators_models import CRITIC_JSON, GOOD, _rows, write_models

from generators import critics, llm
from generators.batch import generate
from generators.loopback import LoopbackOpenAI
from generators.summary import format_summary
from refpool.intake.photos import import_folder
from renderer import extract_program

pytestmark = pytest.mark.usefixtures("fast_retries")  # the shared fixture in conftest


class CountingRenderer:
    """The real renderer, counting renders; `infra` makes every render an infrastructure error."""

    def __init__(self, real, infra: bool = False) -> None:
        self.real, self.infra, self.calls = real, infra, 0

    def render(self, source, seed=0, profile="reference"):
        self.calls += 1
        result = self.real.render(source, seed, profile)
        if self.infra:
            return dataclasses.replace(result, png=None, infra_error="browser crashed (test)")
        return result


class Replies:
    """Coder and critic replies from separate scripts; defaults when a script runs out."""

    def __init__(self, coder=(), critic=()):
        self.coder, self.critic = deque(coder), deque(critic)

    def __call__(self, body):
        if body["model"] == "loopback-vlm":
            return self.critic.popleft() if self.critic else {"content": CRITIC_JSON}
        return self.coder.popleft() if self.coder else {"content": GOOD}


def _run(store, photo_id, renderer, models, rounds):
    return generate(
        store,
        photo_ids=[photo_id],
        generators=("coder",),
        rounds=rounds,
        renderer=renderer,
        progress=False,
        critic="vlm",
        models_file=models,
    )


@pytest.mark.browser
def test_failed_critic_call_is_redone_on_rerun_without_recoding_or_rerendering(
    store,
    photo_id,
    renderer,
    tmp_path,
):
    path = tmp_path / "models.json"
    counting = CountingRenderer(renderer)
    with LoopbackOpenAI(default=Replies(critic=[{"status": 500}] * 4)) as server:
        summary = _run(store, photo_id, counting, write_models(path, server.base_url), rounds=2)
        models_seen = [r["model"] for r in server.requests]
    assert models_seen == ["loopback-coder"] + ["loopback-vlm"] * 4
    (r0,) = _rows(store)  # the chain stopped: round 1 is not built on a missing critique
    assert r0["outcome"] == "critic_error" and r0["critique"] is None
    assert r0["png_sha"] and r0["accepted"] and r0["critic_call_id"]
    m = summary["models"]["coder"]
    assert m["failures"] == {"critic_error": 1} and m["accepted"] == 0 and m["pending"] == 2
    assert counting.calls == 1

    with LoopbackOpenAI(default=Replies()) as server:
        again = _run(store, photo_id, counting, write_models(path, server.base_url), rounds=2)
        models_seen = [r["model"] for r in server.requests]
    # round 0: only the critique is redone; round 1: coded, rendered and critiqued
    assert models_seen == ["loopback-vlm", "loopback-coder", "loopback-vlm"]
    assert counting.calls == 2
    r0_again, r1 = _rows(store)
    assert r0_again["id"] == r0["id"] and r0_again["outcome"] == "ok"
    assert r0_again["render_id"] == r0["render_id"] and r0_again["coder_call_id"] == 1
    assert json.loads(r0_again["critique"])["critic"] == "vlm"
    assert r1["parent_id"] == r0["id"] and r1["outcome"] == "ok"
    m = again["models"]["coder"]
    assert m["failures"] == {} and m["accepted"] == 2 and m["pending"] == 0


@pytest.mark.browser
def test_paid_critic_reply_is_reused_after_a_crash(store, photo_id, renderer, tmp_path):
    real_judge = critics.VLMCritic.judge

    async def crash_after_critic(self, *args):
        await real_judge(self, *args)
        raise KeyboardInterrupt  # kill -9 after the critic answered, before the row was saved

    path = tmp_path / "models.json"
    with LoopbackOpenAI(default=Replies()) as server:
        models = write_models(path, server.base_url)
        critics.VLMCritic.judge = crash_after_critic
        try:
            with pytest.raises(KeyboardInterrupt):
                _run(store, photo_id, renderer, models, rounds=1)
        finally:
            critics.VLMCritic.judge = real_judge
        assert not store.query("SELECT 1 FROM candidates")
        _run(store, photo_id, renderer, models, rounds=1)
        assert [r["model"] for r in server.requests] == ["loopback-coder", "loopback-vlm"]
    (row,) = _rows(store)
    assert row["outcome"] == "ok" and json.loads(row["critique"])["critic"] == "vlm"
    assert row["critic_call_id"] == 2


@pytest.mark.browser
def test_unparseable_critic_reply_falls_back_and_says_so(store, photo_id, renderer, tmp_path):
    with LoopbackOpenAI(default=Replies(critic=[{"content": "Lovely petals!"}])) as server:
        models = write_models(tmp_path / "m.json", server.base_url)
        summary = _run(store, photo_id, renderer, models, 1)
    (row,) = _rows(store)
    critique = json.loads(row["critique"])
    assert row["outcome"] == "ok" and critique["critic"] == "heuristic"
    assert "VLM critic vlm reply unusable" in critique["summary"]
    assert summary["models"]["coder"]["critic_fallbacks"] == 1  # counted in the table
    assert "fallbk" in format_summary(summary)


def test_reused_paid_reply_keeps_its_finish_reason(store, tmp_path):
    """A length-cut reply reused after a crash is still `truncated`, not `ok` or `no_code`."""
    script = [{"content": GOOD, "finish": "length"}, {"content": "", "finish": "length"}]
    with LoopbackOpenAI(script=script) as server:
        cfg = llm.load_models(write_models(tmp_path / "m.json", server.base_url))["coder"]

        async def ask(key):
            endpoints = llm.Endpoints()
            try:
                msgs = [{"role": "user", "content": "paint"}]
                return await llm.chat(
                    store, endpoints, cfg, msgs, purpose="coder", temperature=0.6, job_key=key
                )
            finally:
                await endpoints.close()

        for key in ("cut-with-code", "cut-empty"):
            asyncio.run(ask(key))
    stored = store.query("SELECT finish_reason, refusal FROM model_calls ORDER BY id")
    assert [(r["finish_reason"], r["refusal"]) for r in stored] == [("length", None)] * 2
    for key in ("cut-with-code", "cut-empty"):
        call_id, result = llm.paid_reply(store, key)
        assert llm.classify(result, extract_program)[0] == "truncated", key


@pytest.mark.browser
def test_infra_error_retry_keeps_the_coders_real_outcome(store, photo_id, renderer, tmp_path):
    path = tmp_path / "models.json"
    broken = CountingRenderer(renderer, infra=True)
    with LoopbackOpenAI(default=Replies(coder=[{"content": GOOD, "finish": "length"}])) as server:
        models = write_models(path, server.base_url)
        generate(
            store,
            photo_ids=[photo_id],
            generators=("coder",),
            rounds=1,
            renderer=broken,
            progress=False,
            models_file=models,
        )
        (row,) = _rows(store)
        assert row["outcome"] == "infra_error" and broken.calls == 2  # tried twice
        generate(
            store,
            photo_ids=[photo_id],
            generators=("coder",),
            rounds=1,
            renderer=renderer,
            progress=False,
            models_file=models,
        )
        assert len(server.requests) == 1  # the program was re-rendered, not re-asked for
    (row,) = _rows(store)
    assert row["outcome"] == "truncated" and row["render_id"]


@pytest.mark.browser
def test_a_batch_started_before_derive_seed_still_resumes(
    refpool_home, sample_photos, renderer, monkeypatch
):
    """Chain seeds (and so job keys) changed to `derive_seed`; m006 rewrites old keys, so a
    rerun of an old batch finds its finished rounds instead of painting (paying) again."""
    from factories import png_bytes

    from refpool.core.store import Store, candidates, migrations

    before = [m for m in migrations.MIGRATIONS if m.__name__ != "m006_job_keys_from_derive_seed"]
    monkeypatch.setattr(migrations, "MIGRATIONS", before)
    old = Store(refpool_home)
    (photo,) = import_folder(old, sample_photos).imported[:1]
    base, slot = 3, 0
    old_seed = (base * 1_000_003 + photo.id * 7919 + slot * 104_729) % 2**31  # the old formula
    old_key = f"photo{photo.sha256[:16]}/procedural/slot{slot}/seed{old_seed}/round0"
    cid = candidates.save(
        old,
        {
            "job_key": old_key,
            "photo_id": photo.id,
            "generator": "procedural",
            "round": 0,
            "seed": old_seed,
            "program_sha": old.put_program("// painted before the change\n"),
            "accepted": 1,
            "coverage": 0.2,
            "png_sha": old.put_png(png_bytes(0.9)),
        },
    )
    old.close()
    monkeypatch.undo()

    store = Store(refpool_home)  # applies m006
    summary = generate(
        store,
        photo_ids=[photo.id],
        candidates=1,
        rounds=1,
        seed=base,
        renderer=renderer,
        progress=False,
    )
    assert summary["new"] == 0, "the finished round was painted again"
    assert [c.id for c in candidates.list_candidates(store)] == [cid]
    assert candidates.get(store, cid).seed == old_seed  # rendered with it: kept
