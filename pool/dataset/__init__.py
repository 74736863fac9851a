"""A released version as a dataset: the files, the card, the Hub.

release     release a draft: the version and every file of its release, frozen in the store
            (card.py writes its README, provenance.py its credits)
export      writes a version's frozen files as a release folder: images/, sources/,
            metadata.jsonl, photo_attribution.json, README.md
publish     makes a Hub repo equal to a release in one commit and tags it (hubsync.py
            talks to the Hub)
sampler     the RL environment's seeded draw of references from a release
"""
