"""Tool-call markup of more model families, and a fence indented in a numbered list.

Each reply comes over HTTP from the fake vendor (tests/fake_vendor_replies.py) through the
real openai client and generators.llm; the program must be found in it, fresh and as read
back from the store (a stored reply keeps its text as the model wrote it).
"""

from __future__ import annotations

import asyncio
import json

import fake_vendor as fv
import pytest

from generators import llm
from generators.llm import load_models
from refpool.core.reply import read_message
from renderer import extract_program, static_check

pytestmark = pytest.mark.usefixtures("fast_retries")  # the shared fixture in conftest

WHOLE = fv.SKETCH + "\n"


def ask(store, vendor, tmp_path, style):
    cfg = load_models(fv.models_file(tmp_path / f"{style}.json", vendor.base_url, [style]))[style]

    async def go():
        endpoints = llm.Endpoints()
        try:
            msgs = [{"role": "user", "content": "paint a flower"}]
            return await llm.chat(
                store, endpoints, cfg, msgs, purpose="coder", temperature=0.6, job_key=style
            )
        finally:
            await endpoints.close()

    return asyncio.run(go())


@pytest.mark.parametrize(
    "style",
    [
        "tool-deepseek",  # V3/R1: function<sep>write_file, then a ```json fence
        "tool-deepseek-v31",  # V3.1: write_file<sep>{json}
        "tool-kimi",  # K2: functions.write_file:0<argument_begin>{json}
        "tool-minimax",  # M2: <invoke name=…><parameter name="content">
        "tool-llama-function",  # <function=write_file>{json}</function>
        "numbered-list",  # a fence indented by four inside "1. …"
    ],
)
def test_the_program_is_found_in_more_families_markup(store, tmp_path, style):
    with fv.FakeVendor() as vendor:
        result = ask(store, vendor, tmp_path, style)
    assert llm.classify(result, extract_program) == ("ok", WHOLE)
    stored = llm.recorded_reply(store, result.call_id)
    assert stored is not None and llm.classify(stored, extract_program) == ("ok", WHOLE)
    assert static_check(WHOLE) == []
    assert "tool" not in result.reply.answer and "｜" not in result.reply.answer  # no markup left


def test_each_calls_arguments_are_kept_in_order():
    first = json.dumps({"path": "a.js", "content": "// a"})
    second = json.dumps({"path": "b.js", "content": "// b"})
    text = (
        "<|tool_calls_section_begin|>"
        f"<|tool_call_begin|>functions.write_file:0<|tool_call_argument_begin|>{first}"
        "<|tool_call_end|>"
        f"<|tool_call_begin|>functions.write_file:1<|tool_call_argument_begin|>{second}"
        "<|tool_call_end|><|tool_calls_section_end|>"
    )
    reply = read_message({"content": text})
    assert reply.answer == ""
    assert [a["path"] for a in reply.tool_args] == ["a.js", "b.js"]
    assert reply.tool_texts == ("// a", "// b")


def test_markup_that_holds_no_call_stays_in_the_answer():
    # a cut-off call, and prose after a marker: left as they were, to be read as text
    cut = '<｜tool▁call▁begin｜>write_file<｜tool▁sep｜>{"content": "function setup() {'
    assert read_message({"content": cut}).tool_args == ()
    assert "write_file" in read_message({"content": cut}).answer
    prose = "<function=write_file>I would rather describe it.</function>"
    assert read_message({"content": prose}).answer == prose


def _listed(indent: str) -> str:
    body = "\n".join(f"{indent}{line}" if line else "" for line in fv.SKETCH.split("\n"))
    return f"1. Here is the sketch:\n\n{indent}```js\n{body}\n{indent}```\n\n2. Run it."


@pytest.mark.parametrize("indent", ["   ", "    ", "      ", "\t"])
def test_a_fence_indented_in_a_numbered_list_is_found_and_dedented(indent):
    assert extract_program(_listed(indent)) == WHOLE


def test_a_flush_fence_keeps_its_lines_as_written():
    # no indent to take off: the indented lines of the sketch stay as they are
    text = f"```js\n{fv.SKETCH}\n```"
    assert extract_program(text) == WHOLE
