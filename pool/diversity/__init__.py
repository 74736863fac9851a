"""The diversity report: what a pool covers, and where it repeats itself.

metrics     pure diversity metrics (Vendi, hue coverage, entropy) and near-duplicate clusters
analysis    PoolMetrics of one selection;  dupes: clusters over every candidate
report      the self-contained HTML report (charts.py draws its SVG)
"""
