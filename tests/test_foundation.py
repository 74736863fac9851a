"""The foundation: migrations, the store's files, typed records, and the CLI's help text."""

from __future__ import annotations

import argparse
import sqlite3

import pytest

from refpool.core.contracts import Critique, GateResult, Render, Violation
from refpool.core.store import Store, migrations


def test_blank_database_gets_every_migration_once(refpool_home):
    store = Store(refpool_home)
    names = [row[0] for row in store.query("SELECT name FROM _migrations ORDER BY rowid")]
    assert names == [m.__name__ for m in migrations.MIGRATIONS]
    assert store.query("PRAGMA journal_mode")[0][0] == "wal"
    assert migrations.apply(store.db) == []  # re-opening applies nothing


def test_upgrade_from_the_first_schema_keeps_data(tmp_path):
    db = sqlite3.connect(tmp_path / "refpool.db", isolation_level=None)
    db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    migrations.m001_initial(db)
    db.execute("INSERT INTO _migrations (name) VALUES ('m001_initial')")
    db.execute("INSERT INTO programs (sha256, path) VALUES ('abc', 'blobs/js/ab/abc.js')")
    db.close()
    store = Store(tmp_path)
    assert store.query("SELECT path FROM programs")[0][0] == "blobs/js/ab/abc.js"
    assert len(store.query("SELECT name FROM _migrations")) == len(migrations.MIGRATIONS)


def test_a_failing_migration_rolls_back(tmp_path, monkeypatch):
    def m999_broken(db):
        db.execute("CREATE TABLE half_done (x)")
        raise RuntimeError("boom")

    monkeypatch.setattr(migrations, "MIGRATIONS", [*migrations.MIGRATIONS, m999_broken])
    with pytest.raises(RuntimeError):
        Store(tmp_path)
    db = sqlite3.connect(tmp_path / "refpool.db")
    assert not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'half_done'").fetchall()
    assert not db.execute("SELECT 1 FROM _migrations WHERE name = 'm999_broken'").fetchall()


def test_content_addressed_files(store):
    sha = store.put_program("function setup() {}\n")
    assert store.put_program("function setup() {}\n") == sha
    assert store.program_source(sha) == "function setup() {}\n"
    png_sha = store.put_png(b"\x89PNG fake")
    assert store.png_path(png_sha).read_bytes() == b"\x89PNG fake"
    assert png_sha in store.png_path(png_sha).name


def test_records_round_trip_and_refuse_unknown_fields():
    render = Render(
        program_sha="a",
        seed=1,
        width=600,
        height=600,
        gate=GateResult(False, [Violation("text", "no text", 3)], None),
    )
    again = Render.from_dict({**render.to_dict(), "png": None})
    assert again == render and again.gate.violations[0].line == 3
    with pytest.raises(ValueError, match="unknown fields"):
        Critique.from_dict({"critic": "h", "scores": {}, "advice": "", "api_key": "sk-x"})


def _walk(parser: argparse.ArgumentParser, path: str = "refpool"):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield f"{path} {name}", helps.get(name), sub
                yield from _walk(sub, f"{path} {name}")


def test_every_command_and_option_has_help():
    from refpool.cli import build_parser

    missing = []
    commands = list(_walk(build_parser()))
    assert {"refpool render", "refpool generate", "refpool studio", "refpool publish"} <= {
        c for c, _, _ in commands
    }
    for command, help_text, parser in commands:
        if not help_text:
            missing.append(command)
        for action in parser._actions:
            if action.option_strings and action.dest != "help" and not action.help:
                missing.append(f"{command} {action.option_strings[0]}")
    assert missing == []


def test_closing_the_pipe_early_is_not_an_error(store):
    """`refpool candidates list | head -1` used to end in a BrokenPipeError traceback."""
    import subprocess
    import sys

    from factories import populate

    populate(store, n=300)
    cmd = f"{sys.executable} -c 'import sys; from refpool.cli import main; sys.exit(main())' candidates list | head -1"
    proc = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
    assert proc.stdout.strip()


def test_a_transaction_commits_whole_or_not_at_all(store):
    import pytest as _pytest

    with store.transaction() as db:
        db.execute("INSERT INTO curators (name) VALUES ('ann')")
    with _pytest.raises(RuntimeError), store.transaction() as db:
        db.execute("INSERT INTO curators (name) VALUES ('bob')")
        raise RuntimeError("crash halfway")
    names = [r["name"] for r in store.query("SELECT name FROM curators ORDER BY name")]
    assert names == ["ann"]
    assert not store.db.in_transaction  # the connection is usable again
