"""A loopback VLM judge with known preferences, and paintings of exactly known coverage.

The judge speaks the OpenAI chat-completions protocol (generators.loopback), so the real
client and the production judge run unchanged. It prefers the image with more paint and,
like a real judge with no preference, picks the first image (A) when the two are equal.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

from PIL import Image

from generators.loopback import LoopbackOpenAI
from renderer.gate import measure_coverage

SIDE = 100  # 100 x 100: coverage is painted pixels / 10,000, exactly
GROUND = (246, 239, 226)


def painting(coverage: float, colour: tuple[int, int, int] = (170, 50, 90), x0: int = 5) -> bytes:
    """A pale ground with one block of paint covering exactly `coverage` of the canvas."""
    img = Image.new("RGB", (SIDE, SIDE), GROUND)
    pixels = round(coverage * SIDE * SIDE)
    rows, rest = divmod(pixels, 80)  # an 80-pixel-wide block, plus a partial row
    for y in range(rows):
        for x in range(x0, x0 + 80):
            img.putpixel((x, 5 + y), colour)
    for x in range(x0, x0 + rest):
        img.putpixel((x, 5 + rows), colour)
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()


def request_images(body: dict[str, Any]) -> list[bytes]:
    parts = body["messages"][0]["content"]
    urls = [p["image_url"]["url"] for p in parts if p.get("type") == "image_url"]
    return [base64.b64decode(u.split(",", 1)[1]) for u in urls]


class CoverageJudge(LoopbackOpenAI):
    """Prefers more paint; says A when the two are equal (a known position bias)."""

    def __init__(self, delay: float = 0.0, script: list[dict] | None = None) -> None:
        self.delay = delay
        super().__init__(script=script, default=self.answer)

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        first, second = (measure_coverage(png) for png in request_images(body))
        winner = "B" if second > first + 1e-9 else "A"
        reply = json.dumps({"winner": winner, "reason": f"coverage {first:.3f} vs {second:.3f}"})
        return {"content": reply, "delay": self.delay}


def judge_models_file(path: Path, base_url: str, concurrency: int = 4) -> str:
    """A models file whose only entry is a keyless judge on the loopback server."""
    entry = {
        "roles": ["judge"],
        "model": "loopback-vlm",
        "base_url": base_url,
        "key_env": None,
        "accepts_images": True,
        "max_tokens": 2400,  # the judge must override this with 220
        "timeout_s": 30,
        "concurrency": concurrency,
    }
    path.write_text(json.dumps({"models": {"loopback-judge": entry}}))
    return str(path)
