"""Choosing the pool and freezing it.

draft       build_pool -> PoolDraft (love, okay and rung tiers), every exclusion explained
versions    check a draft for release as a semver version (pool.dataset.release freezes it); diff
"""
