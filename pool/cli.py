"""CLI for the pool: `refpool pool build|release|diff|versions|sample`, `refpool report`,
`refpool export`, `refpool publish`. Handlers only parse, call pool.* and print."""

from __future__ import annotations

import argparse
import json
from collections import Counter

from refpool.core.contracts import RELEASE_TIERS, RUNG
from refpool.core.defaults import DUP_THRESHOLD, LOVE_FRACTION, TARGET_POOL_SIZE
from refpool.core.errors import RefpoolError
from refpool.core.store import Store


def register(sub: argparse._SubParsersAction) -> None:
    pool = sub.add_parser("pool", help="build, release, compare and sample pool versions")
    psub = pool.add_subparsers(dest="pool_command", required=True, metavar="ACTION")

    b = psub.add_parser(
        "build", help="choose a draft pool from the rated candidates and explain what was left out"
    )
    b.add_argument(
        "--target",
        type=int,
        default=TARGET_POOL_SIZE,
        help="number of references wanted",
    )
    b.add_argument(
        "--max-per-photo", type=int, default=None, help="cap per reference photo (default: none)"
    )
    b.add_argument(
        "--max-per-model", type=int, default=None, help="cap per generator model (default: none)"
    )
    b.add_argument(
        "--love-fraction",
        type=float,
        default=LOVE_FRACTION,
        help="share of love in the target",
    )
    b.add_argument(
        "--dup-threshold",
        type=float,
        default=None,
        help="similarity distance (0..100: colour, layout, texture) at or below which two images"
        f" are near-duplicates (default: {DUP_THRESHOLD}, from `python -m pool.similarity.threshold`)",
    )
    b.add_argument(
        "--mix",
        default=None,
        help="tier shares, e.g. love=0.5,okay=0.5,rung=0 (okay takes what is left; rung is the"
        " band `pool calibrate` found the policy wins 25-75%% against). Overrides --love-fraction",
    )
    b.add_argument("--json", action="store_true", help="print the whole draft as JSON")
    b.add_argument("--verbose", "-v", action="store_true", help="list every left-out candidate")
    b.set_defaults(func=cmd_build)

    r = psub.add_parser(
        "release",
        help="freeze the latest draft as a new semver version, with every file of its release",
    )
    g = r.add_mutually_exclusive_group()
    g.add_argument("--version", help="explicit version, e.g. 1.2.0")
    g.add_argument(
        "--bump",
        choices=("major", "minor", "patch"),
        default="minor",
        help="bump the latest version; the first release is 1.0.0",
    )
    r.add_argument(
        "--notes", default="", help="release notes, stored with the version and on the card"
    )
    r.add_argument(
        "--repo",
        default=None,
        help="OWNER/NAME the frozen card's load snippets name (default: a placeholder)",
    )
    r.add_argument(
        "--system-prompt",
        metavar="FILE",
        default=None,
        help="system prompt of the training sets (default: refpool's coder prompt)",
    )
    r.add_argument(
        "--sft-okay",
        action="store_true",
        help="the sft set teaches okay programs too, not only love",
    )
    r.add_argument(
        "--training-photos",
        action="store_true",
        help="ship the reference photos (photos/) and show them in the sft and prompts sets",
    )
    r.add_argument(
        "--judge-pairs",
        action="store_true",
        help="add judge-resolved pairs (labelled) to the preference set where curators tie",
    )
    r.add_argument(
        "--pseudonymise-curators",
        action="store_true",
        help="publish each curator as a stable pseudonym (curator-<8 hex>), never by name",
    )
    r.set_defaults(func=cmd_release)

    from pool import cli_versions  # diff, versions, withdraw

    cli_versions.register(psub)

    s = psub.add_parser(
        "sample", help="draw k references from a released version (the RL env's sampler)"
    )
    s.add_argument("--version", default="latest", help="released version")
    s.add_argument("--k", type=int, default=4, help="number of references")
    s.add_argument("--love", type=int, default=2, help="how many of them love")
    s.add_argument("--seed", type=int, default=0, help="seed; same seed, same draw")
    s.add_argument(
        "--from-export", default=None, help="sample from an exported folder instead of the store"
    )
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=cmd_sample)

    rep = sub.add_parser(
        "report", help="write the self-contained HTML diversity report (and JSON metrics)"
    )
    rep.add_argument("--out", required=True, help="HTML file to write")
    rep.add_argument(
        "--json", dest="json_out", default=None, help="also write the numbers to this JSON file"
    )
    which = rep.add_mutually_exclusive_group()
    which.add_argument("--version", default=None, help="report on a released version")
    which.add_argument(
        "--draft", action="store_true", help="report on the latest draft (the default)"
    )
    rep.add_argument(
        "--compare", default=None, help="show what changed against this version (or 'draft')"
    )
    rep.add_argument(
        "--dup-threshold",
        type=float,
        default=None,
        help=f"near-duplicate similarity distance, 0..100 (default: {DUP_THRESHOLD})",
    )
    rep.set_defaults(func=cmd_report)

    e = sub.add_parser(
        "export",
        help="write a released version as a release: images/, sources/, metadata.jsonl,"
        " photo_attribution.json, README.md",
    )
    e.add_argument("--out", required=True, help="folder to write the release into (replaced)")
    e.add_argument("--version", default="latest", help="released version")
    e.add_argument("--repo", default=None, help="OWNER/NAME for the card's load snippets")
    e.add_argument("--verbose", "-v", action="store_true", help="list every file")
    e.set_defaults(func=cmd_export)

    p = sub.add_parser(
        "publish", help="upload a released version to the Hub in one commit, tagged vX.Y.Z"
    )
    p.add_argument("--repo", required=True, help="dataset repo OWNER/NAME (created if needed)")
    p.add_argument("--version", default="latest", help="released version")
    p.add_argument("--private", action="store_true", help="create the repo private")
    p.add_argument(
        "--dry-run", action="store_true", help="list exactly what would be uploaded; no network"
    )
    p.add_argument(
        "--endpoint", default=None, help="Hub URL (default: $HF_ENDPOINT or huggingface.co)"
    )
    p.add_argument("--verbose", "-v", action="store_true", help="list every file of the release")
    p.add_argument(
        "--force-tag",
        action="store_true",
        help="move an existing vX.Y.Z tag that names other contents (environments pinned to it"
        " will change)",
    )
    p.set_defaults(func=cmd_publish)

    from pool import cli_reward  # calibrate, judge-agreement, score: the pool as a reward

    cli_reward.register(sub, psub)


