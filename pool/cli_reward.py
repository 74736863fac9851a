"""CLI for the pool as a reward signal: `refpool pool calibrate`, `refpool pool judge-agreement`
and `refpool score`. Registered by pool/cli.py; handlers parse, call pool.* and print."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from refpool.core.errors import InputError, RefpoolError
from refpool.core.store import Store


def register(sub: argparse._SubParsersAction, psub: argparse._SubParsersAction) -> None:
    """Add `pool calibrate` and `pool judge-agreement` to `psub`, and `score` to `sub`."""
    c = psub.add_parser(
        "calibrate",
        help="sort candidates into a ladder (ceiling / rung / free win) by a policy's win rate",
    )
    c.add_argument(
        "--paintings",
        default=None,
        help="folder of PNGs a policy painted (default: round-0 candidates stand in for it)",
    )
    _ladder_args(c, "print the whole result as JSON")
    c.set_defaults(func=cmd_calibrate)

    r = psub.add_parser(
        "recalibrate",
        help="re-run the ladder against the newest policy paintings and release what moved",
    )
    r.add_argument(
        "--paintings", required=True, help="folder of PNGs the policy painted last (the film)"
    )
    _ladder_args(r, "print the result as JSON")
    r.set_defaults(func=cmd_recalibrate)

    a = psub.add_parser(
        "judge-agreement",
        help="how often the judge prefers a curator's love over their okay (both orders)",
    )
    _judge_args(a)
    a.add_argument("--pairs", type=int, default=24, help="love/okay pairs to ask")
    a.add_argument(
        "--pool",
        action="store_true",
        help="ask only about pairs of the latest draft (the pairs its release's card cites)",
    )
    a.add_argument(
        "--repeats",
        type=int,
        default=0,
        help="ask a sample of the pairs again K times, both orders: flip rate, position bias",
    )
    a.add_argument(
        "--repeat-pairs", type=int, default=8, help="how many resolved pairs --repeats asks again"
    )
    a.add_argument("--json", action="store_true", help="print JSON")
    a.set_defaults(func=cmd_agreement)

    s = sub.add_parser("score", help="fill hpsv3_mu / hpsv3_sigma with a preference scorer")
    s.add_argument("--scorer", default=None, help="a scorer in the models file's `scorers` section")
    s.add_argument(
        "--models-file", default=None, help="models JSON (default: $REFPOOL_MODELS or presets)"
    )
    s.add_argument(
        "--candidates", default="all", help="all, pool (the latest draft) or a released VERSION"
    )
    s.set_defaults(func=cmd_score)


def _ladder_args(p: argparse.ArgumentParser, json_help: str) -> None:
    """What `calibrate` and `recalibrate` share: the judge, samples, candidates, --json."""
    _judge_args(p)
    p.add_argument("--samples", type=int, default=6, help="paintings per candidate")
    p.add_argument(
        "--candidates",
        default="all",
        help="all (accepted candidates), pool (the latest draft) or a released VERSION",
    )
    p.add_argument("--json", action="store_true", help=json_help)


def _judge_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--judge",
        default=None,
        help="heuristic (offline), a models-file entry or a model id (default: the judge entry)",
    )
    p.add_argument(
        "--models-file", default=None, help="models JSON (default: $REFPOOL_MODELS or presets)"
    )
    p.add_argument(
        "--concurrency", type=int, default=None, help="judge requests in flight (default: entry)"
    )
    p.add_argument(
        "--retry-failed",
        action="store_true",
        help="ask the judge again about pairs it refused for good in an earlier run",
    )


def _with_judge(
    args: argparse.Namespace, work: Callable[[Store, Any], Awaitable[Any]]
) -> tuple[Any, list[str], str]:
    """(what `work` returned, why the judge was stopped for the run: empty if it was not, the
    structured-output mode its requests carried)."""
    from generators.llm import Endpoints
    from pool.reward.judge_config import make_judge

    store = Store.open()
    endpoints = Endpoints(args.concurrency, retry_failed=args.retry_failed)
    mode = "none"

    async def go() -> Any:
        nonlocal mode
        try:
            judge = make_judge(store, args.judge, args.models_file, endpoints)
            mode = getattr(judge, "structured_mode", "none")
            return await work(store, judge)
        finally:
            await endpoints.close()

    result = asyncio.run(go())
    return result, list(endpoints.disabled.values()), mode


class JudgeStopped(RefpoolError):
    """The judge was stopped for the run: what was printed is incomplete."""


def _fail_if_stopped(stopped: list[str], missing: str) -> None:
    """A run whose judge was stopped did not do its work, whatever it printed: it ends with the
    reason, what is missing, and that a rerun pays only for what is missing (exit 1)."""
    if stopped:
        raise JudgeStopped(
            " ".join(stopped) + f" The result above is incomplete: {missing} got no verdict."
            " The verdicts it gave are stored: a rerun pays only for the rest."
        )


def cmd_calibrate(args: argparse.Namespace) -> int:
    from pool.reward.judge import judge_label
    from pool.reward.ladder import (
        STAND_IN,
        CalibrationError,
        calibrate,
        choose_paintings,
        folder_paintings,
        stand_in_paintings,
    )
    from pool.selection.versions import candidate_ids_for

    if args.samples < 1:
        raise InputError("--samples must be at least 1")

    async def work(store: Store, judge: Any, bar: Any) -> Any:
        if args.paintings:
            found, policy = folder_paintings(args.paintings), f"paintings in {args.paintings}"
        else:
            found, policy = stand_in_paintings(store), STAND_IN
            print(f"note: {STAND_IN}", file=sys.stderr)
        chosen, dropped = choose_paintings(found, args.samples)
        ids = candidate_ids_for(store, args.candidates)
        if not ids:
            raise CalibrationError(f"no candidates in {args.candidates!r} to calibrate")
        calls = len(ids) * len(chosen) * 2
        print(
            f"{len(ids)} candidates x {len(chosen)} paintings x 2 orders = up to {calls}"
            f" judge calls (judge {judge_label(judge.name, judge.heuristic)})",
            file=sys.stderr,
        )
        return await calibrate(store, judge, chosen, ids, policy, dropped, progress=bar)

    result, stopped, mode, closing = _with_progress(args, "calibrate", work)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        print(result.summary())
        _print_rungs(result)
    _print_closing(closing)
    unresolved = result.counts()["unresolved"]
    _fail_if_stopped(stopped, f"{unresolved} of {len(result.entries)} candidates")
    _fail_if_no_verdict(judge_label(result.judge, result.heuristic), result, mode)
    return 0


def _print_rungs(result: Any) -> None:
    rungs = [e for e in result.entries if e.ladder == "rung"]
    for e in sorted(rungs, key=lambda e: e.win_rate or 0):
        print(f"    rung: candidate {e.candidate_id}  win rate {e.win_rate:.2f}")


def _with_progress(
    args: argparse.Namespace, desc: str, work: Callable[[Store, Any, Any], Awaitable[Any]]
) -> tuple[Any, list[str], str, list[str]]:
    """`_with_judge`, with a bar of verdicts done, failed and reused on stderr; also returns
    the closing lines: the verdict counts, and the calls made with their tokens and cost."""
    from pool.reward.verdict_progress import VerdictProgress, spend_lines
    from refpool.core.store import model_calls

    since = model_calls.last_id(Store.open())
    bar = VerdictProgress(desc)
    try:
        result, stopped, mode = _with_judge(args, lambda store, judge: work(store, judge, bar))
    finally:
        bar.close()
    return result, stopped, mode, [bar.line(), *spend_lines(Store.open(), since)]


def _print_closing(lines: list[str]) -> None:
    for line in lines:
        print(line, file=sys.stderr)


def cmd_recalibrate(args: argparse.Namespace) -> int:
    from pool.dataset.recalibrate import recalibrate_ladder, release_if_moved
    from pool.reward.judge import judge_label

    if args.samples < 1:
        raise InputError("--samples must be at least 1")

    async def work(store: Store, judge: Any, bar: Any) -> Any:
        return await recalibrate_ladder(
            store, judge, args.paintings, args.samples, args.candidates, bar
        )

    (film, result), stopped, mode, closing = _with_progress(args, "recalibrate", work)
    unresolved = result.counts()["unresolved"]
    _fail_if_stopped(stopped, f"{unresolved} of {len(result.entries)} candidates")
    _fail_if_no_verdict(judge_label(result.judge, result.heuristic), result, mode)
    done = release_if_moved(Store.open(), film, result)
    print(json.dumps(_recalibration_dict(done), indent=2) if args.json else done.summary())
    _print_closing(closing)
    return 0


def _recalibration_dict(done: Any) -> dict[str, Any]:
    return {
        "film": {"sha256": done.film.sha256, "paintings": len(done.film.paintings)},
        "film_bytes": done.film.size,
        "calibration": done.calibration.to_dict(),
        "released": done.released.version if done.released else None,
        "current": done.current,
        "moved": done.moved.to_dict() if done.moved else None,
    }


def cmd_agreement(args: argparse.Namespace) -> int:
    from pool.reward.judge import judge_label
    from pool.reward.judge_agreement import judge_agreement

    if args.repeats < 0 or args.repeat_pairs < 1:
        raise InputError("--repeats must be 0 or more and --repeat-pairs at least 1")

    async def work(store: Store, judge: Any, bar: Any) -> Any:
        among = None
        if args.pool:
            from pool.selection.draft import latest_draft

            draft = latest_draft(store)
            if draft is None:
                raise RefpoolError("there is no draft yet: run `refpool pool build` first")
            among = set(draft.candidate_ids)
        return await judge_agreement(
            store,
            judge,
            max_pairs=args.pairs,
            among=among,
            repeats=args.repeats,
            repeat_pairs=args.repeat_pairs,
            progress=bar,
        )

    result, stopped, mode, closing = _with_progress(args, "judge-agreement", work)
    print(json.dumps(result.to_dict(), indent=2) if args.json else result.summary())
    _print_closing(closing)
    if not args.json and result.warning:
        print(f"warning: {result.warning}")
    _fail_if_stopped(stopped, f"{result.pairs - result.resolved} of {result.pairs} pairs")
    _fail_if_no_verdict(judge_label(result.judge, result.heuristic), result, mode)
    return 0


def _fail_if_no_verdict(label: str, result: Any, mode: str) -> None:
    """A judge that was asked about pairs and resolved none measured nothing: exit 1 with its
    reasons and what to do (a judge that resolved some pairs lists the rest in its output)."""
    from pool.reward.judge_reasons import JudgeFailed, failure_message

    if result.resolved_nothing:
        raise JudgeFailed(failure_message(label, list(result.unresolved_pairs), mode))


def cmd_score(args: argparse.Namespace) -> int:
    from pool.reward.judge_config import models_data
    from pool.reward.scorer import ScorerError, make_scorer, score_candidates, scorer_configs
    from pool.selection.versions import candidate_ids_for

    configs = scorer_configs(models_data(args.models_file))
    names = ", ".join(sorted(configs)) or "none configured"
    if not args.scorer:
        raise InputError(f"name a scorer with --scorer ({names}); without one hpsv3_mu stays null")
    if args.scorer not in configs:
        raise InputError(
            f"no scorer {args.scorer!r} in the models file's `scorers` section ({names})",
            hint="choose a models file",
        )
    store = Store.open()
    ids = candidate_ids_for(store, args.candidates)
    try:
        scorer = make_scorer(args.scorer, configs[args.scorer])
        run = score_candidates(store, scorer, ids, log=print)
    except ScorerError as exc:
        raise RefpoolError(
            f"{exc.message} (scores stored so far are kept; rerun to continue)",
            hint=exc.hints,
        ) from exc
    print(run.summary())
    return 0
