"""Blind by construction (issue 34): a blind curator's page is built from a whitelist (the
painting, the photo and its credit, their own counter, rating and note), so no spelling of a
model can reach it, whatever the models file lists; ids are per-curator tokens in a
per-curator shuffled order; only a lead sees agreement and everyone's progress."""

from __future__ import annotations

import re
import unicodedata
from html import unescape
from itertools import groupby

import pytest
from factories import add_candidate, add_photo, png_bytes, populate
from gradio_client import Client
from test_studio_browser import browser, open_page, press, shown  # noqa: F401 - fixture
from test_studio_client import free_port

from app import launch
from curation import grid, service, views
from curation.curators import ensure_curator, is_lead, set_lead
from curation.ratings import my_latest, record_rating
from curation.service import Services, Settings
from refpool.core.store import Store, candidates

# Not in any models file: the store records it, the studio was never told about it.
SECRET_MODEL = "Zephyrine-Q9"
SPELLED = (
    "// painted by Ｚｅｐｈｙｒｉｎｅ-Ｑ９ (fullwidth)\n"
    "const by = '\\u005aephyrine', vendor = 'zеphyrine';\n"  # an escape and a Cyrillic е
    "function setup() { createCanvas(600, 600); }\n"
)
CRITIC = "critic-Zephyrine-judge"


def leaks(text: str) -> list[str]:
    """What in `text` names the model or shows its program, in any spelling."""
    plain = unicodedata.normalize("NFKC", unescape(text)).lower()
    words = ("zephyrine", "zеphyrine", "q9", "createcanvas", "test program")
    # whole words only: a random token or hash may hold "q9" by chance
    found = [w for w in words if re.search(rf"(?<![a-z0-9]){re.escape(w)}(?![a-z0-9])", plain)]
    return found + [w for w in ("\\u005a", "critic-") if w in text.lower()]


def seed_secret(store: Store, n: int = 6) -> list[int]:
    """Candidates by a model only the store knows, with a signed program and a critique."""
    photo = add_photo(store, "heron.jpg", author="Ann Lee")
    ids = []
    for i in range(n):
        ids.append(
            candidates.save(
                store,
                {
                    "job_key": f"secret/{i}",
                    "photo_id": photo,
                    "generator": SECRET_MODEL,
                    "round": i % 2,
                    "seed": i,
                    "program_sha": store.put_program(SPELLED + f"// {i}\n"),
                    "accepted": 1,
                    "coverage": 0.2 + i / 20,
                    "png_sha": store.put_png(png_bytes(i / n, seed=i)),
                    "critique": {
                        "critic": CRITIC,
                        "scores": {"fidelity": 7.0},
                        "advice": f"{SECRET_MODEL} should add bleed",
                        "summary": "Ｚｅｐｈｙｒｉｎｅ again",
                    },
                },
            )
        )
    return ids


@pytest.fixture(scope="module")
def blind_studio(tmp_path_factory):
    """One blind studio for the module: (store, url, ids); every test uses its own curators."""
    store = Store(tmp_path_factory.mktemp("blind-construction"))
    ids = seed_secret(store)
    for cid in ids[:3]:
        record_rating(store, cid, "bob", "reject", note="bob's view")
        record_rating(store, cid, "cara", "love")
    demo, url = launch(
        Services(store, Settings(blind=True)),
        port=free_port(),
        prevent_thread_lock=True,
        quiet=True,
    )
    yield store, url, ids
    demo.close()
    store.close()


def test_no_reply_names_the_model_shows_its_program_or_its_critic(blind_studio):
    store, url, ids = blind_studio
    client = Client(url, verbose=False)
    replies = [str(client.predict(api_name="/init"))]
    replies.append(client.predict("dora", api_name="/show"))
    token = int(re.search(r'id="rp-view" data-cid="(\d+)"', replies[-1]).group(1))
    replies.append(client.predict(token, 1, "dora", api_name="/navigate"))
    replies.append(client.predict(token, "dora", api_name="/goto")[0])
    replies.append(client.predict(1, "dora", api_name="/grid"))
    replies.append(client.predict("dora", api_name="/agreement"))
    replies.append(str(client.predict(*["(any)"] * 6, False, False, "dora", api_name="/filters")))
    for reply in replies:
        assert not leaks(reply), (leaks(reply), reply[:400])
        assert "bob" not in reply and "cara" not in reply
    assert "heron.jpg" in replies[1] and "Ann Lee" in replies[1]  # the photo and its credit


