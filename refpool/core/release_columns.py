"""What each column of a release's metadata.jsonl holds and where its value comes from, in
ReleaseRow's order (refpool.core.contracts). The reference page docs/reference/release-columns.md
is generated from these two tables, and a test keeps their keys equal to ReleaseRow's fields."""

from __future__ import annotations

# What each column of metadata.jsonl holds, in ReleaseRow's order: the reference page
# (docs/reference/release-columns.md) is generated from this table, and a test keeps its keys
# equal to ReleaseRow's fields.
RELEASE_COLUMNS = {
    "file_name": "the painting, `images/<tier>_<id>.png` (600x600 PNG); the tier is the prefix",
    "source_file": "its p5.brush program, `sources/<tier>_<id>.js` (same stem)",
    "tier": "`love`, `okay` or `rung` (a plain string)",
    "subject": "what the photo shows, as the photo library records it",
    "generator_model": "the model id the endpoint was asked for when it wrote the program (the"
    " models-file entry's `model`), or `procedural`; `served_model` says what the server served",
    "refinement_round": "the critique round that produced it (0 is the first program)",
    "hpsv3_mu": "HPSv3 preference score, when a scorer's scores were stored (else null)",
    "paint_coverage": "share of the canvas painted, by the gate's coverage rule",
    "gate_errors": "number of gate violations (0 for every released painting)",
    "reference_photo": "the source photo's file name",
    "reference_photo_licence": "the photo's licence code: `cc0`, `cc-by`, `cc-by-sa` or `pd`",
    "reference_photo_attribution": "the photo's credit line: file, author, licence, URL",
    "reference_photo_url": "where the photo was published",
    "reference_photo_licence_version": "the photo's licence version, e.g. `2.0`",
    "reference_photo_licence_url": "the photo's licence deed",
    "licence": "the painting's own licence, following its photo's (`cc-by-sa`, `cc-by`, `cc0`)",
    "licence_url": "the painting's licence deed",
    "attribution": "the painting's credit line: adapted from the photo, by its author, licensed",
    "candidate_id": "refpool's candidate id (the number in the file name)",
    "parent_id": "the candidate this one revised (null for round 0)",
    "program_source": "the program's full text",
    "program_sha256": "sha256 of the program's text",
    "image_sha256": "sha256 of the PNG",
    "seed": "the render seed",
    "gate_profile": "the gate profile it passed (`reference`, `env` or `permissive`)",
    "gate_violations": "JSON text: the gate's violations (an empty list for released rows)",
    "renderer_versions": "JSON text: the library versions of the render that made the PNG",
    "critique_history": "JSON text: each round of its chain (generator, gate codes, critique)",
    "curator_ratings": "a list of `{curator, tier}`: every curator's rating; with"
    " `--pseudonymise-curators` each name is a stable pseudonym, `curator-` and 8 hex digits",
    "hpsv3_sigma": "HPSv3's uncertainty for `hpsv3_mu` (else null)",
    "pool_version": "the release's semantic version, e.g. `1.1.0`",
    "served_model": "the model id the server said wrote the program (its reply's `model`); a"
    " router's fallback makes it differ from `generator_model`, the model asked for (null:"
    " procedural, the server did not say, or a version released before this column)",
    "generator_name": "the generator's name in the models file (e.g. `coder-a`), or `procedural`"
    " (null in a version released before this column)",
}

# Where each column's value comes from when a version is released (the reference page's
# "from" column); a test keeps its keys equal to RELEASE_COLUMNS'.
RELEASE_COLUMN_SOURCES = {
    "file_name": "the tier and candidate id",
    "source_file": "the tier and candidate id",
    "tier": "the draft released: the curators' live tier, or calibration's rung band",
    "subject": "`photos.subject`, as imported",
    "generator_model": "`model_calls.model` of the call that wrote the program",
    "refinement_round": "`candidates.round`",
    "hpsv3_mu": "`preference_scores` (`refpool score`)",
    "paint_coverage": "`candidates.coverage`, measured by the gate",
    "gate_errors": "`candidates.violations`",
    "reference_photo": "`photos.file_name`",
    "reference_photo_licence": "`photos.licence`",
    "reference_photo_attribution": "`photos` file name, author, licence and URL",
    "reference_photo_url": "`photos.source_url`",
    "reference_photo_licence_version": "`photos.licence_version`",
    "reference_photo_licence_url": "`photos.licence` and `licence_version`",
    "licence": "the photo's licence (BY-SA stays BY-SA, CC0 and PD give CC0)",
    "licence_url": "`licence`",
    "attribution": "the `photos` record",
    "candidate_id": "`candidates.id`",
    "parent_id": "`candidates.parent_id`",
    "program_source": "the program blob of `candidates.program_sha`",
    "program_sha256": "`candidates.program_sha`",
    "image_sha256": "`candidates.png_sha`",
    "seed": "`candidates.seed`",
    "gate_profile": "`renders.profile` of the render that made the PNG",
    "gate_violations": "`candidates.violations`",
    "renderer_versions": "`renders.lib_versions` of that render",
    "critique_history": "`candidates` of its refinement chain and their critiques",
    "curator_ratings": "`ratings`: each curator's latest live rating at release",
    "hpsv3_sigma": "`preference_scores`",
    "pool_version": "`refpool pool release` (`--version` or `--bump`)",
    "served_model": "`model_calls.served_model`: the reply's `model`",
    "generator_name": "`candidates.generator`: the models-file name",
}
