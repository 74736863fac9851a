"""One way to derive a seed from its parts, so every stage agrees and nothing is dropped."""

from __future__ import annotations

import hashlib

SEED_BITS = 31  # p5's randomSeed and JavaScript's integers take it without loss


def derive_seed(*parts: object) -> int:
    """A stable seed in [0, 2**31) from any parts (base seed, photo id, slot, round, purpose...).

    Hash-based rather than arithmetic, so distinct part lists never collide by accident (the
    old `seed * k + round` formulas did) and no part is silently ignored.
    """
    text = "\x1f".join(repr(p) for p in parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big") % (1 << SEED_BITS)
