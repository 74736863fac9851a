"""Blind mode, point by point: a curator sees only their own ratings and nothing that names a
model or another curator (the HTTP side is in test_studio_exposure.py; what the blind page is
built from in test_studio_blind_construction.py). Masking (blind_program, mask_names) is
tested as the tool it now is: for a reader who chooses it, never what blind mode relies on."""

from __future__ import annotations

from html import unescape

from factories import add_candidate, add_photo, populate

from curation import service, views
from curation.blinding import MASK, mask_names, model_names, strip_js_comments
from curation.detail import blind_program
from curation.filter_form import ANY, filter_form
from curation.queue import Filters
from curation.ratings import record_rating
from curation.service import Services, Settings
from refpool.core.store import candidates

MODELS = ("Kimi-K3", "secret-coder-9")


def blind(store) -> Services:
    return Services(store, Settings(blind=True))


def test_final_tier_filter_cannot_single_out_another_curators_reject(store):
    ids = populate(store, 6, models=MODELS)
    record_rating(store, ids[2], "bob", "reject")
    f = Filters(tier="reject", unrated_only=True)
    s = service.set_filters(blind(store), "alice", f)
    assert s.filters.tier is None and s.queue_len == len(ids)  # not just bob's reject
    assert sorted(service.current_queue(blind(store), "alice")) == ids
    assert filter_form(blind(store), "alice").tier == [ANY]


def test_progress_line_has_only_my_own_counts(store):
    ids = populate(store, 4, models=MODELS)
    record_rating(store, ids[0], "bob", "love")
    record_rating(store, ids[1], "bob", "reject")
    record_rating(store, ids[2], "alice", "okay")
    s = service.screen(blind(store), "alice")
    text = s.progress.text()
    assert text == f"You rated 1/{len(ids)} in this queue"
    html = views.screen_html(s)
    line = html[html.index('class="rp-progress"') :].split("</div>")[0]
    assert "love" not in line and "reject" not in line and "pool" not in line
    assert "pool 1 love + 1 okay" in service.screen(Services(store), "alice").progress.text()


def test_blind_mode_shows_no_program_at_all(store):
    pid = add_photo(store)
    cid = add_candidate(store, pid, generator="Kimi-K3")  # its program: "// test program … Kimi-K3"
    program = store.program_source(candidates.get(store, cid).program_sha)
    assert "Kimi-K3" in program
    s = service.screen(blind(store), "alice", cid)
    html = unescape(views.screen_html(s))
    assert s.detail.program is None and "Kimi-K3" not in html and "test program" not in html
    assert "rp-program" not in html
    assert "test program" in unescape(views.screen_html(service.screen(Services(store), "al", cid)))


def test_strip_js_comments_keeps_strings_and_code():
    src = (
        "// Kimi-K3 painted this\n"
        "const s = 'http://x.org/a'; /* block\n comment */ let t = `a // b`;\n"
        'brush.set("2B"); // trailing\n'
    )
    out = strip_js_comments(src)
    assert "Kimi" not in out and "block" not in out and "trailing" not in out
    assert "'http://x.org/a'" in out and "`a // b`" in out and 'brush.set("2B");' in out
    assert mask_names("by moonshot/kimi-k3 and KIMI-K3", ["moonshot/Kimi-K3"]) == (
        f"by {MASK} and {MASK}"
    )


def test_blind_mode_shows_no_critique_at_all(store):
    pid = add_photo(store)
    cid = add_candidate(store, pid, generator="secret-coder-9")
    candidates.save(
        store,
        {
            "critique": {
                "critic": "critic-llm-7",
                "scores": {"fidelity": 5.0},
                "advice": "secret-coder-9 should add bleed",
                "summary": "",
            }
        },
        existing=cid,
    )
    s = service.screen(blind(store), "alice", cid)
    html = unescape(views.screen_html(s))
    assert "critic-llm-7" not in html and "secret-coder-9" not in html
    assert "bleed" not in html and s.detail.history == []  # a critique is a model's text
    assert "critic-llm-7" in views.screen_html(service.screen(Services(store), "alice", cid))


def test_filter_choices_name_no_model_and_no_curator(store):
    ids = populate(store, 4, models=MODELS)
    record_rating(store, ids[0], "bob", "love")
    form = filter_form(blind(store), "alice")
    assert form.model == [ANY] and form.rated_by == [ANY] and form.tier == [ANY]
    assert len(form.photo) > 1  # photos are still offered
    seen = filter_form(Services(store), "alice")
    assert set(MODELS) <= set(seen.model) and "bob" in seen.rated_by


# Five ways a coder spells its own model, and its vendor's org name (from the models file).
SPELLINGS = (
    "const kimi_k3_palette = ['#c0428a'];\n"
    "function KimiK3() { return 'Kimi K3'; }\n"
    "let by = 'moonshotai', tag = \"kimi-k3\", loud = KIMI_K3;\n"
    "function setup() { createCanvas(600, 600, WEBGL); KimiK3(); }\n"
)


def with_program(store, source: str, generator: str = "kimi-k3") -> int:
    photo = add_photo(store, f"photo-{len(store.query('SELECT id FROM photos'))}.jpg")
    cid = add_candidate(store, photo, generator=generator)
    candidates.save(store, {"program_sha": store.put_program(source)}, existing=cid)
    return cid


def test_masking_catches_every_spelling_of_the_model_and_its_vendor(store):
    cid = with_program(store, SPELLINGS)
    program, note = blind_program(SPELLINGS, [*model_names(store), "moonshotai/Kimi-K3"])
    assert program is not None and "comments stripped" in note
    lowered = program.lower()
    for name in ("kimi", "k3", "moonshot"):
        assert name not in lowered, (name, program)
    assert f"{MASK}_palette" in program and f"function {MASK}()" in program
    assert "createCanvas(600, 600, WEBGL)" in program  # the code itself is kept
    html = unescape(views.screen_html(service.screen(blind(store), "alice", cid)))
    assert "Kimi" not in html and "moonshotai" not in html and "createCanvas" not in html
    assert "KimiK3" in service.screen(Services(store), "alice", cid).detail.program


def test_mask_names_spellings_and_words_that_only_look_alike():
    names = ["Qwen/Qwen3-Coder-Next", "zai-org/GLM-5.2"]
    text = "qwen3_coder_next, Qwen3CoderNext, zai_org, GLM5.2, glm-5-2, qwenTone akimbo glimmer"
    out = mask_names(text, names)
    assert out == f"{MASK}, {MASK}, {MASK}, {MASK}, {MASK}, {MASK}Tone akimbo glimmer"


def test_a_program_that_cannot_be_masked_is_hidden_and_says_why(store):
    source = "let mykimik3 = 1;\nfunction setup() {}\n"
    cid = with_program(store, source)
    program, note = blind_program(source, model_names(store))
    assert program is None and "cannot be masked" in note
    html = views.screen_html(service.screen(blind(store), "alice", cid))
    assert "mykimi" not in html.lower()
    assert "mykimik3" in service.screen(Services(store), "alice", cid).detail.program
