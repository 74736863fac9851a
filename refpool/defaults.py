"""Defaults that more than one part of refpool uses, defined once.

The numbers follow the published experiment this tool learns from: a pool of 178 references
curated from three refinement rounds, half love and half okay when sampled.
"""

from __future__ import annotations

TARGET_POOL_SIZE = 178  # references in the published pool; the studio's progress counts to it
ROUNDS = 3  # one generation plus two critique-and-revise rounds
LOVE_FRACTION = 0.5  # share of love in a pool and in the RL env's reference sample
DUP_THRESHOLD = 15  # dHash bits: same program re-seeded is 4-13 apart, different ones 18-27
GATE_PROFILE = "reference"  # the gate the RL environment scores with
