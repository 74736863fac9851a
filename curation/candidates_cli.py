"""CLI: `refpool candidates list | show` (thin shells over curation/candidate_record.py)."""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import Any

from curation.candidate_record import GATE_OUTCOMES, TIERS, Filters, list_rows, show
from refpool.core.store import Store


def register(sub: argparse._SubParsersAction) -> None:
    c = sub.add_parser("candidates", help="inspect generated candidates")
    csub = c.add_subparsers(dest="candidates_command", required=True, metavar="ACTION")
    ls = csub.add_parser(
        "list",
        help="id, photo, model, round, gate, violations, tier, coverage, png path",
        description="Every candidate, or those every given filter matches.",
    )
    ls.add_argument(
        "--outcome",
        metavar="OUTCOME",
        help=f"{' or '.join(GATE_OUTCOMES)} (the gate's verdict), or a round's outcome:"
        " ok, no_code, truncated, refusal, http_error, timeout, infra_error, critic_error ...",
    )
    ls.add_argument("--violation", metavar="CODE", help="a gate code, e.g. E_TEXT")
    ls.add_argument("--tier", choices=TIERS, help="the curators' final tier")
    ls.add_argument(
        "--model", metavar="NAME", help="a generator name, or the model id asked for or served"
    )
    ls.add_argument("--photo", metavar="ID|FILE", help="a photo id or file name")
    ls.add_argument("--round", type=int, metavar="N", help="a refinement round (0 is the first)")
    ls.add_argument("--json", action="store_true", help="print one JSON array")
    ls.set_defaults(func=cmd_candidates_list)

    sh = csub.add_parser(
        "show",
        help="one candidate, whole: photo, prompt, reply, violations, critique chain, ratings",
    )
    sh.add_argument("candidate_id", metavar="ID", type=int, help="the candidate's id")
    sh.add_argument("--json", action="store_true", help="print one JSON object")
    sh.set_defaults(func=cmd_candidates_show)


def cmd_candidates_list(args: argparse.Namespace) -> int:
    filters = Filters(args.outcome, args.violation, args.tier, args.model, args.photo, args.round)
    rows = list_rows(Store.open(), filters)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(
        f"{'id':>5} {'photo':<28} {'model':<18} {'rnd':>3} {'gate':<8} {'violations':<18}"
        f" {'tier':<7} {'cov':>6}  png"
    )
    for r in rows:
        cov = f"{r['coverage']:.3f}" if r["coverage"] is not None else "-"
        gate = "accepted" if r["accepted"] else r["outcome"] if r["outcome"] != "ok" else "rejected"
        codes = ",".join(r["violations"]) or "-"
        print(
            f"{r['id']:>5} {r['photo'][:28]:<28} {r['model'][:18]:<18} {r['round']:>3}"
            f" {gate[:8]:<8} {codes[:18]:<18} {r['tier'] or '-':<7} {cov:>6}  {r['png'] or '-'}"
        )
    for line in _served_notes(rows):
        print(line)
    print(f"{len(rows)} candidate(s)")
    return 0


def _served_notes(rows: list[dict[str, Any]]) -> list[str]:
    """One line per model whose candidates another model wrote, as the server said."""
    from generators.served import same_model

    found: dict[tuple[str, str, str], list[int]] = {}
    for r in rows:
        asked, served = r["requested_model"], r["served_model"]
        if asked and served and not same_model(asked, served):
            found.setdefault((r["model"], asked, served), []).append(r["id"])
    return [
        f"{name}: candidate(s) {', '.join(map(str, ids))} written by {served}, as the server"
        f" said (not {asked} as requested)"
        for (name, asked, served), ids in found.items()
    ]


def cmd_candidates_show(args: argparse.Namespace) -> int:
    record = show(Store.open(), args.candidate_id)
    if args.json:
        print(json.dumps(record, indent=2))
        return 0
    print("\n".join(show_lines(record)))
    return 0


def show_lines(r: dict[str, Any]) -> list[str]:
    """`candidates show` as text: the record's sections, in the order a reader checks them."""
    p = r["photo"]
    gone = f"  WITHDRAWN: {p['withdrawn']}" if p.get("withdrawn") else ""
    out = [
        f"candidate {r['id']}  round {r['round']}  model {r['model']}  seed {r['seed']}",
        f"  outcome {r['outcome']}; gate {r['gate']}"
        + (f"; coverage {r['coverage']:.3f}" if r["coverage"] is not None else "")
        + (f"; infrastructure: {r['infra_error']}" if r["infra_error"] else ""),
        f"  png      {r['png'] or '-'}",
        f"photo {p['id']}  {p['file_name']}  ({p['subject']}; {p['licence']}, {p['author']}){gone}",
        "violations:" + ("" if r["violations"] else " none"),
    ]
    for v in r["violations"]:
        where = f" (line {v['line']})" if v.get("line") else ""
        out.append(f"  {v['code']}{where}: {v['message']}")
    out += _call_lines("coder", r["coder_call"])
    out += _call_lines("critic", r["critic_call"])
    out.append("critique chain:")
    for s in r["chain"]:
        mark = "*" if s["id"] == r["id"] else " "
        crit = s["critique"]
        said = f": {crit.get('summary') or crit.get('advice', '')}" if crit else ""
        gate = "accepted" if s["accepted"] else f"rejected {','.join(s['violations'])}".strip()
        out.append(f" {mark}#{s['id']} round {s['round']} {s['outcome']}, {gate}{said[:160]}")
    votes = ", ".join(f"{who} {tier}" for who, tier in sorted(r["ratings"].items()))
    out.append(f"ratings: {votes or 'none'}" + (f"  (final: {r['tier']})" if r["tier"] else ""))
    out.append("(long texts are shortened here; --json prints the whole prompt, reply and program)")
    return out


def _call_lines(role: str, call: dict[str, Any] | None) -> list[str]:
    if call is None:
        maker = "the procedural painter" if role == "coder" else "the heuristic critic"
        return [f"{role} call: none ({maker} calls no model)"]
    served = f", served by {call['served_model']}" if call["served_model"] else ""
    tokens = (call["prompt_tokens"] or 0) + (call["completion_tokens"] or 0)
    out = [
        f"{role} call #{call['id']}: {call['model']}{served}, {call['outcome']}, {tokens} tokens,"
        f" {call['latency_ms'] or 0:.0f} ms"
        + (f"; error: {call['error']}" if call["error"] else "")
    ]
    for message in call["prompt"]:
        content = message.get("content")
        if isinstance(content, list):  # text and image parts; images are stored as sha256
            content = " ".join(part.get("text") or "[image]" for part in content)
        out.append(f"  {message.get('role', '?')}: " + _short(str(content)))
    out.append("  reply: " + _short(call["reply"] or "-"))
    return out


def _short(text: str, width: int = 600) -> str:
    flat = " ".join(text.split())
    return textwrap.shorten(flat, width, placeholder=" …") if len(flat) > width else flat
