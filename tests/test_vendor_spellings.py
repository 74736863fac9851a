"""The vendor spellings table (refpool/core/vendor_spellings.toml): each row's fixture means what
its row says, and each meaning costs what it should through the real `generate`.

The table's rows are the cases: a new vendor's row is tested by adding it, with no new test.
"""

from __future__ import annotations

import json

import fake_vendor as fv
import pytest

from generators import vendor
from generators.replies import is_refusal
from refpool.core import finish
from refpool.core.spellings import spellings

pytestmark = pytest.mark.usefixtures("fast_retries")
FAILURES = spellings().failures


@pytest.mark.parametrize("row", FAILURES, ids=lambda row: row.id)
def test_each_failure_fixture_means_what_its_row_says(row):
    fixture = row.fixture
    read = vendor.read_failure(fixture["status"], fixture["body"], has_images=row.needs is not None)
    assert (read.means, read.kind) == (row.means, row.kind), read.label
    stated = vendor.server_wait_s(fixture.get("headers", {}), fixture["body"])
    assert stated == fixture.get("wait"), "the wait the fixture states, and only it"
    if row.means == vendor.CONFIG:
        assert read.field, "a configuration refusal names the models-file field to change"


def test_an_image_refusal_needs_a_request_that_carried_images():
    """The same words from a server sent no image are no evidence about images."""
    (row,) = [r for r in FAILURES if r.id == "images-phrase"]
    read = vendor.read_failure(row.fixture["status"], row.fixture["body"], has_images=False)
    assert read.means == vendor.VENDOR


@pytest.mark.parametrize("row", spellings().waits, ids=lambda row: row.id)
def test_each_stated_wait_is_read_from_the_servers_words(row):
    body = json.dumps({"error": {"message": row.fixture["text"]}}, ensure_ascii=False)
    assert vendor.server_wait_s({}, body) == pytest.approx(row.fixture["seconds"])


@pytest.mark.parametrize("row", spellings().context_sizes, ids=lambda row: row.id)
def test_each_stated_context_size_charges_an_entry_whose_max_tokens_fills_it(row):
    body = json.dumps({"error": {"message": row.fixture["text"]}})
    tokens = row.fixture["tokens"]
    for status in (400, 422):
        assert vendor.read_failure(status, body, max_tokens=tokens).means == vendor.CONFIG
        assert vendor.read_failure(status, body, max_tokens=tokens - 1).means == vendor.REQUEST


@pytest.mark.parametrize("row", spellings().refusals, ids=lambda row: row.id)
def test_each_refusal_wording_is_a_refusal(row):
    assert is_refusal(row.fixture)
    assert not is_refusal("Here is the sketch: function setup() { createCanvas(600, 600); }")


@pytest.mark.parametrize(
    ("meaning", "spelling"),
    [(meaning, name) for meaning, names in spellings().finish.items() for name in names],
)
def test_each_finish_spelling_is_read_by_its_meaning(meaning, spelling):
    assert finish.finish_meaning(spelling) == finish.finish_meaning(spelling.upper()) == meaning


def test_waits_in_every_form_and_zero_is_no_advice():
    now = 1_000_000_000.0
    assert vendor.server_wait_s({"Retry-After": "0"}, None, now) is None
    assert vendor.server_wait_s({"retry-after-ms": "0"}, None, now) is None
    google = [{"error": {"details": [{"@type": "google.rpc.RetryInfo", "retryDelay": "9s"}]}}]
    assert vendor.server_wait_s({}, json.dumps(google), now) == 9
    proto = {"error": {"retry_delay": {"seconds": 2, "nanos": 500_000_000}}}
    assert vendor.server_wait_s({}, json.dumps(proto), now) == 2.5
    said = {"error": {"message": "Please try again after 6 seconds."}}
    assert vendor.server_wait_s({}, json.dumps(said), now) == 6
    # only the budget that ran out says how long: a reset with no `remaining` is not spent
    headers = {
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "1s",
        "x-ratelimit-reset-tokens": "9m0s",
    }
    assert vendor.server_wait_s(headers, None, now) == 1


def _expected_cost(row, budget_s: float) -> tuple[int, int, str]:
    """(requests on a first run, more on a rerun, the candidate's outcome) for a row served
    every time, as its meaning says it should cost with retries of `fast_retries`."""
    wait = row.fixture.get("wait")
    if row.adapt:
        return 2, 0, "ok"  # refused once, adapted, answered; the answer is reused
    if row.means == vendor.REQUEST:
        return 1, 0, "http_error"
    if row.means == vendor.CONFIG:
        return 1, 0, "http_error"  # the same entry is still refused: shown, not asked
    if wait is not None and wait > budget_s:
        return 1, 1, "http_error"  # stopped until it resets; asked again on a rerun
    if row.means == vendor.ACCOUNT:
        return 1, 1, "http_error"
    return 4, 4, "http_error"  # the vendor's: retried, and asked again on a rerun


@pytest.mark.browser
def test_each_meaning_costs_what_it_says_through_generate(store, photo_id, cli, tmp_path):
    """Every row, served by a loopback vendor to the real `generate`, on a first run and a
    rerun: how many requests it cost, what became of the round, and what the user was told."""
    budget_s = 2.0
    names = {row.id: f"row:{row.id}" for row in FAILURES}
    with fv.FakeVendor() as server:
        path = tmp_path / "m.json"
        fv.models_file(path, server.base_url, list(names.values()), retry_budget_s=budget_s)
        data = json.loads(path.read_text())
        for row in FAILURES:  # a row about images is met by a coder that sends the photo
            data["models"][names[row.id]]["accepts_images"] = row.needs == "images"
        path.write_text(json.dumps(data))
        argv = ["generate", "--photos", photo_id, "--generator", *names.values(), "--rounds", 1,
                "--models-file", path, "--no-progress", "--candidates", 1]  # fmt: skip
        _, _, first_err = cli(*argv)
        first = {row.id: len(server.calls(names[row.id])) for row in FAILURES}
        outcomes = {
            r["generator"].removeprefix("row:"): r["outcome"]
            for r in store.query("SELECT generator, outcome FROM candidates")
        }
        cli(*argv)
        again = {row.id: len(server.calls(names[row.id])) - first[row.id] for row in FAILURES}
    for row in FAILURES:
        cost, rerun, outcome = _expected_cost(row, budget_s)
        assert (first[row.id], again[row.id], outcomes.get(row.id)) == (cost, rerun, outcome), (
            row.id
        )
        if row.adapt:  # the user is told what was changed in their requests
            assert f"note: {names[row.id]}: the server refused a request field" in first_err
        if row.means in (vendor.CONFIG, vendor.ACCOUNT) and not row.adapt:
            assert f"coder {names[row.id]} (fake/{names[row.id]}" in first_err, row.id
            if row.field and row.means == vendor.CONFIG:
                assert f'"{row.field}"' in first_err, row.id
    stored = store.query("SELECT DISTINCT failure FROM model_calls WHERE failure IS NOT NULL")
    assert {r["failure"].split("/")[0] for r in stored} == set(
        ("vendor", "request", "config", "account")
    )
