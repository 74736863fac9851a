"""A released version as a dataset: the files, the card, the Hub.

export      a version as a release folder: images/, sources/, metadata.jsonl,
            photo_attribution.json (card.py writes its README, provenance.py its credits)
publish     makes a Hub repo equal to a release in one commit and tags it (hubsync.py
            talks to the Hub)
sampler     the RL environment's seeded draw of references from a release
"""
