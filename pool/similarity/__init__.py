"""Near-duplicate measurement: how alike two paintings are.

features    per-image features (dHash, hue and colour histograms, the similarity signature),
            computed once and cached by PNG sha
distance    the near-duplicate distance (colour, layout, texture) between signatures
threshold   measures the distance on rendered chains and suggests the threshold
            (`python -m pool.similarity.threshold`; chains.py renders them)
"""
