"""docs/reference/cli.md: every `refpool` command's `--help`, walked from the parser itself."""

from __future__ import annotations

import os
from unittest import mock

from refpool.cli import build_parser, commands

HELP_WIDTH = "100"  # argparse wraps to $COLUMNS: fix it, or the page would follow the terminal


def render() -> str:
    with mock.patch.dict(os.environ, {"COLUMNS": HELP_WIDTH}):
        parser = build_parser()
        found = list(commands(parser))
        lines = [
            "# Command line",
            "",
            "Every `refpool` command, with the `--help` it prints. Defaults are shown beside each",
            "option. Errors and exit statuses: [Exit status](exit-status.md) and",
            "[Troubleshooting](../troubleshooting.md).",
            "",
            "| command | what it does |",
            "|---|---|",
        ]
        for words, summary, _ in found:
            name = "refpool " + " ".join(words)
            anchor = "-".join(("refpool", *words))
            cell = summary.replace("|", r"\|")
            lines.append(f"| [`{name}`](#{anchor}) | {cell} |")
        lines += ["", "## refpool", "", "```text", parser.format_help().rstrip(), "```", ""]
        for words, _, sub in found:
            lines += [f"## refpool {' '.join(words)}", "", "```text", sub.format_help().rstrip()]
            lines += ["```", ""]
    return "\n".join(lines)
