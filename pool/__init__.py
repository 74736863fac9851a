"""The pool: rated candidates -> a released, versioned reference pool, its report and dataset.

catalog     PoolEntry (candidate + photo + final tier) and the one eligibility rule
selection   build_pool -> PoolDraft, every exclusion explained
versions    release a draft as an immutable semver version; diff versions
features    per-image features (dHash, hue and colour histograms), cached by PNG sha
metrics     pure diversity metrics;  analysis: PoolMetrics of one selection
report      the self-contained HTML diversity report
export      a version in the Hugging Face Hub layout (card.py writes its README,
            provenance.py its credits and history); publish uploads it, tagged
sampler     the RL environment's seeded reference draw
blind       model aliases for blind curation;  studio_tab: the studio's Pool tab
calibrate   measures the near-duplicate threshold on the real renderer
cli         `refpool pool|report|export|publish`
"""
