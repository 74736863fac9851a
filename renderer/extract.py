"""Finding the sketch inside a model's reply.

Separate from the gate: the gate judges a program, this decides which text is the program.
"""

from __future__ import annotations

import re

FENCE = re.compile(r"```[ \t]*(js|javascript|p5|p5js)?[ \t]*\n(.*?)(?:```|\Z)", re.S | re.I)


def extract_program(reply: str) -> str | None:
    """The sketch inside a model reply (its ```js fence), or the text itself if it is bare JS.

    Returns None when there is no code to find. An unterminated fence (a truncated reply) is
    still returned, so the static pass can report it as truncated rather than as missing.
    """
    if not reply or not reply.strip():
        return None
    blocks = [(lang, body) for lang, body in FENCE.findall(reply)]
    if blocks:
        with_setup = [b for _, b in blocks if re.search(r"\bsetup\b|\bdraw\b", b)]
        return (with_setup or [blocks[0][1]])[0].strip() + "\n"
    if "```" not in reply and re.search(r"function\s+(setup|draw)\s*\(", reply):
        return reply if reply.endswith("\n") else reply + "\n"
    return None
