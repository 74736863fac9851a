"""Defaults that more than one part of refpool uses, defined once.

The numbers follow the published experiment this tool learns from: a pool of 178 references
curated from three refinement rounds, half love and half okay when sampled.
"""

from __future__ import annotations

TARGET_POOL_SIZE = 178  # references in the published pool; the studio's progress counts to it
ROUNDS = 3  # one generation plus two critique-and-revise rounds
LOVE_FRACTION = 0.5  # share of love in a pool and in the RL env's reference sample
# Near-duplicate distance (pool/similarity/distance.py, 0..100), from `python -m pool.similarity.threshold` on 76
# rendered paintings: another seed 7-13, parent->revision 2-22, another photo >= 15.8.
DUP_THRESHOLD = 15
# Gate profiles (renderer/profiles.py). `reference`, the prompt's 10-method allowlist, is the
# stricter gate refpool builds a pool with (generate, render). `env` accepts what the
# watercolour env's own gate accepts: the env-style render(sketch, seed) and serve-renderer
# default to it, so an env switched to refpool's renderer scores what its gate would.
GATE_PROFILE = "reference"
ENV_GATE_PROFILE = "env"
