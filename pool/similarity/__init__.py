"""Near-duplicate measurement: how alike two paintings are.

features    per-image features (dHash, hue and colour histograms, the similarity signature),
            computed once and cached by PNG sha
distance    the near-duplicate distance (colour, layout, texture) between signatures
pairs       every pair of a pool in tiles: near pairs and distance statistics
clusters    complete-linkage near-duplicate clusters from the near pairs
threshold   measures the distance on rendered chains and suggests the threshold
            (`python -m pool.similarity.threshold`; chains.py renders them)
"""
