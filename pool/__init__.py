"""The pool: rated candidates -> a released, versioned reference pool, its report and dataset.

catalog     PoolEntry (candidate + photo + final tier) and the one eligibility rule
selection   build_pool -> PoolDraft, every exclusion explained
versions    release a draft as an immutable semver version; diff versions
features    per-image features (dHash, hue and colour histograms, similarity signature),
            cached by PNG sha;  similarity: the near-duplicate distance (colour, layout, texture)
metrics     pure diversity metrics, complete-linkage near-duplicate clusters;  analysis:
            PoolMetrics of one selection;  dupes: clusters over all candidates
report      the self-contained HTML diversity report (charts.py draws its SVG)
export      a version as a release: images/, sources/, metadata.jsonl (card.py writes its
            README, provenance.py its credits and history); publish makes a Hub repo
            equal to it in one commit and tags it (hubsync.py talks to the Hub)
sampler     the RL environment's seeded reference draw
blind       model aliases for blind curation;  studio_tab: the studio's Pool tab
calibrate   measures the near-duplicate distance on real rendered chains (chains.py)
cli         `refpool pool|report|export|publish`
"""
