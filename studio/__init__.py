"""The studio's web code, in one package: the Gradio tabs and their handlers, the pages'
scripts (static/), the Pool tab, and the HTTP edge (same-origin guard, bounded connections,
login, media exposure). It only wires and formats: what a key does is curation/service.py's.
"""
