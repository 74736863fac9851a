"""The pool's CLI end to end on a real store: build -> release -> report -> export -> sample."""

from __future__ import annotations

import argparse
import json

from factories import populate

from curation.ratings import record_rating
from refpool import cli


def run(capsys, *argv) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_pool_command_and_option_has_help():
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    names = {"pool", "report", "export", "publish"}
    checked = 0
    for choice in sub._choices_actions:
        if choice.dest in names:
            assert choice.help, choice.dest
    for name in names:
        stack = [sub.choices[name]]
        while stack:
            p = stack.pop()
            for action in p._actions:
                if isinstance(action, argparse._SubParsersAction):
                    for c in action._choices_actions:
                        assert c.help, c.dest
                    stack.extend(action.choices.values())
                elif not isinstance(action, argparse._HelpAction):
                    assert action.help, f"{p.prog} {action.dest}"
                    checked += 1
    assert checked > 20


def test_cli_flow(store, capsys, tmp_path, monkeypatch):
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_TOKEN_PATH", str(tmp_path / "no-token"))  # ignore any real login
    code, _, err = run(capsys, "pool", "build", "--target", "4")
    assert code == 1 and "no candidates" in err
    ids = populate(store, 10)
    for cid in ids:
        record_rating(
            store, cid, "ana", "reject" if cid == ids[0] else ("love" if cid % 2 else "okay")
        )

    code, out, _ = run(capsys, "pool", "build", "--target", "6", "--dup-threshold", "0", "--json")
    assert code == 0
    draft = json.loads(out)
    assert draft["counts"] == {"total": 6, "love": 3, "okay": 3}
    assert draft["excluded_counts"]["reject"] == 1

    code, out, _ = run(capsys, "pool", "release", "--notes", "first")
    assert code == 0 and "released 1.0.0: 6 references" in out
    code, out, _ = run(capsys, "pool", "versions")
    assert "1.0.0" in out and "first" in out
    code, out, _ = run(capsys, "pool", "build", "--target", "8", "--dup-threshold", "0")
    assert code == 0 and "left out, rated reject: 1" in out
    code, out, _ = run(capsys, "pool", "diff", "1.0.0", "draft", "--json")
    assert code == 0 and len(json.loads(out)["added"]) == 2

    html, metrics = tmp_path / "r.html", tmp_path / "m.json"
    code, out, _ = run(
        capsys, "report", "--out", str(html), "--json", str(metrics), "--compare", "1.0.0"
    )
    assert code == 0 and "8 images" in out
    data = json.loads(metrics.read_text())
    assert data["n"] == 8 and data["compare"]["diff"]["added"]
    page = html.read_text()
    assert "<svg" in page and "data:image/jpeg;base64," in page and "Changes against 1.0.0" in page

    code, out, _ = run(capsys, "export", "--out", str(tmp_path / "ex"), "--version", "1.0.0")
    assert code == 0 and "exported 1.0.0: 6 rows" in out and "sources/  (6 files" in out
    code, out, _ = run(capsys, "pool", "sample", "--version", "1.0.0", "--seed", "3", "--json")
    first = json.loads(out)
    code, out, _ = run(
        capsys,
        "pool",
        "sample",
        "--from-export",
        str(tmp_path / "ex"),
        "--seed",
        "3",
        "--json",
        "--version",
        "1.0.0",
    )
    assert json.loads(out) == first and sorted(r["tier"] for r in first) == [
        "love",
        "love",
        "okay",
        "okay",
    ]

    code, _, err = run(capsys, "publish", "--repo", "ana/pool")
    assert code == 1 and "no Hugging Face token" in err
    code, out, _ = run(capsys, "publish", "--repo", "ana/pool", "--dry-run")
    assert code == 0 and "images/  (6 files: images/" in out and "metadata.jsonl" in out
    code, _, err = run(capsys, "report", "--out", str(html), "--version", "9.9.9")
    assert code == 1 and "no pool version '9.9.9'" in err
