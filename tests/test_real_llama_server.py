"""Opt-in: refpool against a real llama.cpp server (llama-cpp-python's `llama_cpp.server`).

CI skips this. To run it, start a server and point REFPOOL_LLAMA_SERVER at its /v1 URL (see
the recipe in docs/development.md), then:

    REFPOOL_LLAMA_SERVER=http://127.0.0.1:8765/v1 .venv/bin/python -m pytest -s -m real_server \
        tests/test_real_llama_server.py

A 135M model paints badly; what is checked is that every chain ends with an honest outcome,
nothing crashes, every request is a recorded call, a rerun pays for nothing twice, and a
server that refuses a request shape (image parts to a text-only model, json_schema) is named.
The figures are printed (-s shows them).
"""

from __future__ import annotations

import functools
import json
import os
import urllib.request
from typing import Any

import pytest
from judge_fakes import painting

from generators import batch
from refpool.cli import main
from refpool.intake.photos import import_folder

SERVER = os.environ.get("REFPOOL_LLAMA_SERVER", "")
pytestmark = [
    pytest.mark.real_server,
    pytest.mark.browser,
    pytest.mark.skipif(not SERVER, reason="set REFPOOL_LLAMA_SERVER to a llama.cpp /v1 URL"),
]
HONEST = {"ok", "truncated", "refusal", "no_code", "empty_reasoning", "reasoning_code"}
HONEST |= {"http_error", "timeout", "critic_error"}


def _model_id(base_url: str) -> str:
    with urllib.request.urlopen(f"{base_url.rstrip('/')}/models", timeout=30) as reply:
        return json.load(reply)["data"][0]["id"]  # the GGUF's path, as the server reports it


def _models_file(path, base_url: str, **judge) -> str:
    model = _model_id(base_url)
    common: dict[str, Any] = {"model": model, "base_url": base_url, "key_env": None}
    common["timeout_s"] = 600
    common |= {"concurrency": 1, "max_tokens": 300, "temperatures": [0.6]}
    entries = {
        "llama": common | {"roles": ["coder"]},
        "llama-critic": common | {"roles": ["critic"], "accepts_images": True},
        "llama-judge": common | {"roles": ["judge"], "accepts_images": True} | judge,
    }
    path.write_text(json.dumps({"models": entries}))
    return str(path)


def _counts(store) -> dict[str, int]:
    rows = store.query("SELECT purpose, outcome, COUNT(*) AS n FROM model_calls GROUP BY 1, 2")
    return {f"{r['purpose']}/{r['outcome']}": r["n"] for r in rows}


def test_generate_calibrate_and_a_critic_against_a_real_llama_server(
    store, sample_photos, renderer, monkeypatch, capsys, tmp_path
):
    monkeypatch.setattr(batch, "generate", functools.partial(batch.generate, renderer=renderer))
    import_folder(store, sample_photos)
    photo = store.query("SELECT id FROM photos ORDER BY id LIMIT 1")[0]["id"]
    models = _models_file(tmp_path / "m.json", SERVER)
    argv = ["generate", "--photos", photo, "--generator", "procedural", "llama", "--critic",
            "llama-critic", "--candidates", 1, "--rounds", 2, "--models-file", models,
            "--no-progress"]  # fmt: skip
    code = main([str(a) for a in argv])
    first = capsys.readouterr()
    assert code in (0, 1), first.err
    outcomes = [r["outcome"] for r in store.query("SELECT outcome FROM candidates")]
    assert outcomes and set(outcomes) <= HONEST
    calls = _counts(store)
    main([str(a) for a in argv])  # a rerun
    rerun = capsys.readouterr()
    after = _counts(store)
    paid = {k: v for k, v in calls.items() if k.endswith("/ok")}
    assert {k: after.get(k, 0) for k in paid} == paid  # nothing already paid for, paid again
    print(f"\ngenerate: outcomes {outcomes}; calls {calls}; after a rerun {after}")
    print(f"generate stderr:\n{first.err}\nrerun stderr:\n{rerun.err}")

    folder = tmp_path / "policy"  # a policy painting none of the candidates is
    folder.mkdir()
    (folder / "p0.png").write_bytes(painting(0.3, colour=(170, 50, 90)))
    cal = ["pool", "calibrate", "--judge", "llama-judge", "--paintings", str(folder)]
    code = main([*cal, "--models-file", models])
    judged = capsys.readouterr()
    assert code == (1 if "structured_output" in judged.err else 0), judged.err  # stopped: 1
    print(f"calibrate (default json_schema): {_counts(store)}\n{judged.out}\n{judged.err}")
    assert "structured_output" in judged.err or "unresolved" not in judged.out
    models = _models_file(tmp_path / "m2.json", SERVER, structured_output="json_object")
    code = main([*cal, "--models-file", models])
    judged = capsys.readouterr()
    assert code == 0, judged.err
    assert "unresolved" not in judged.out or "judge calls failed" in judged.err
    print(f"calibrate (json_object): {_counts(store)}\n{judged.out}\n{judged.err}")
