"""`refpool`: the command line, a thin shell over the Python API.

The rule: each package's `cli.py` registers its own nouns with `register(subparsers)`, and
this module imports them all by name (no discovery, nothing optional):

    renderer/cli.py        render, serve-renderer
    refpool/intake/cli.py  photos
    generators/cli.py      generate, candidates
    curation/cli.py        rate, ratings, curators
    pool/cli.py            pool, report, export, publish

The two nouns that span every stage, `studio` and `demo`, are registered here. Handlers only
parse arguments, call library functions and print. Every command's `--help` goes through
HelpFormatter, which shows each option's default as the parser holds it.

Errors have one handler, `main`: a RefpoolError prints `error: <message>` (and each hint as
the flag that acts on it) on stderr and exits with its status (refpool.core.errors lists
them; 2 stays argparse's). Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator

from curation import cli as curation_cli
from generators import cli as generators_cli
from pool import cli as pool_cli
from refpool.core.errors import EXIT_INTERRUPTED, RefpoolError
from refpool.core.secret_values import redact_known
from refpool.intake import cli as intake_cli
from renderer import cli as renderer_cli
from renderer.profiles import PROFILES

PACKAGES = (renderer_cli, intake_cli, generators_cli, curation_cli, pool_cli)

# refpool.core.errors.HINTS, as this command line's flags (library messages never name them).
HINT_FLAGS = {
    "force tag": "rerun with --force-tag to move the tag",
    "name a curator": "pass --curator NAME",
    "choose a judge": "use --judge heuristic (offline) or --judge NAME from the models file",
    "choose a models file": "pass --models-file FILE (or set $REFPOOL_MODELS)",
    "choose a generator": "use --generator procedural (no key, no network) or a models-file NAME",
    "choose a critic": "use --critic heuristic (offline) or --critic NAME from the models file",
    "retry failed": "pass --retry-failed to ask it again",
    "give paintings": "pass --paintings DIR (PNGs a policy painted)",
    "dry run": "--dry-run lists what would be uploaded, with no token and no network",
    "choose an endpoint": "pass --endpoint URL (or set $HF_ENDPOINT)",
    "export offline": "`refpool export --out DIR` writes the release to a folder, with no network",
    "choose an output folder": "pass --out DIR naming an empty or new folder",
    "choose a version": "pass --version X.Y.Z newer than the latest, or --bump major|minor|patch",
    "choose a profile": f"pass --profile {' or --profile '.join(sorted(PROFILES))}",
    "give a rung share": "run `refpool pool build --mix love=0.4,okay=0.4,rung=0.2` once",
    "choose a system prompt": "pass --system-prompt FILE (a UTF-8 text file)",
}


def report_error(exc: RefpoolError) -> None:
    """`error: <message>` on stderr, then one `hint:` line per action, as its flag."""
    lines = [f"error: {redact_known(exc.message)}"]  # a vendor's text may echo a key
    lines += [f"hint: {HINT_FLAGS[h]}" for h in exc.hints]
    print("\n".join(lines), file=sys.stderr)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's help, plus what every `refpool ... --help` shows from the code itself:

    * each option's default, as ` (default: X)`, unless its help already says "default"
      (a default of None, False, an empty string or list means "not given" and is not shown);
    * paragraphs: a description or epilog keeps its blank-line breaks, and a paragraph whose
      lines are indented (a table) is printed as written; other text wraps as usual.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        shown = shown_default(action)
        if shown is None or "default" in text.lower():
            return text
        return f"{text} (default: {shown.replace('%', '%%')})".lstrip()

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = text.split("\n\n")
        return "\n\n".join(
            "\n".join(indent + line for line in p.splitlines())
            if p[:1].isspace()
            else super(HelpFormatter, self)._fill_text(p, width, indent)
            for p in paragraphs
        )


FLAG_ACTIONS = (
    argparse._StoreTrueAction,
    argparse._StoreFalseAction,
    argparse._StoreConstAction,
    argparse._CountAction,
    argparse._HelpAction,
    argparse._VersionAction,
)


def shown_default(action: argparse.Action) -> str | None:
    """An option's default as `--help` shows it; None when the default means "not given"."""
    default = action.default
    if not action.option_strings or isinstance(action, FLAG_ACTIONS):
        return None
    if default is None or default is argparse.SUPPRESS:
        return None
    if isinstance(default, (str, list, tuple)) and not default:
        return None
    if isinstance(default, (list, tuple)):
        return " ".join(map(str, default))
    return str(default)


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], str, argparse.ArgumentParser]]:
    """(words after `refpool`, one-line help, parser) for every command under `parser`,
    depth first: the one walk of the command tree (the formatter, the docs, the tests)."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {a.dest: a.help or "" for a in action._choices_actions}
        for name, sub in action.choices.items():
            words = (*path, name)
            yield words, helps.get(name, ""), sub
            yield from commands(sub, words)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="refpool",
        description="Build, curate and publish reference pools of p5.brush paintings.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for package in PACKAGES:
        package.register(sub)
    _register_app(sub)
    parser.formatter_class = HelpFormatter
    for _, _, each in commands(parser):  # add_parser does not pass the formatter down
        each.formatter_class = HelpFormatter
    return parser


def _register_app(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "studio",
        help="open the curation studio in the browser (Gradio)",
        description="Open the keyboard-first curation studio on $REFPOOL_HOME.",
    )
    curation_cli.studio_arguments(p)
    p.set_defaults(func=_studio)

    p = sub.add_parser(
        "demo",
        help="the whole pipeline offline: sample photos -> paintings -> the studio",
        description="Import the bundled CC BY photos, paint them with the procedural generator "
        "over 3 critique rounds (no API key, no network), write a diversity report, then open "
        "the curation studio.",
    )
    p.add_argument("--candidates", type=int, default=3, help="candidates per photo")
    p.add_argument("--rounds", type=int, default=3, help="refinement rounds")
    p.add_argument("--no-studio", action="store_true", help="stop after generation and the report")
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument("--port", type=int, default=None, help="studio port")
    p.set_defaults(func=_demo)


def _studio(args: argparse.Namespace) -> int:
    import app  # gradio is heavy: only load it for the studio itself

    return app.main(args)


def _demo(args: argparse.Namespace) -> int:
    from refpool.core.store import Store
    from refpool.demo import run_demo

    store = Store.open()
    print(f"refpool demo: data in {store.home}", flush=True)
    run_demo(
        store,
        args.candidates,
        args.rounds,
        progress=not args.no_progress,
        log=lambda line: print(line, flush=True),
    )
    if args.no_studio:
        return 0
    studio = curation_cli.studio_arguments(argparse.ArgumentParser())
    return _studio(studio.parse_args([] if args.port is None else ["--port", str(args.port)]))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except RefpoolError as exc:
        report_error(exc)
        return exc.exit_status
    except KeyboardInterrupt:
        print("interrupted; finished work is saved, rerun to resume", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `refpool ... | head` closed the pipe: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
