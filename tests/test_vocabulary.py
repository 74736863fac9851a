"""One home per word: the tier vocabulary, the default gate profile and the word Verdict.

Like tests/test_layout.py, these read the product code with `ast`, so a second spelling of a
shared constant shows up here instead of drifting apart from the first one.
"""

from __future__ import annotations

import ast
import typing
from pathlib import Path

from test_layout import ROOT, source_files

from refpool.core import contracts, defaults

TIER_WORDS = {"love", "okay", "reject", "skip", "rung"}
TIERS_HOME = ROOT / "refpool" / "core" / "contracts.py"
PROFILE_HOME = ROOT / "refpool" / "core" / "defaults.py"
# The catalogue of profiles, where "reference" is defined by name rather than chosen as a default.
PROFILE_CATALOGUE = ROOT / "renderer" / "profiles.py"


def tier_literals(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, source) of every tuple/list/set literal that spells two or more tier words."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            words = {
                e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in TIER_WORDS
            }
            if len(words) >= 2:
                out.append((node.lineno, ast.unparse(node)))
    return out


def profile_defaults(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, source) of every "reference" used as a value: a default, an argument, a
    comparison or an assignment (docstrings are prose, not defaults, and are left alone)."""
    docstrings = {
        id(body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        and (body := node.body)
        and isinstance(body[0], ast.Expr)
    }
    return [
        (node.lineno, ast.unparse(node))
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and node.value == "reference"
        and id(node) not in docstrings
    ]


def _offenders(scan, home: set[Path]) -> list[str]:
    found = []
    for path in source_files():
        if path in home:
            continue
        for line, text in scan(ast.parse(path.read_text("utf-8"))):
            found.append(f"{path.relative_to(ROOT)}:{line}: {text}")
    return found


def test_only_contracts_spells_a_tier_tuple() -> None:
    offenders = _offenders(tier_literals, {TIERS_HOME})
    assert not offenders, "import the set from refpool.core.contracts:\n" + "\n".join(offenders)


def test_the_tier_scan_catches_a_second_spelling() -> None:
    tree = ast.parse('OK = ("love", "okay")\nif t in ["okay", "rung", "x"]:\n    pass\n')
    assert [line for line, _ in tier_literals(tree)] == [1, 2]
    assert not tier_literals(ast.parse('LADDER = ("ceiling", "rung", "free_win")\n'))


def test_the_tier_sets_say_what_they_are_for() -> None:
    assert (*contracts.RATING_TIERS, contracts.SKIP) == contracts.RATING_ACTIONS
    assert typing.get_args(contracts.RatingTier) == contracts.RATING_ACTIONS
    assert set(contracts.POOL_TIERS) < set(contracts.RATING_TIERS)
    assert (*contracts.POOL_TIERS, contracts.RUNG) == contracts.RELEASE_TIERS


def test_only_defaults_names_the_default_gate_profile() -> None:
    offenders = _offenders(profile_defaults, {PROFILE_HOME, PROFILE_CATALOGUE})
    assert not offenders, "use refpool.core.defaults.GATE_PROFILE:\n" + "\n".join(offenders)


def test_the_default_gate_profile_is_one_the_renderer_has() -> None:
    from renderer.profiles import PROFILES

    assert defaults.GATE_PROFILE in PROFILES
    assert contracts.GateResult(accepted=True).profile == defaults.GATE_PROFILE


def test_the_profile_scan_catches_a_default_but_not_a_docstring() -> None:
    tree = ast.parse(
        '"""The reference gate."""\ndef f(profile="reference"):\n    """reference"""\n'
    )
    assert [line for line, _ in profile_defaults(tree)] == [2]


def test_verdict_is_defined_once() -> None:
    """The word means the pairwise judge's answer; a critic's is a CritiqueResult, a
    curator's choice a RatingTier, the renderer's outcome a GateResult."""
    homes = []
    for path in source_files():
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            defines = isinstance(node, ast.ClassDef) and node.name == "Verdict"
            aliases = isinstance(node, ast.Assign | ast.AnnAssign) and any(
                isinstance(t, ast.Name) and t.id == "Verdict"
                for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            )
            if defines or aliases:
                homes.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert homes == [f"pool/reward/judge.py:{_line_of_verdict()}"], homes


def _line_of_verdict() -> int:
    tree = ast.parse((ROOT / "pool" / "reward" / "judge.py").read_text("utf-8"))
    return next(n.lineno for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Verdict")


def test_the_studio_script_takes_its_tiers_from_the_page() -> None:
    """studio.js maps keys to the rate bar's buttons (studio/ui.py builds them from
    RATING_ACTIONS) instead of naming the tiers itself."""
    import re

    from studio.ui import GRID_BAR, RATE_BAR

    script = (ROOT / "studio" / "static" / "studio.js").read_text("utf-8")
    assert not re.findall(r"[\"'](love|okay|reject|skip|rung)[\"']", script)
    for action in contracts.RATING_ACTIONS:
        assert f'data-rp-act="{action}"' in RATE_BAR and f'data-rp-grid="{action}"' in GRID_BAR