def parse_mix(mix: str | None, love_fraction: float) -> tuple[float, float]:
    """`love=0.5,okay=0.3,rung=0.2` -> (love share, rung share); okay is what is left."""
    from pool.selection.draft import SelectionError

    if not mix:
        return love_fraction, 0.0
    shares: dict[str, float] = {}
    for part in mix.split(","):
        name, _, value = part.partition("=")
        name = name.strip()
        if name not in RELEASE_TIERS:
            raise SelectionError(f"--mix: unknown tier {name!r}; use love, okay and rung")
        try:
            shares[name] = float(value)
        except ValueError:
            raise SelectionError(f"--mix: {part!r} is not TIER=SHARE, e.g. love=0.5") from None
    love, rung = shares.get("love", love_fraction), shares.get("rung", 0.0)
    okay = shares.get("okay", 1.0 - love - rung)
    if min(love, okay, rung) < 0 or abs(love + okay + rung - 1.0) > 1e-6:
        raise SelectionError(f"--mix: the shares must be >= 0 and add up to 1 (got {mix})")
    return love, rung


def cmd_build(args: argparse.Namespace) -> int:
    from pool.selection.draft import REASONS, build_pool, save_draft

    store = Store.open()
    love_fraction, rung_fraction = parse_mix(args.mix, args.love_fraction)
    draft = build_pool(
        store,
        target=args.target,
        max_per_photo=args.max_per_photo,
        max_per_model=args.max_per_model,
        love_fraction=love_fraction,
        rung_fraction=rung_fraction,
        dup_threshold=DUP_THRESHOLD if args.dup_threshold is None else args.dup_threshold,
        progress=True,
    )
    draft_id = save_draft(store, draft)
    if args.json:
        print(json.dumps({"draft_id": draft_id, **draft.to_dict()}, indent=2))
        return 0
    print(draft.summary())
    for reason, items in draft.reasons().items():
        shown = items if args.verbose else items[:5]
        for e in shown:
            print(f"    {e.candidate_id}: {e.detail}")
        if len(items) > len(shown):
            print(f"    ... {len(items) - len(shown)} more {REASONS[reason]} (--verbose lists all)")
    print(f"saved as draft {draft_id}; release it with `refpool pool release`")
    return 0


