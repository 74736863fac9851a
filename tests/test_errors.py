"""One error contract: every user mistake ends in `error: <message>` and a documented exit
status, never a traceback; argparse keeps 2; library messages name actions, not flags."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from factories import add_photo, populate

from curation.ratings import record_rating
from refpool import cli
from refpool.core import errors

ROOT = Path(__file__).resolve().parents[1]
REFPOOL = [sys.executable, "-c", "import sys; from refpool.cli import main; sys.exit(main())"]
PRODUCT = ("refpool", "renderer", "generators", "curation", "pool", "studio")
# the shells, which speak in flags (studio/launch.py starts the studio for app.py)
CLI_MODULES = {"cli.py", "cli_reward.py", "demo.py", "app.py", "launch.py"}
DOCUMENTED = {errors.EXIT_FAILED, errors.EXIT_INFRA}  # what a RefpoolError may end with
# Exception classes that never reach a user, and why.
INTERNAL = {
    "SketchFault": "renderer/verdict.py: a hung or crashed sketch, turned into a verdict",
    "StaticPassTimeout": "renderer/jsfacts.py: caught by the gate and reported as a violation",
    "BodyTooLarge": "studio/exposure.py: stops reading a request body, answered as a 413",
}


def refpool(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*REFPOOL, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        cwd=ROOT,
    )


def assert_refused(proc: subprocess.CompletedProcess, status: int, *advice: str) -> None:
    """Exit `status`, no traceback, and a short `error:` message carrying the advice."""
    err = proc.stderr
    assert proc.returncode == status, (proc.returncode, err[-2000:])
    assert "Traceback" not in err, err
    tail = err[err.rindex("error: ") :]  # progress bars may come before it
    assert tail.count("\n") <= 4, tail
    for words in advice:
        assert words in tail, (words, tail)


@pytest.fixture
def released(store, tmp_path):
    """A store with one released version (1.0.0) and no Hugging Face token anywhere."""
    ids = populate(store, 8)
    for cid in ids:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
    assert cli.main(["pool", "build", "--target", "4", "--dup-threshold", "0", "--json"]) == 0
    assert cli.main(["pool", "release"]) == 0
    return {"HF_HOME": str(tmp_path / "hf-home"), "HF_TOKEN": ""}


def test_user_mistakes_end_in_a_message_and_a_documented_status(store, tmp_path):
    sketch = ROOT / "tests" / "sketches" / "trivial.js"
    models = tmp_path / "models.json"
    models.write_text(json.dumps({"models": {"mine": {"model": "m", "base_url": "http://x/v1",
                                                      "extra_bdy": {}}}}))  # fmt: skip
    missing = str(tmp_path / "nowhere")
    cases = [
        (("render", str(sketch), "--profile", "bogus"), ("unknown gate profile 'bogus'",
         "permissive, reference")),
        (("export", "--out", str(tmp_path / "out"), "--version", "9.9.9"), ("9.9.9",)),
        (("pool", "release"), ("refpool pool build",)),
        (("publish", "--repo", "not a repo"), ("OWNER/NAME",)),
        (("photos", "import", missing), ("no folder", "photos.csv")),
        (("pool", "build", "--mix", "love=lots"), ("--mix", "TIER=SHARE")),
        (("pool", "sample", "--version", "9.9.9"), ("9.9.9",)),
        (("score",), ("--scorer",)),
        (("rate", "999", "love", "--curator", "ana"), ("candidate 999 does not exist",)),
        (("ratings", "import", missing), ("no ratings file",)),
        (("curators", "add", "bad name!"), ("invalid curator name",)),
        (("pool", "calibrate", "--judge", "heuristic"), ("--paintings DIR",)),
    ]  # fmt: skip
    for argv, advice in cases:
        assert_refused(refpool(*argv), errors.EXIT_FAILED, *advice)
    add_photo(store, "flower.jpg")  # so that generate gets as far as choosing its models
    proc = refpool("generate", "--generator", "nope", "--no-progress")
    assert_refused(proc, errors.EXIT_FAILED, "unknown generator 'nope'", "--generator procedural")
    proc = refpool("generate", "--generator", "mine", "--models-file", str(models))
    assert_refused(proc, errors.EXIT_FAILED, "unknown field(s) 'extra_bdy'")


def test_publishing_without_a_token_says_how_to_get_one(released):
    proc = refpool("publish", "--repo", "ana/pool", env=released)
    assert_refused(proc, errors.EXIT_FAILED, "no Hugging Face token", "hint: --dry-run")


def test_argparse_usage_errors_keep_exit_2():
    for argv in (("pool", "build", "--target", "many"), ("no-such-command",), ("render",)):
        proc = refpool(*argv)
        assert proc.returncode == errors.EXIT_USAGE, proc.stderr
        assert "usage:" in proc.stderr and "Traceback" not in proc.stderr


def test_a_bug_keeps_its_traceback_and_ctrl_c_exits_130(monkeypatch, capsys):
    from pool import cli_versions as pool_cli  # where `pool versions` lives

    def broken(args):
        return 1 // 0

    monkeypatch.setattr(pool_cli, "cmd_versions", broken)
    with pytest.raises(ZeroDivisionError):  # not turned into a tidy, misleading message
        cli.main(["pool", "versions"])

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(pool_cli, "cmd_versions", interrupted)
    assert cli.main(["pool", "versions"]) == errors.EXIT_INTERRUPTED
    assert "interrupted" in capsys.readouterr().err


def test_the_cli_turns_hints_into_flags_and_statuses_into_exit_codes(monkeypatch, capsys):
    from pool import cli_versions as pool_cli  # where `pool versions` lives

    def refuses(args):
        raise errors.RefpoolError("the tag names other contents", hint="force tag")

    monkeypatch.setattr(pool_cli, "cmd_versions", refuses)
    assert cli.main(["pool", "versions"]) == errors.EXIT_FAILED
    assert capsys.readouterr().err.splitlines() == [
        "error: the tag names other contents",
        f"hint: {cli.HINT_FLAGS['force tag']}",
    ]

    def infra(args):
        raise errors.RefpoolInfraError("the browser would not start")

    monkeypatch.setattr(pool_cli, "cmd_versions", infra)
    assert cli.main(["pool", "versions"]) == errors.EXIT_INFRA
    assert set(cli.HINT_FLAGS) == set(errors.HINTS)  # every action has a flag, and only those
    assert all("--" in flag for flag in cli.HINT_FLAGS.values())
    with pytest.raises(ValueError, match="argparse"):
        errors.RefpoolError("x", exit_status=errors.EXIT_USAGE)
    with pytest.raises(ValueError, match="unknown hint"):
        errors.RefpoolError("x", hint="rerun with --force")


def test_the_studio_shows_a_refusal_in_its_own_message_box(store):
    pytest.importorskip("gradio")
    from curation import views
    from studio import handlers

    def refuses() -> str:
        raise errors.NotFound("candidate 7 does not exist")

    html = handlers.guarded(refuses)
    assert "candidate 7 does not exist" in html and "The studio failed" not in html
    assert views.refusal_text(errors.InputError("bad <b>")) == "bad <b>"
    assert "bad &lt;b&gt;" in views.refusal_html(errors.InputError("bad <b>"))


# -- the contract, read from the source ------------------------------------------------------
def _product_files() -> list[Path]:
    files = [ROOT / "app.py"]
    for package in PRODUCT:
        files += sorted((ROOT / package).rglob("*.py"))
    return files


def _classes() -> dict[str, tuple[str, list[str]]]:
    """Every class in product code: name -> (file, its bases' last names)."""
    found = {}
    for path in _product_files():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(b).rsplit(".", 1)[-1] for b in node.bases]
                found[node.name] = (str(path.relative_to(ROOT)), bases)
    return found


