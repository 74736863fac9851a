"""The diversity report: what a pool covers, and where it repeats itself.

records     the metrics as frozen dataclasses (to_dict(): the report's JSON)
metrics     pure diversity metrics (Vendi, hue coverage, entropy)
analysis    PoolMetrics of one selection;  dupes: clusters over every candidate
report      the self-contained HTML report (charts.py draws its SVG)
"""
