"""Generation: photo analysis, coders, critics, the 3-round refinement loop, batch runs.

Entry points:
    generators.batch.generate(store, *, photo_ids=None, generators=("procedural",), candidates=1,
                              rounds=ROUNDS, concurrency=4, seed=0, renderer=None, progress=True,
                              critic="heuristic", models_file=None) -> summary dict
    generators.summary.list_candidates(store) -> list[dict]   (`refpool candidates list`)
    generators.analysis.analyse_path(path) -> PhotoAnalysis   (palette, mask, hues, petals, brief())
    generators.procedural.generate_program(analysis, seed, subject) -> str
    generators.critics.heuristic_critique(analysis, png) -> (Critique, measurements)

Read in this order: analysis (the photo), jobs (a chain of rounds), plan + procedural and coders
(writing programs), critics (judging renders), batch (the loop), summary (what it made).
"""