def cmd_release(args: argparse.Namespace) -> int:
    from pool.dataset.release import release
    from pool.dataset.training_prompts import options_from_file

    pv = release(
        Store.open(),
        version=args.version,
        bump=args.bump,
        notes=args.notes,
        repo_id=args.repo,
        progress=True,
        training=options_from_file(
            args.system_prompt, args.sft_okay, args.training_photos, args.judge_pairs
        ),
        pseudonymise_curators=args.pseudonymise_curators,
    )
    counts = Counter(pv.tiers.values())
    shown = ", ".join(f"{t} {counts[t]}" for t in RELEASE_TIERS if counts[t] or t != RUNG)
    print(f"released {pv.version}: {len(pv.candidate_ids)} references ({shown})")
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    from pool.dataset.sampler import sample_references

    source = args.from_export or Store.open()
    refs = sample_references(source, args.version, k=args.k, love=args.love, seed=args.seed)
    rows = [{"candidate_id": r.candidate_id, "tier": r.tier} for r in refs]
    if args.json:
        print(json.dumps(rows))
    else:
        for row in rows:
            print(f"{row['candidate_id']}\t{row['tier']}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from pool.diversity.report import write_report
    from pool.selection.versions import DRAFT, resolve_tiers

    store = Store.open()
    label = args.version or DRAFT
    tiers = resolve_tiers(store, label)
    compare = (args.compare, resolve_tiers(store, args.compare)) if args.compare else None
    threshold = DUP_THRESHOLD if args.dup_threshold is None else args.dup_threshold
    try:
        result = write_report(
            store,
            args.out,
            tiers,
            label,
            json_out=args.json_out,
            compare=compare,
            threshold=threshold,
        )
    except RefpoolError:
        raise
    except OSError as exc:  # the output path: not writable, a folder, ...
        raise RefpoolError(f"cannot write the report: {exc}") from exc
    mt = result.metrics
    written = f"{result.html_path}" + (f" and {result.json_path}" if result.json_path else "")
    print(
        f"wrote {written}: {mt.n} images,"
        f" Vendi {mt.vendi.hash} (hash) / {mt.vendi.colour} (colour),"
        f" hue entropy {mt.hue.entropy_bits} bits,"
        f" {mt.near_duplicates.n_clusters} near-duplicate clusters"
    )
    every = result.payload.get("all_candidates")
    if every and every["n_candidates"]:
        print(
            f"among all {every['n_candidates']} candidates: {every['n_clusters']} near-duplicate"
            f" clusters holding {every['n_images']} ({every['share_of_candidates']:.0%})"
        )
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from pool.dataset.export import describe_files, export_version

    result = export_version(Store.open(), args.out, args.version, repo_id=args.repo)
    total = sum(size for _, size in result.files)
    print(
        f"exported {result.version}: {result.rows} rows, licence {result.licence},"
        f" {len(result.files)} files, {total:,d} bytes in {result.out_dir}"
    )
    print("\n".join(describe_files(result.files, args.verbose)))
    print(f"{result.version}: {result.frozen}")
    for note in result.notes:
        print(f"note: {note}")
    return 0


def cmd_publish(args: argparse.Namespace) -> int:
    from pool.dataset.publish import PublishPlan, publish

    result = publish(
        Store.open(),
        args.repo,
        args.version,
        private=args.private,
        dry_run=args.dry_run,
        endpoint=args.endpoint,
        force_tag=args.force_tag,
    )
    if isinstance(result, PublishPlan):
        print("dry run, nothing uploaded:\n" + result.summary(args.verbose))
        return 0
    print(result.plan.summary(args.verbose))
    if not result.tagged:
        done = f"already published: tag {result.tag} names commit {result.commit_oid[:12]}"
    elif not result.committed:
        done = f"the release was already committed; tagged {result.tag}"
    else:
        done = f"published: commit {result.commit_oid[:12]}, tag {result.tag}"
    print(f"{result.plan.version} on {result.plan.repo_id}, {done}\n{result.commit_url}")
    return 0
