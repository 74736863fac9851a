"""Reply shapes for the fake vendor (tests/fake_vendor.py): how real servers wrap an answer.

Each is a style (`fake/<style>`) the fake vendor answers with: tool calls (OpenAI's
`tool_calls`, the legacy `function_call`, and the markup vLLM/SGLang leave in the text when no
tool parser runs: Hermes, Qwen3-Coder XML, GLM XML, Mistral), HTML-escaped code, an "Option B"
fragment after the whole sketch, content as a list of parts, reasoning in every form, a 3 MB
runaway and a reply of hundreds of drafts; critics that nest their scores or use another
scale; and judges that think before they answer, or answer in the many readable ways (a bare
letter, prose, MT-Bench's [[A]]) and the unreadable ones. A judge style sees the two images
and wraps the true verdict (more paint wins; A when equal).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fake_vendor import CRITIC, DRAFT, FENCED, SKETCH, Answer, completion


def message_answer(message: dict[str, Any], finish: str = "stop") -> Answer:
    """A completion whose message is given whole (content parts, tool calls, reasoning)."""
    payload = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant"} | message, "finish_reason": finish}
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 340, "total_tokens": 460},
    }
    return Answer(body=json.dumps(payload).encode())


def _write_file(arguments: Any) -> dict[str, Any]:
    return {
        "id": "call_1",
        "type": "function",
        "function": {"name": "write_file", "arguments": arguments},
    }


_FILE = {"path": "sketch.js", "content": SKETCH}
# A sketch with `<` and `&&`, as a server that HTML-escapes its output sends it.
AMP_SKETCH = SKETCH.replace("brush.noStroke();", "if (width > 0 && height < 900) brush.noStroke();")
_ESCAPED = AMP_SKETCH.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
_OPTION_B = "function draw() {\n  brush.fill('#3a6ea5', 210);\n  brush.circle(300, 300, 90);\n}"
BROKEN_DRAFT = SKETCH.replace("noLoop();", "noLoop(;")  # a whole sketch that does not parse
RUNAWAY = "```js\n" + SKETCH + "\n" + "brush.circle(300, 300, 28);\n" * 110_000  # ~3 MB, cut


def _many_drafts(n: int) -> str:
    return "\n".join(f"Draft {i}:\n```js\n{BROKEN_DRAFT}\n// {i}\n```" for i in range(n))


REPLY_STYLES: dict[str, Callable[[int], Answer]] = {
    "tool-write-file": lambda nth: message_answer(
        {"content": None, "tool_calls": [_write_file(json.dumps(_FILE))]}, "tool_calls"
    ),
    "tool-args-object": lambda nth: message_answer(
        {"content": "", "tool_calls": [_write_file(_FILE)]}, "tool_calls"
    ),
    "tool-legacy-function-call": lambda nth: message_answer(
        {"content": None, "function_call": {"name": "write_file", "arguments": json.dumps(_FILE)}}
    ),
    "tool-hermes-text": lambda nth: completion(
        '<tool_call>\n{"name": "write_file", "arguments": ' + json.dumps(_FILE) + "}\n</tool_call>"
    ),
    "tool-qwen3-xml": lambda nth: completion(
        "<tool_call>\n<function=write_file>\n<parameter=path>\nsketch.js\n</parameter>\n"
        f"<parameter=content>\n{SKETCH}\n</parameter>\n</function>\n</tool_call>"
    ),
    "tool-glm-xml": lambda nth: completion(
        "I will write the file.<tool_call>write_file\n<arg_key>path</arg_key>\n"
        f"<arg_value>sketch.js</arg_value>\n<arg_key>content</arg_key>\n<arg_value>{SKETCH}"
        "</arg_value>\n</tool_call>"
    ),
    "tool-mistral": lambda nth: completion(
        '[TOOL_CALLS][{"name": "write_file", "arguments": ' + json.dumps(_FILE) + "}]"
    ),
    # more families' markup (issue 31): DeepSeek V3/R1 and V3.1, Kimi K2, MiniMax M2, Llama
    "tool-deepseek": lambda nth: completion(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>write_file\n```json\n"
        + json.dumps(_FILE)
        + "\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
    "tool-deepseek-v31": lambda nth: completion(
        "I will write it.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>write_file<｜tool▁sep｜>"
        + json.dumps(_FILE)
        + "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
    "tool-kimi": lambda nth: completion(
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.write_file:0"
        f"<|tool_call_argument_begin|>{json.dumps(_FILE)}<|tool_call_end|>"
        "<|tool_calls_section_end|>"
    ),
    "tool-minimax": lambda nth: completion(
        '<minimax:tool_call>\n<invoke name="write_file">\n<parameter name="path">sketch.js'
        f'</parameter>\n<parameter name="content">{SKETCH}</parameter>\n</invoke>\n'
        "</minimax:tool_call>"
    ),
    "tool-llama-function": lambda nth: completion(
        f"<function=write_file>{json.dumps(_FILE)}</function>"
    ),
    "numbered-list": lambda nth: completion(
        "1. Here is the sketch:\n\n    ```js\n"
        + "\n".join(f"    {line}" if line else "" for line in SKETCH.split("\n"))
        + "\n    ```\n\n2. Open it in the studio."
    ),
    "html-escaped": lambda nth: completion(f"Here it is:\n```js\n{_ESCAPED}\n```"),
    "option-b": lambda nth: completion(
        f"Option A, the full sketch:\n{FENCED}\nOption B, if you prefer blue, replace draw():"
        f"\n```js\n{_OPTION_B}\n```"
    ),
    "content-parts": lambda nth: message_answer(
        {"content": [{"type": "text", "text": "Here you go:\n"}, {"type": "text", "text": FENCED}]}
    ),
    "thinking-parts": lambda nth: message_answer(
        {
            "content": [
                {
                    "type": "thinking",
                    "thinking": [{"type": "text", "text": f"Draft:\n```js\n{DRAFT}\n```"}],
                },
                {"type": "text", "text": FENCED},
            ]
        }
    ),
    "reasoning-field": lambda nth: message_answer(
        {"content": FENCED, "reasoning": f"Draft:\n```js\n{DRAFT}\n```"}
    ),
    "think-no-opener": lambda nth: completion(f"Draft:\n```js\n{DRAFT}\n```\n</think>\n{FENCED}"),
    "think-cut": lambda nth: completion(
        f"<think>Draft:\n```js\n{DRAFT}\n```\nand the", finish="length"
    ),
    "runaway-length": lambda nth: completion(RUNAWAY, finish="length"),
    "many-drafts": lambda nth: completion(_many_drafts(300)),
    # critics: the scores nested, on other scales, and behind reasoning
    "critic-nested": lambda nth: completion(json.dumps({"critique": CRITIC})),
    "critic-percent": lambda nth: completion(
        json.dumps(
            {"scores": {"fidelity": 72, "watercolour": 85, "composition": 90, "coverage": 8}}
        )
    ),
    "critic-five-scale": lambda nth: completion(
        json.dumps(
            {
                "scale": "1-5",
                "scores": {"fidelity": 2, "watercolour": 5, "composition": 3, "coverage": 4},
            }
        )
    ),
    "critic-unit-scale": lambda nth: completion(
        json.dumps(
            {"scores": {"fidelity": 0.6, "watercolour": 0.7, "composition": 0.8, "coverage": 0.5}}
        )
    ),
    "critic-ambiguous-scale": lambda nth: completion(
        json.dumps({"scores": {"fidelity": 3, "watercolour": 4, "composition": 2, "coverage": 5}})
    ),
    "critic-think": lambda nth: completion(
        '<think>{"scores": {"fidelity": 1, "watercolour": 1, "composition": 1, "coverage": 1}}'
        " no, look again</think>" + json.dumps(CRITIC)
    ),
}


def _coverage_winner(body: dict) -> tuple[str, str]:
    """(winner, loser) by paint coverage, A when equal: the truth a judge style wraps."""
    from judge_fakes import request_images

    from renderer.gate import measure_coverage

    first, second = (measure_coverage(png) for png in request_images(body))
    return ("B", "A") if second > first + 1e-9 else ("A", "B")


def _judge(
    wrap: Callable[[str, str], dict[str, Any]], finish: str = "stop"
) -> Callable[[dict], Answer]:
    return lambda body: message_answer(wrap(*_coverage_winner(body)), finish)


def _think(w: str, lose: str) -> str:
    return f'At first glance {{"winner": "{lose}"}} looks right, but {w} is better'


JUDGE_STYLES: dict[str, Callable[[dict], Answer]] = {
    "judge-think-inline": _judge(
        lambda w, x: {"content": f'<think>{_think(w, x)}</think>{{"winner": "{w}"}}'}
    ),
    "judge-think-no-opener": _judge(
        lambda w, x: {"content": f'{_think(w, x)}</think>\n{{"winner": "{w}"}}'}
    ),
    "judge-think-cut": _judge(lambda w, x: {"content": f"<think>{_think(w, x)} and"}, "length"),
    "judge-reasoning-content": _judge(
        lambda w, x: {"content": f'{{"winner": "{w}"}}', "reasoning_content": _think(w, x)}
    ),
    "judge-reasoning-field": _judge(lambda w, x: {"content": w, "reasoning": _think(w, x)}),
    "judge-thinking-parts": _judge(
        lambda w, x: {
            "content": [
                {"type": "thinking", "thinking": _think(w, x)},
                {"type": "text", "text": f'{{"winner": "{w}", "reason": "softer bleeds"}}'},
            ]
        }
    ),
    "judge-bare": _judge(lambda w, x: {"content": w}),
    "judge-prose": _judge(
        lambda w, x: {"content": f"Image {w} is better: its edges bleed softly."}
    ),
    "judge-lowercase": _judge(lambda w, x: {"content": f'{{"winner": "{w.lower()}"}}'}),
    "judge-mtbench": _judge(
        lambda w, x: {"content": f"Both are pleasant; {w}'s washes layer.\n[[{w}]]"}
    ),
    "judge-unreadable": _judge(lambda w, x: {"content": "Both paintings have their merits."}),
    "judge-contradictory": _judge(lambda w, x: {"content": f"[[{w}]]\n\nOn reflection: [[{x}]]"}),
    "judge-tie": _judge(lambda w, x: {"content": '{"winner": "tie", "reason": "equally good"}'}),
}
