"""Stage 1, photo intake: folders of licensed photos and iNaturalist observations into the store."""
