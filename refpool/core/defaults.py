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
GATE_PROFILE = "reference"  # the gate the RL environment scores with; the renderer defaults to it