def test_every_exception_class_in_product_code_is_a_refpool_error():
    import builtins

    classes = _classes()

    def reaches(name: str, target, seen=()) -> bool:
        if name in seen:
            return False
        if target(name):
            return True
        bases = classes.get(name, ("", []))[1]
        return any(reaches(b, target, (*seen, name)) for b in bases)

    def builtin_exception(name: str) -> bool:
        obj = getattr(builtins, name, None)
        return isinstance(obj, type) and issubclass(obj, BaseException)

    exceptions = {n for n in classes if reaches(n, builtin_exception)}
    assert {"VersionError", "LockedOut", "ModelsFileError", "ProfileError"} <= exceptions
    outside = {
        f"{classes[n][0]}: {n}"
        for n in exceptions - set(INTERNAL)
        if n != "RefpoolError" and not reaches(n, lambda b: b == "RefpoolError")
    }
    assert not outside, f"subclass refpool.core.errors.RefpoolError (or allowlist): {outside}"
    assert set(INTERNAL) <= exceptions  # the allowlist names real classes


def _raised_strings(tree: ast.Module) -> list[tuple[int, str]]:
    """The text of every string in a `raise` (f-string values as x, module constants too)."""
    consts = {
        t.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for t in node.targets
        if isinstance(t, ast.Name) and isinstance(node.value.value, str)
    }
    texts = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Raise) or node.exc is None:
            continue
        parts = list(ast.walk(node.exc))
        inside_f = {id(v) for p in parts if isinstance(p, ast.JoinedStr) for v in p.values}
        for part in parts:
            if isinstance(part, ast.JoinedStr):
                text = "".join(v.value if isinstance(v, ast.Constant) else "x" for v in part.values)
                texts.append((node.lineno, text))
            elif isinstance(part, ast.Constant) and isinstance(part.value, str):
                if id(part) not in inside_f:
                    texts.append((node.lineno, part.value))
            elif isinstance(part, ast.Name) and part.id in consts:
                texts.append((node.lineno, consts[part.id]))
    return texts


