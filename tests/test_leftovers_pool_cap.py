"""One cap on pool counts (pool.selection.draft.MAX_COUNT), refused alike by `refpool pool
build` and the studio's Pool tab."""

from __future__ import annotations

import pytest
from factories import populate

from curation.service import Services, Settings
from pool.selection.draft import MAX_COUNT, SelectionError, build_pool
from refpool.cli import main
from studio.pool_tab import build_draft


def build(capsys, *argv: object) -> tuple[int, str, str]:
    code = main(["pool", "build", *(str(a) for a in argv)])
    printed = capsys.readouterr()
    return code, printed.out, printed.err


def test_the_command_line_refuses_a_target_past_the_cap(store, capsys):
    populate(store, 4)
    code, out, err = build(capsys, "--target", MAX_COUNT + 1)
    assert code == 1 and out == ""
    assert "error: the target pool size must be at most 100,000, not 100,001" in err
    assert "a pool is a few hundred references" in err
    assert store.query("SELECT COUNT(*) AS n FROM pool_drafts")[0]["n"] == 0


def test_the_command_line_refuses_a_cap_past_the_cap(store, capsys):
    code, _, err = build(capsys, "--max-per-model", 10**12)
    assert code == 1 and "the cap per model must be at most 100,000" in err


def test_the_cap_itself_is_a_target_the_library_takes(store):
    populate(store, 2)
    with pytest.raises(SelectionError, match="at most 100,000"):
        build_pool(store, target=MAX_COUNT + 1)
    with pytest.raises(SelectionError, match="no candidate can go"):  # unrated, not too many
        build_pool(store, target=MAX_COUNT)


def test_the_studio_says_the_same_in_its_own_words(store):
    view = build_draft(Services(store, Settings()), MAX_COUNT + 1)
    assert view.level == "error" and view.draft_id is None
    assert "Target size must be at most 100,000" in view.message