def test_attributes_carry_no_global_id_or_counter(blind_studio):
    store, _, ids = blind_studio
    services = Services(store, Settings(blind=True))
    ensure_curator(store, "eve")
    s = service.screen(services, "eve")
    service.rate(services, "eve", s.detail.id, "okay")
    s = service.screen(services, "eve", s.detail.id)  # shows eve's own rating: data-seen is set
    rows = {r["id"] for r in store.query("SELECT id FROM ratings")}
    html = views.screen_html(s) + views.grid_html(grid.show(services, "eve"))
    values = re.findall(r' data-(?!page|pages)[\w-]+="([^"]*)"', html)
    parts = [p for v in values for p in re.split(r"[\s|:]+", v)]  # "id|url id:token ..."
    numbers = {int(p) for p in parts if p.isdecimal()}
    assert not numbers & (set(ids) | rows), numbers & (set(ids) | rows)
    assert not re.search(r"#\d", re.sub(r"<[^>]+>", "", html))  # no "#12" in the text either
    assert f"painting {s.position} of {len(ids)}" in html


def test_two_curators_get_different_stable_orders_with_no_block_of_one_model(store):
    # generated one model at a time: in id order the first 20 are one model's
    ids = populate(store, 20, models=("model-a",))
    photo = candidates.get(store, ids[0]).photo_id
    ids += [add_candidate(store, photo, "model-b", seed=i, hue=i / 20) for i in range(20)]
    services = Services(store, Settings(blind=True))
    ann, ann_again = service.current_queue(services, "ann"), service.current_queue(services, "ann")
    ben = service.current_queue(services, "ben")
    assert ann == ann_again and sorted(ann) == sorted(ben) == ids and ann != ben
    model = {c.id: c.generator for c in candidates.get_many(store, ids).values()}
    for order in (ann, ben):
        runs = [len(list(run)) for _, run in groupby(model[i] for i in order)]
        assert max(runs) < 20 and len(runs) >= 10, runs  # mixed, not two blocks
    assert service.current_queue(Services(store), "ann") == ids  # an open studio: id order


def test_a_lead_sees_agreement_and_progress_while_a_blind_curator_does_not(
    blind_studio, cli, monkeypatch
):
    store, url, ids = blind_studio
    monkeypatch.setenv("REFPOOL_HOME", str(store.home))  # the CLI works on this studio's store
    ensure_curator(store, "lena")
    result = cli("curators", "add", "lena", "--lead", "yes")
    assert result.code == 0 and "as a lead" in result.out
    assert is_lead(store, "lena") and "lead" in cli("curators", "list").out
    client = Client(url, verbose=False)
    assert "Cohen" in client.predict("lena", api_name="/agreement")
    assert "hidden in blind mode" in client.predict("fred", api_name="/agreement")
    services = Services(store, Settings(blind=True))
    assert "pool" in service.screen(services, "lena").progress.text()
    assert "pool" not in service.screen(services, "fred").progress.text()
    lead_view = views.screen_html(service.screen(services, "lena"))
    assert not leaks(lead_view)  # a lead still rates blind
    set_lead(store, "lena", False)
    assert "hidden in blind mode" in client.predict("lena", api_name="/agreement")


def test_a_blind_curator_rates_by_keyboard_and_the_page_names_nothing(browser, blind_studio):  # noqa: F811
    store, url, ids = blind_studio
    page = open_page(browser, url, "gus")
    first = service.current_queue(Services(store, Settings(blind=True)), "gus")[0]
    assert shown(page) not in ids  # a token, not the id
    assert not leaks(page.content()), leaks(page.content())
    assert page.inner_text("#rp-view .rp-counter") == f"painting 1 of {len(ids)}"
    press(page, "2")
    assert my_latest(store, "gus") == {first: "okay"}
    assert "painting 1" in page.inner_text("#rp-view .rp-msg")
    page.get_by_role("tab", name="Grid").click()
    page.wait_for_selector(".rp-tile")
    assert not leaks(page.content())
    page.close()


def test_a_grid_batch_names_vanished_paintings_by_the_curators_own_tokens(store):
    ids = populate(store, 3)
    services = Services(store, Settings(blind=True))
    with store.write_lock:
        store.db.execute("DELETE FROM candidates WHERE id = ?", (ids[0],))
    g = grid.rate(services, "eve", [ids[0], ids[1]], "okay")
    token = grid.viewer_ids(store, "eve", True).token(ids[0])
    assert f"left out: #{token}." in g.message
    assert not re.search(rf"#{ids[0]}\b", g.message)
