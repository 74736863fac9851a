"""docs/reference/cli.md: every `refpool` command's `--help`, walked from the parser itself."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager

from refpool.cli import build_parser

HELP_WIDTH = "100"  # argparse wraps to $COLUMNS: fix it, or the page would follow the terminal


@contextmanager
def _fixed_width() -> Iterator[None]:
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = HELP_WIDTH
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = saved


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """(words after `refpool`, one-line help, parser) for every command, depth first."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {a.dest: a.help or "" for a in action._choices_actions}
        for name, sub in action.choices.items():
            words = (*path, name)
            yield words, helps.get(name, ""), sub
            yield from commands(sub, words)


def render() -> str:
    with _fixed_width():
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
