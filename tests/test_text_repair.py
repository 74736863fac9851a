"""Strings from outside (replies, sketch errors) can always be stored and printed."""

import json
import sqlite3

from refpool.core.text import repair_data, repair_text


def test_a_lone_surrogate_becomes_the_replacement_character_and_can_be_stored() -> None:
    raw = json.loads('"bad \\ud83c end"')  # valid JSON, not valid Unicode
    fixed = repair_text(raw)
    assert fixed == "bad \ufffd end"
    fixed.encode("utf-8")  # would raise before the repair
    db = sqlite3.connect(":memory:")
    db.execute("create table t (s text)")
    db.execute("insert into t values (?)", (fixed,))
    assert db.execute("select s from t").fetchone()[0] == fixed


def test_a_split_pair_is_joined_and_good_text_is_untouched() -> None:
    assert repair_text("\ud83c\udf3a") == "\U0001f33a"
    assert repair_text("hibiscus \U0001f33a ok") == "hibiscus \U0001f33a ok"


def test_repair_reaches_every_string_in_nested_data() -> None:
    data = {"a\udc00": ["x\ud800", {"k": "\udfff"}], "n": 3}
    assert repair_data(data) == {"a\ufffd": ["x\ufffd", {"k": "\ufffd"}], "n": 3}
    json.dumps(repair_data(data), ensure_ascii=False).encode("utf-8")
