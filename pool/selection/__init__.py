"""Choosing the pool and freezing it.

draft       build_pool -> PoolDraft (love, okay and rung tiers), every exclusion explained
versions    release a draft as an immutable semver version; diff versions
"""
