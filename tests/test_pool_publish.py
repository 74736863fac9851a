"""Publishing through the real huggingface_hub client against a loopback Hub (HF_ENDPOINT).

The fake answers exactly the routes HfApi calls for create_repo, list_repo_refs,
list_repo_files, create_commit (validate-yaml, preupload, NDJSON commit) and create_tag,
with the payloads those methods parse. It keeps the repo's files so the test can load the
published dataset back with `datasets`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlparse

import pytest
from factories import populate

from curation.ratings import record_rating
from pool.publish import PublishError, PublishPlan, publish
from pool.selection import build_pool, save_draft
from pool.versions import release

TOKEN = "hf_loopbackSECRETtoken1234567890"


class FakeHub:
    def __init__(self) -> None:
        self.repos: dict[
            str, dict
        ] = {}  # repo id -> {"files": {path: bytes}, "commits": [...], "tags": {}}
        self.requests: list[tuple[str, str, str]] = []  # (method, path, authorization)
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def _send(self, code: int, body: object) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _body(self) -> bytes:
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def do_GET(self) -> None:
                hub.handle(self, "GET", b"")

            def do_POST(self) -> None:
                hub.handle(self, "POST", self._body())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def handle(self, h, method: str, body: bytes) -> None:
        path = unquote(urlparse(h.path).path)
        auth = h.headers.get("authorization", "")
        self.requests.append((method, path, auth))
        if auth != f"Bearer {TOKEN}":
            return h._send(401, {"error": "Invalid credentials in Authorization header"})
        if method == "POST" and path == "/api/repos/create":
            req = json.loads(body)
            assert req["type"] == "dataset"
            rid = f"{req['organization']}/{req['name']}"
            url = f"{self.url}/datasets/{rid}"
            if rid in self.repos:
                return h._send(409, {"error": "You already created this dataset repo", "url": url})
            self.repos[rid] = {
                "files": {".gitattributes": b"*.parquet filter=lfs\n"},
                "commits": ["0" * 40],
                "tags": {},
                "private": req.get("visibility") == "private",
            }
            return h._send(200, {"url": url, "name": rid, "id": "x"})
        if method == "POST" and path == "/api/validate-yaml":
            return h._send(200, {"errors": [], "warnings": []})
        parts = path.split("/")  # ['', 'api', 'datasets', owner, name, route, rev...]
        if len(parts) < 6 or parts[:3] != ["", "api", "datasets"]:
            return h._send(404, {"error": f"no route {path}"})
        rid, route = f"{parts[3]}/{parts[4]}", parts[5]
        repo = self.repos.get(rid)
        if repo is None:
            return h._send(404, {"error": "Repository not found"})
        if method == "GET" and route == "refs":
            head = repo["commits"][-1]
            return h._send(
                200,
                {
                    "branches": [{"name": "main", "ref": "refs/heads/main", "targetCommit": head}],
                    "converts": [],
                    "pullRequests": [],
                    "tags": [
                        {"name": t, "ref": f"refs/tags/{t}", "targetCommit": c}
                        for t, c in repo["tags"].items()
                    ],
                },
            )
        if method == "GET" and route == "tree":
            return h._send(
                200,
                [
                    {"type": "file", "path": p, "size": len(b), "oid": hashlib.sha1(b).hexdigest()}
                    for p, b in sorted(repo["files"].items())
                ],
            )
        if method == "POST" and route == "preupload":
            files = json.loads(body)["files"]
            return h._send(
                200,
                {
                    "files": [
                        {
                            "path": f["path"],
                            "uploadMode": "regular",
                            "shouldIgnore": False,
                            "oid": None,
                        }
                        for f in files
                    ]
                },
            )
        if method == "POST" and route == "commit":
            assert h.headers["Content-Type"] == "application/x-ndjson"
            lines = [json.loads(x) for x in body.splitlines() if x.strip()]
            header = lines[0]["value"]
            for item in lines[1:]:
                if item["key"] == "file":
                    repo["files"][item["value"]["path"]] = base64.b64decode(
                        item["value"]["content"]
                    )
                elif item["key"] == "deletedFile":
                    repo["files"].pop(item["value"]["path"])
                else:
                    return h._send(400, {"error": f"unsupported {item['key']}"})
            oid = hashlib.sha1(body).hexdigest()
            repo["commits"].append(oid)
            repo.setdefault("messages", []).append(header["summary"])
            return h._send(
                200,
                {
                    "commitUrl": f"{self.url}/datasets/{rid}/commit/{oid}",
                    "commitOid": oid,
                    "success": True,
                },
            )
        if method == "POST" and route == "tag":
            tag = json.loads(body)["tag"]
            if tag in repo["tags"]:
                return h._send(409, {"error": "Tag already exists"})
            repo["tags"][tag] = parts[6] if len(parts) > 6 else repo["commits"][-1]
            return h._send(200, {})
        return h._send(404, {"error": f"no route {method} {path}"})


@pytest.fixture
def hub(monkeypatch, tmp_path):
    fake = FakeHub()
    fake.thread.start()
    monkeypatch.setenv("HF_ENDPOINT", fake.url)
    # No token from a developer's own login may leak into these tests.
    import huggingface_hub.constants as hc

    monkeypatch.setattr(hc, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def released(store, n=8, version=None):
    ids = populate(store, n)
    for cid in ids:
        record_rating(store, cid, "ana", "love" if cid % 2 else "okay")
    save_draft(store, build_pool(store, target=n, dup_threshold=0))
    return release(store, version=version)


def test_without_a_token_it_refuses_before_any_request(store, hub):
    released(store)
    with pytest.raises(PublishError, match="no Hugging Face token found: set HF_TOKEN"):
        publish(store, "ana/pool", progress=False)
    assert hub.requests == []


def test_dry_run_lists_files_and_needs_no_network(store, hub):
    released(store)
    plan = publish(store, "ana/pool", dry_run=True, progress=False)
    assert isinstance(plan, PublishPlan) and not plan.has_token
    assert [p for p, _ in plan.files] == ["README.md", "data/train-00000-of-00001.parquet"]
    assert all(size > 0 for _, size in plan.files)
    assert "v1.0.0" in plan.summary() and "a real publish would refuse" in plan.summary()
    assert hub.requests == []


def test_bad_repo_id_is_refused(store, hub):
    released(store)
    with pytest.raises(PublishError, match="OWNER/NAME"):
        publish(store, "not a repo", token=TOKEN, progress=False)


def test_publish_commits_once_tags_and_loads_back(store, hub, monkeypatch, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    pv = released(store)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    result = publish(store, "ana/pool", private=True, progress=False)
    repo = hub.repos["ana/pool"]
    assert repo["private"] is True
    assert repo["messages"] == [
        "Release refpool pool v1.0.0 (8 images)"
    ]  # one commit naming the version
    assert repo["tags"] == {"v1.0.0": result.commit_oid}
    assert set(repo["files"]) == {
        ".gitattributes",
        "README.md",
        "data/train-00000-of-00001.parquet",
    }
    routes = [
        (m, p.split("/")[-2] if p.startswith("/api/datasets") else p) for m, p, _ in hub.requests
    ]
    assert ("POST", "/api/repos/create") in routes
    assert all(auth == f"Bearer {TOKEN}" for _, _, auth in hub.requests)
    assert TOKEN not in caplog.text
    row = store.query("SELECT * FROM pool_publications")[0]
    assert row["tag"] == "v1.0.0" and TOKEN not in json.dumps(dict(row))

    # What the Hub holds loads back with datasets.
    folder = tmp_path / "from-hub"
    for path, data in repo["files"].items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    import datasets

    ds = datasets.load_dataset(str(folder), split="train")
    assert sorted(ds["candidate_id"]) == pv.candidate_ids

    # Publishing the same version again is refused: tags are immutable.
    with pytest.raises(PublishError, match="already has tag v1.0.0"):
        publish(store, "ana/pool", progress=False)

    # A new, smaller version replaces the data shard in one new commit and gets its own tag.
    record_rating(store, pv.candidate_ids[0], "ana", "reject")
    save_draft(store, build_pool(store, target=8, dup_threshold=0))
    release(store, version="1.1.0")
    publish(store, "ana/pool", version="1.1.0", progress=False)
    assert set(repo["tags"]) == {"v1.0.0", "v1.1.0"}
    assert len(repo["messages"]) == 2 and "v1.1.0" in repo["messages"][1]


def test_server_errors_never_show_the_token(store, hub):
    released(store)
    bad = "hf_wrongTOKENvalue987654321"
    with pytest.raises(PublishError) as err:
        publish(store, "ana/pool", token=bad, progress=False)
    assert bad not in str(err.value) and "401" in str(err.value)
