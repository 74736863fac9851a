"""Generation: photo analysis, coder clients, critics, the 3-round refinement loop, batch runs.

Entry points:
    generators.batch.generate(store, *, photo_ids=None, generators=("procedural",), candidates=1,
                              rounds=3, concurrency=4, seed=0, renderer=None, progress=True,
                              critic="heuristic", models_file=None) -> summary dict
    generators.batch.list_candidates(store) -> list[dict]
    generators.analysis.analyse_path(path) -> Analysis   (palette, mask, hues, petals, brief())
    generators.procedural.generate_program(analysis, seed, subject) -> str
    generators.critics.heuristic_critique(analysis, png) -> (Critique, measurements)
"""
