"""refpool.core.loose_json: objects found in prose and read leniently, by one scanner that
knows strings and comments."""

from __future__ import annotations

import pytest

from refpool.core import loose_json


def found(text: str) -> list[str]:
    return [text[start:end] for start, end in loose_json.objects(text)]


def test_objects_are_found_outermost_first_past_braces_in_strings_and_comments():
    text = (
        'Sure! {"winner": "A", "why": "a } in a string", "n": {"x": 1}} then'
        ' {"b": 2 // a } in a comment\n} and {"c": "\\" }"} end'
    )
    assert found(text) == [
        '{"winner": "A", "why": "a } in a string", "n": {"x": 1}}',
        '{"b": 2 // a } in a comment\n}',
        '{"c": "\\" }"}',  # the escaped quote does not end the string
    ]


def test_an_object_that_never_closes_ends_the_search():
    assert found('{"a": 1} {"b": {"c": 2} /* } never closed') == ['{"a": 1}']
    assert found('{"a": "open string }') == []


def test_load_reads_comments_trailing_commas_and_python_literals():
    assert loose_json.load('{"a": [1, 2,], // note\n "b": {"c": null,}, /* x */ }') == {
        "a": [1, 2],
        "b": {"c": None},
    }
    assert loose_json.load("{'winner': 'B', 'sure': True, 'score': None}") == {
        "winner": "B",
        "sure": True,
        "score": None,
    }
    assert loose_json.load('{"url": "http://x.org/a", "n": "/* kept */"}') == {
        "url": "http://x.org/a",
        "n": "/* kept */",
    }
    with pytest.raises(ValueError):
        loose_json.load('{"a": }')


def test_a_comma_before_a_bracket_inside_a_string_is_the_models_text():
    # only a trailing comma outside strings is dropped; the reason is kept as written
    assert loose_json.load('{"reason": "darker, ] and wetter, }",}') == {
        "reason": "darker, ] and wetter, }"
    }
