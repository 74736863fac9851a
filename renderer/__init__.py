"""The shared renderer and gate. Imports nothing from generators/, curation/ or pool/.

from renderer import Renderer, RenderConfig

async with Renderer(RenderConfig(slots=2)) as r:
    result = await r.render(source, seed=7)      # -> contracts.Render
    result.accepted, result.gate.violations, result.png

with SyncRenderer() as r:                         # blocking convenience
    result = r.render(source)
"""

from renderer.engine import RenderConfig, Renderer, SyncRenderer
from renderer.extract import extract_program
from renderer.gate import measure_coverage, static_check

__all__ = [
    "RenderConfig",
    "Renderer",
    "SyncRenderer",
    "extract_program",
    "measure_coverage",
    "static_check",
]
