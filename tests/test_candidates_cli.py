"""One candidate, whole, without SQL (issue 33, item 8): `refpool candidates show ID [--json]`
gives its photo, prompt, reply, violations, critique chain and ratings; `candidates list`
shows the violations and filters by outcome, violation code, tier, model, photo and round."""

from __future__ import annotations

import json

from factories import add_candidate, add_photo

from curation.ratings import record_rating
from refpool.cli import main
from refpool.core.contracts import ModelCall
from refpool.core.store import candidates, model_calls

PROMPT = "Paint this dahlia as a p5.brush watercolour."
REPLY = "```js\nfunction setup() { text('hi', 0, 0); }\n```"


def _store_with_a_rejected_model_candidate(store) -> dict[str, int]:
    rose, tulip = add_photo(store, "rose.jpg"), add_photo(store, "tulip.jpg")
    first = add_candidate(store, rose, "coder-a", round_=0, hue=0.1, seed=1)
    call = model_calls.save(
        store,
        ModelCall(
            model="org/coder-7b",
            base_url="http://127.0.0.1:9/v1",
            purpose="coder",
            messages=[{"role": "user", "content": PROMPT}],
            params={"temperature": 0.6},
            outcome="ok",
            response=REPLY,
            prompt_tokens=120,
            completion_tokens=40,
            served_model="org/coder-7b-fp8",
        ),
    )
    rejected = add_candidate(store, rose, "coder-a", round_=1, hue=0.2, seed=1, parent_id=first)
    candidates.save(
        store,
        {
            "accepted": 0,
            "coder_call_id": call,
            "violations": [{"code": "E_TEXT", "message": "text() draws type", "line": 1}],
        },
        existing=rejected,
    )
    other = add_candidate(store, tulip, "procedural", round_=0, hue=0.7, seed=2)
    record_rating(store, first, "ana", "love")
    record_rating(store, rejected, "ana", "reject")
    record_rating(store, rejected, "bo", "okay")
    return {"first": first, "rejected": rejected, "other": other, "tulip": tulip}


def _listed(capsys, *words: str) -> list[int]:
    assert main(["candidates", "list", "--json", *words]) == 0
    return [r["id"] for r in json.loads(capsys.readouterr().out)]


def test_show_gives_the_whole_candidate(store, capsys):
    ids = _store_with_a_rejected_model_candidate(store)
    assert main(["candidates", "show", str(ids["rejected"]), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["gate"] == "rejected" and record["photo"]["file_name"] == "rose.jpg"
    assert [v["code"] for v in record["violations"]] == ["E_TEXT"]
    call = record["coder_call"]
    assert call["prompt"] == [{"role": "user", "content": PROMPT}] and call["reply"] == REPLY
    assert (call["model"], call["served_model"]) == ("org/coder-7b", "org/coder-7b-fp8")
    assert [s["id"] for s in record["chain"]] == [ids["first"], ids["rejected"]]
    assert record["ratings"] == {"ana": "reject", "bo": "okay"} and record["tier"] == "reject"
    assert record["program"].startswith("// test program")

    assert main(["candidates", "show", str(ids["rejected"])]) == 0
    text = capsys.readouterr().out
    for expected in (
        "gate rejected",
        "photo 1  rose.jpg",
        "E_TEXT (line 1): text() draws type",
        "coder call #",
        f"user: {PROMPT}",
        "reply: ```js",
        "critique chain:",
        "ratings: ana reject, bo okay  (final: reject)",
    ):
        assert expected in text, expected


def test_list_shows_violations_and_filters(store, capsys):
    ids = _store_with_a_rejected_model_candidate(store)
    assert main(["candidates", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "violations" in lines[0]
    (row,) = [line for line in lines if line.split()[:1] == [str(ids["rejected"])]]
    assert "E_TEXT" in row and "rejected" in row

    assert _listed(capsys, "--violation", "E_TEXT") == [ids["rejected"]]
    assert _listed(capsys, "--outcome", "rejected") == [ids["rejected"]]
    assert _listed(capsys, "--outcome", "accepted") == [ids["first"], ids["other"]]
    assert _listed(capsys, "--tier", "love") == [ids["first"]]
    assert _listed(capsys, "--tier", "unrated") == [ids["other"]]
    assert _listed(capsys, "--model", "procedural") == [ids["other"]]
    assert _listed(capsys, "--model", "org/coder-7b-fp8") == [ids["rejected"]]
    assert _listed(capsys, "--photo", "tulip.jpg") == [ids["other"]]
    assert _listed(capsys, "--photo", str(ids["tulip"])) == [ids["other"]]
    assert _listed(capsys, "--round", "1") == [ids["rejected"]]
    assert _listed(capsys, "--model", "coder-a", "--round", "0") == [ids["first"]]


def test_show_of_a_missing_candidate_says_where_to_look(store, capsys):
    assert main(["candidates", "show", "99"]) != 0
    assert "candidates list" in capsys.readouterr().err
