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


def test_a_brace_that_never_closes_does_not_hide_the_objects_after_it():
    # a `{` in a comment in the prose between objects: the final answer is still found
    text = 'Draft: {"winner": "A"} // maybe {not\nFinal answer: {"winner": "B"}'
    assert found(text) == ['{"winner": "A"}', '{"winner": "B"}']
    assert found('I use { as a symbol. {"score": 3}') == ['{"score": 3}']
    assert found('Note the "{" token. {"winner": "A"} /* and { */ {"winner": "B"}') == [
        '{"winner": "A"}',
        '{"winner": "B"}',
    ]
    # a reply cut off inside an object: what did close inside it is still offered
    assert found('{"a": 1} {"b": {"c": 2} /* } never closed') == ['{"a": 1}', '{"c": 2}']
    assert found('{"a": "open string }') == []
    assert found("{ { {") == []


@pytest.mark.parametrize(
    "prose",
    [
        "{" * 200_000,
        '{"' * 100_000,
        '{"' + '{\\"' * 66_000,  # each `{` inside the string the one before it opened
        "// {\n" * 40_000,
        "{/*" * 66_000 + "\n",
        "{//" * 66_000 + "\n",
    ],
)
def test_a_reply_of_unclosed_braces_is_read_once_and_its_answer_found(prose):
    # each start's scan meets an earlier one and takes its answer, so this stays linear;
    # rescanning from every `{` would take minutes
    assert found(prose + '{"winner": "B"}') == ['{"winner": "B"}']


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
