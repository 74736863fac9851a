"""The one error base: every mistake or refusal a user can meet is a RefpoolError.

A RefpoolError carries `message` (for the user: what went wrong and what to do) and the
`exit_status` the command line ends with. The shells show it in their own words: the
`refpool` command prints `error: <message>` and exits with `exit_status`; the studio shows
the message in its message box. Anything that is not a RefpoolError is a bug and keeps its
traceback.

Messages are written for every shell, so they name actions, never command-line flags. Where
the fix is an option of a command, `hint` names it in plain words (one or more of HINTS) and
the command line turns each into its flag.

Exit statuses of `refpool`, defined here once:
    0    the work was done
    1    EXIT_FAILED: the work ran and failed or was refused (a user mistake, a refused file,
         a rejected sketch, a remote service that said no, a judge that gave no verdict at
         all); the message says what to do
    2    EXIT_USAGE: reserved for argparse's usage errors (a missing or malformed argument);
         a RefpoolError never uses it
    3    EXIT_INFRA: our own infrastructure failed (the browser could not start or keep
         running); nothing is wrong with the input, and a rerun may succeed
    130  EXIT_INTERRUPTED: stopped by Ctrl-C; finished work is kept
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INFRA = 3
EXIT_INTERRUPTED = 130

# What each status means, for the reference page (docs/reference/exit-status.md is generated
# from this table) and for anyone scripting around `refpool`.
EXIT_STATUSES = {
    EXIT_OK: "the work was done",
    EXIT_FAILED: "the work ran and failed or was refused: a user mistake (an unknown version,"
    " gate profile, generator or models-file field, a missing folder, no token), a refused"
    " photo, a rejected sketch, a remote service that said no, a judge that gave no verdict at"
    " all; the message says what to do",
    EXIT_USAGE: "argparse's usage error only (a missing or malformed argument); refpool itself"
    " never uses it",
    EXIT_INFRA: "our own infrastructure failed (the browser would not start or keep running):"
    " the input is fine, and a rerun may succeed",
    EXIT_INTERRUPTED: "interrupted with Ctrl-C; finished work is kept, and a rerun resumes",
}

# Actions a message may point at by name; each shell maps them to its own controls.
HINTS = {
    "force tag": "move an existing release tag that names other contents",
    "name a curator": "say which curator the ratings belong to",
    "choose a judge": "choose another judge (the offline heuristic judge needs no endpoint)",
    "choose a models file": "point at your own models file",
    "choose a generator": "choose another generator (procedural needs no key or network)",
    "choose a critic": "choose another critic (the heuristic critic needs no endpoint)",
    "retry failed": "ask again a model that refused permanently in an earlier run",
    "give paintings": "give a folder of a policy's paintings (PNGs from an RL run)",
    "dry run": "see what would be uploaded, without uploading (no token needed)",
    "choose an endpoint": "say which Hub to publish to: huggingface.co or a self-hosted Hub's URL",
    "export offline": "write the release to a folder instead (no Hub, no network)",
    "choose an output folder": "write into an empty or new folder",
    "choose a version": "give the new version's number, or which part of the latest to bump",
    "choose a profile": "choose one of the gate profiles named",
    "give a rung share": "build the draft once with a share of rung references",
    "choose a system prompt": "give the training sets' system prompt as a UTF-8 text file",
}


class RefpoolError(Exception):
    """A failure a user can act on. `message` says what went wrong and what to do."""

    exit_status: int = EXIT_FAILED

    def __init__(
        self,
        message: str,
        *,
        hint: str | tuple[str, ...] | None = None,
        exit_status: int | None = None,
    ) -> None:
        super().__init__(message)
        hints = (hint,) if isinstance(hint, str) else tuple(hint or ())
        unknown = [h for h in hints if h not in HINTS]
        if unknown:  # a typo here would silently drop the advice
            raise ValueError(f"unknown hint(s) {unknown}; add them to refpool.core.errors.HINTS")
        if exit_status == EXIT_USAGE:
            raise ValueError("exit status 2 is argparse's alone")
        self.message = message
        self.hints = hints  # actions that fix it, in plain words (keys of HINTS)
        if exit_status is not None:
            self.exit_status = exit_status

    def __str__(self) -> str:
        return self.message


class RefpoolInfraError(RefpoolError):
    """Our own infrastructure failed (not the user's input): exit 3, a rerun may succeed."""

    exit_status = EXIT_INFRA


# General kinds, for packages whose mistakes need no class of their own. Each keeps the
# builtin it replaced as a second base, so existing `except ValueError` callers still work.
class InputError(RefpoolError, ValueError):
    """A value the user gave (an option, a form field, a file's contents) is not acceptable."""


class NotFound(RefpoolError, LookupError):
    """What the user named (a candidate, a photo, a version) does not exist."""


class MissingFile(RefpoolError, FileNotFoundError):
    """A file or folder the work needs is not there; the message says which and how to fix it."""
