"""The photos.csv reference page: each column, what it holds and where its value is stored,
read from refpool/intake/facts.py (the tables `photos import` itself reads and prints)."""

from __future__ import annotations

from refpool.intake.facts import COLUMN_SOURCES, OPTIONAL_COLUMNS, REQUIRED_COLUMNS


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    lines = [
        "# photos.csv columns",
        "",
        "`refpool photos import DIR` reads `DIR/photos.csv`: a header row naming its columns (in",
        "any order and case, UTF-8), then one row per image. `refpool photos import DIR --dry-run`",
        "shows what each row gives before anything is stored. How to import, licences and",
        "iNaturalist: [Import photos](../how-to/import-photos.md); correcting a photo later:",
        "[Correct or withdraw a photo](../how-to/import-photos.md#correct-or-withdraw-a-photo).",
        "",
        "| column | required | holds | stored as |",
        "|---|---|---|---|",
    ]
    for name, holds in REQUIRED_COLUMNS.items():
        lines.append(f"| `{name}` | yes | {_cell(holds)} | {_cell(COLUMN_SOURCES[name])} |")
    for name, holds in OPTIONAL_COLUMNS.items():
        needed = "yes, or `--subject`" if name == "subject" else "no"
        lines.append(f"| `{name}` | {needed} | {_cell(holds)} | {_cell(COLUMN_SOURCES[name])} |")
    other = COLUMN_SOURCES["any other"]
    lines.append(f"| any other | no | kept with the photo as extra data | {_cell(other)} |")
    return "\n".join(lines) + "\n"
