"""`--help` from the same source as the code: every default an option has is shown, and
`photos import --help` lists the photos.csv columns the importer reads."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator

import pytest

from refpool.cli import build_parser, commands, shown_default
from refpool.core.contracts import OPEN_LICENCES
from refpool.intake import photos


def every_parser(
    parser: argparse.ArgumentParser,
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """`refpool` itself, then every command under it (refpool.cli's one walk)."""
    yield (), parser
    for words, _, sub in commands(parser):
        yield words, sub


def option_help(text: str, option: str) -> str:
    """The help of one option in a `--help` text: its line and the lines wrapped under it."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(rf"\s+{re.escape(option)}\b", line))
    block = [lines[start]]
    for line in lines[start + 1 :]:
        if not line.strip() or re.match(r"\s{0,4}-", line) or not line.startswith(" " * 6):
            break
        block.append(line)
    return "".join("".join(block).split())  # wrapping may break a value at a hyphen


def every_option() -> list[tuple[str, str, str]]:
    """(command, option, default) for every option with a default worth showing."""
    found = []
    for words, parser in every_parser(build_parser()):
        for action in parser._actions:
            value = shown_default(action)
            if value is not None:
                found.append((" ".join(("refpool", *words)), action.option_strings[-1], value))
    return found


def test_the_walk_finds_the_options_the_issue_names():
    options = {(command, option) for command, option, _ in every_option()}
    assert ("refpool generate", "--candidates") in options
    assert ("refpool pool calibrate", "--candidates") in options
    assert len(options) > 30


@pytest.mark.parametrize("command, option, value", every_option())
def test_every_default_is_shown_in_help(command, option, value):
    parser = dict((" ".join(("refpool", *w)), p) for w, p in every_parser(build_parser()))[command]
    shown = option_help(parser.format_help(), option)
    squeezed = "".join(value.split())
    assert "default" in shown and squeezed in shown, (command, option, value, shown)


def test_generate_and_calibrate_show_the_candidates_default():
    parsers = {w: p for w, p in every_parser(build_parser())}
    generate = option_help(parsers[("generate",)].format_help(), "--candidates")
    assert "(default:2)" in generate, generate
    calibrate = option_help(parsers[("pool", "calibrate")].format_help(), "--candidates")
    assert "(default:all)" in calibrate, calibrate


def test_a_default_is_stated_once():
    for words, parser in every_parser(build_parser()):
        for action in parser._actions:
            if action.option_strings and shown_default(action) is not None:
                shown = option_help(parser.format_help(), action.option_strings[-1])
                assert shown.lower().count("default") == 1, (words, shown)


def test_photos_import_help_lists_every_column_the_importer_reads():
    parsers = {w: p for w, p in every_parser(build_parser())}
    text = " ".join(parsers[("photos", "import")].format_help().split())
    for column in (*photos.REQUIRED_COLUMNS, *photos.OPTIONAL_COLUMNS):
        assert re.search(rf"\b{column}\b", text), column
    assert set(photos.OPTIONAL_COLUMNS) == {"notes", "subject"}
    assert "required" in text and "optional" in text
    for licence in OPEN_LICENCES:
        assert licence in text, licence
    assert "any other column" in text
    # the one-line summary under `refpool photos --help` names them all too
    summary = " ".join(parsers[("photos",)].format_help().split())
    columns = ",".join(photos.REQUIRED_COLUMNS) + "[," + ",".join(photos.OPTIONAL_COLUMNS) + "]"
    assert columns in summary, summary


def test_the_importer_reads_the_columns_the_help_lists(tmp_path, store):
    """The optional columns are read by name: notes and subject land in their own fields,
    and any other column is kept as extra data."""
    from PIL import Image

    folder = tmp_path / "in"
    folder.mkdir()
    Image.new("RGB", (300, 200), (200, 60, 40)).save(folder / "a.jpg")
    header = [*photos.REQUIRED_COLUMNS, *photos.OPTIONAL_COLUMNS, "camera"]
    values = {
        "file": "a.jpg",
        "source": "https://example.org/a",
        "author": "Ana",
        "license": "CC BY 4.0",
        "notes": "a note",
        "subject": "poppy",
        "camera": "X100",
    }
    (folder / "photos.csv").write_text(
        ",".join(header) + "\n" + ",".join(values[c] for c in header) + "\n"
    )
    report = photos.import_folder(store, folder)
    (photo,) = report.imported
    assert (photo.notes, photo.subject) == ("a note", "poppy")
    (row,) = store.query("SELECT extra FROM photos WHERE id = ?", (photo.id,))
    assert json.loads(row["extra"])["camera"] == "X100"


def test_every_command_prints_its_help():
    for words, parser in every_parser(build_parser()):
        text = parser.format_help()
        assert text.startswith("usage: "), words
        assert "%(" not in text and "(default: None)" not in text, words