def test_library_messages_name_actions_not_flags():
    flag = re.compile(r"--[a-z]")
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {text!r}"
        for path in _product_files()
        if path.name not in CLI_MODULES
        for line, text in _raised_strings(ast.parse(path.read_text("utf-8")))
        if flag.search(text)
    ]
    assert not offenders, "name the action (or a hint), not the flag:\n" + "\n".join(offenders)


def test_the_scan_sees_flags_in_f_strings_and_constants():
    tree = ast.parse(
        'NOTE = "use --dry-run"\n'
        'def f(name):\n    raise ValueError(f"--{name} must be 1")\n'
        "def g():\n    raise ValueError(NOTE)\n"
    )
    assert [t for _, t in _raised_strings(tree)] == ["--x must be 1", "use --dry-run"]


@pytest.mark.parametrize("damage", ["home is a file", "database is not one"])
def test_a_data_folder_that_cannot_be_opened_is_a_message_not_a_traceback(tmp_path, damage):
    home = tmp_path / "data"
    if damage == "home is a file":
        home.write_text("not a folder")
    else:
        home.mkdir()
        (home / "refpool.db").write_bytes(b"this is not a SQLite database" * 100)
    proc = refpool("candidates", "list", env={"REFPOOL_HOME": str(home)})
    assert_refused(proc, errors.EXIT_FAILED, "cannot open the data directory", "REFPOOL_HOME")
    if damage == "database is not one":  # nothing was overwritten
        assert (home / "refpool.db").read_bytes().startswith(b"this is not a SQLite")


def test_advice_to_choose_again_names_the_flag_that_does_it(released, tmp_path, capsys):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("not a release")
    sketch = str(ROOT / "tests" / "sketches" / "trivial.js")
    cases = [
        (["pool", "release", "--version", "1.0.0"], "already exists", "choose a version"),
        (["export", "--out", str(foreign)], "choose an empty or new folder", "choose an output folder"),
        (["render", sketch, "--profile", "bogus"], "unknown gate profile", "choose a profile"),
    ]  # fmt: skip
    for argv, words, hint in cases:
        assert cli.main(argv) == errors.EXIT_FAILED, argv
        err = capsys.readouterr().err
        assert words in err and f"hint: {cli.HINT_FLAGS[hint]}" in err, err
    assert (foreign / "notes.txt").read_text() == "not a release"
