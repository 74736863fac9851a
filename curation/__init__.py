"""Curation: curators, rating sessions, undo, agreement and the studio's pure helpers."""
