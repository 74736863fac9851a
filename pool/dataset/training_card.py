"""What the dataset card says about a release's training sets: one extra `configs:` entry per
set that has rows (after the default, which stays first: `datasets` picks the loader every
config uses from the first one), and a section that names the trainer each set is for.

Each set is read by the same imagefolder loader as the default config, as a metadata file of
its own (`metadata_filenames`) beside the images its rows name.
"""

from __future__ import annotations

from typing import Any

from pool.dataset.training_judged import JUDGE_RULE
from pool.dataset.training_sets import (
    CONFIG_FILES,
    PREFERENCE_RULE,
    SHOWS_PHOTO,
    TRAINER,
    TrainingSets,
)


def training_configs(sets: TrainingSets | None) -> list[dict[str, Any]]:
    """The `configs:` entries of the training sets that have rows, in CONFIG_FILES order."""
    if sets is None:
        return []
    counts = sets.counts()
    return [
        {
            "config_name": name,
            "metadata_filenames": [file],
            "data_files": [
                {"split": "train", "path": [file, "images/*.png", *_photos(sets, name)]}
            ],
        }
        for name, file in CONFIG_FILES.items()
        if counts[name]
    ]


def _photos(sets: TrainingSets, name: str) -> list[str]:
    return ["photos/*"] if sets.options.photos and name in SHOWS_PHOTO else []


def training_card_lines(sets: TrainingSets | None, repo: str, tag: str) -> list[str]:
    """The card's "Training sets" section: sizes, formats, the prompt used and the pair rule."""
    if sets is None:
        return []
    counts = sets.counts()
    taught = "love and okay" if sets.options.sft_okay else "love"
    photo = (
        "the photo as an image (`images`, from `photos/`) and its analysis, in TRL's vision"
        " form (content parts)"
        if sets.options.photos
        else "text: the photo's analysis"
    )
    lines = [
        "## Training sets",
        "",
        "Besides the references, this release carries sets to train a policy on, in the"
        " conversational formats TRL's trainers read, each an extra config of this dataset"
        " frozen with the release:",
        "",
        "| config | rows | file | for |",
        "|---|---|---|---|",
    ]
    for name, file in CONFIG_FILES.items():
        shown = f"`{file}`" if counts[name] else "(none: no rows in this release)"
        lines.append(f"| `{name}` | {counts[name]} | {shown} | {TRAINER[name]} |")
    lines += [
        "",
        "```python",
        "from datasets import load_dataset",
        f'sft = load_dataset("{repo}", "sft", revision="{tag}", split="train")',
        "```",
        "",
        f"- `sft`: the coder's prompt for the photo ({photo}), then the program"
        f" that painted each **{taught}** reference, fenced as a reply (```` ```js ````);"
        " `painting` is the image it painted.",
        f"- `preference`: two programs for the same photo. {PREFERENCE_RULE} These pairs are"
        " labelled `label_source: curators`."
        + (f" {JUDGE_RULE}" if sets.options.judge_pairs else " No judge-resolved pairs."),
        "- `revisions`: each critique chain that led to a reference, as one conversation: the"
        " brief, the program, the gate result and the critic's words about its render (named"
        " by its file, or by its sha256 when it is not a reference), the revised program, and"
        " so on through the program that was released. `draft_tiers` gives each program's"
        " tier (earlier drafts may be rated reject or unrated): mask them if you train on"
        " assistant turns.",
        "- `prompts`: one prompt per photo in the release; `references` are its paintings here"
        + (" and `images` the photo." if sets.options.photos else "."),
        "",
        f"The system prompt of every set is {sets.options.system_prompt_name}. A rejected"
        " painting is never an image here: it appears only as a `rejected` program's text.",
    ]
    if sets.skipped_chains:
        lines.append(
            f"{sets.skipped_chains} critique chains are left out of `revisions`: a round of"
            " each left no program."
        )
    return [*lines, ""]
