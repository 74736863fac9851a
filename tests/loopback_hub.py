"""A loopback Hugging Face Hub that speaks the real HTTP protocol, for huggingface_hub's own client.

Written from the public protocol: the Hub's documented REST routes (repos/create, refs,
revision, tree, preupload, NDJSON commit, tag, resolve) and the Git LFS batch API (basic
transfer: upload href, PUT, verify). It behaves as the real Hub does where publishing depends
on it:
  * preupload answers `lfs` for binary files, big files and whatever `.gitattributes` marks
    `filter=lfs`, `regular` for small text;
  * a commit adds regular files inline and LFS files by pointer (oid + size), and is refused
    when an LFS object was never uploaded, when a binary file arrives inline, or when a
    deleted file does not exist;
  * every commit is a snapshot, so a tag and a commit SHA keep resolving to what they named;
  * tokens carry an owner and a role (read/write); writing elsewhere is 403.
Faults can be queued per route (`fail("commit", 429, retry_after=1)`) to test failures halfway.
Clients must run with HF_HUB_DISABLE_XET=1: Xet storage is not emulated.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from base64 import b64decode
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

from loopback_repo import GITATTRIBUTES, READ_TOKEN, TOKEN, Entry, Reply, Repo

__all__ = ["READ_TOKEN", "TOKEN", "LoopbackHub", "running"]


class LoopbackHub:
    def __init__(self, users: dict[str, tuple[str, str]] | None = None) -> None:
        # token -> (user, role)
        self.tokens = users or {TOKEN: ("ana", "write"), READ_TOKEN: ("ana", "read")}
        self.repos: dict[str, Repo] = {}
        self.orgs: dict[str, list[str]] = {}  # user -> organizations they can write to
        self.requests: list[tuple[str, str, str]] = []  # (method, path, authorization)
        self.faults: dict[str, list[tuple[int, float, int]]] = defaultdict(list)
        self.lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    out = b""
                    while size := int(self.rfile.readline().strip() or b"0", 16):
                        out += self.rfile.read(size)
                        self.rfile.readline()
                    self.rfile.readline()
                    return out
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

            def _serve(self, method: str) -> None:
                body = self._body() if method in ("POST", "PUT") else b""
                try:
                    hub.route(self, method, body)
                except Reply as r:
                    if isinstance(r.body, bytes):
                        data = r.body
                    else:
                        data = b"" if r.body is None else json.dumps(r.body).encode()
                    self.send_response(r.code)
                    self.send_header(
                        "Content-Type", r.headers.pop("Content-Type", "application/json")
                    )
                    for k, v in r.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if method != "HEAD":
                        self.wfile.write(data)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_HEAD(self) -> None:
                self._serve("HEAD")

            def do_POST(self) -> None:
                self._serve("POST")

            def do_PUT(self) -> None:
                self._serve("PUT")

            def do_DELETE(self) -> None:
                self._serve("DELETE")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # -- test controls ----------------------------------------------------------------------
    def fail(self, route: str, status: int, times: int = 1, retry_after: int = 0, hang: float = 0):
        """Answer the next `times` requests on `route` with `status` (after `hang` seconds)."""
        self.faults[route] += [(status, hang, retry_after)] * times

    def calls(self, route_suffix: str, method: str = "POST") -> int:
        return sum(1 for m, p, _ in self.requests if m == method and route_suffix in p)

    def start(self) -> LoopbackHub:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    # -- routing ----------------------------------------------------------------------------
    def _fault(self, route: str) -> None:
        with self.lock:
            queued = self.faults[route].pop(0) if self.faults[route] else None
        if queued:
            status, hang, retry_after = queued
            time.sleep(hang)
            headers = {"Retry-After": str(retry_after)} if retry_after else {}
            raise Reply(status, {"error": f"injected {status} on {route}"}, headers)

    def _user(self, h: BaseHTTPRequestHandler, write: bool) -> str | None:
        auth = h.headers.get("authorization", "")
        token = auth.removeprefix("Bearer ")
        if not auth:
            if write:
                raise Reply(401, {"error": "Invalid credentials in Authorization header"})
            return None
        if token not in self.tokens:
            raise Reply(401, {"error": "Invalid credentials in Authorization header"})
        user, role = self.tokens[token]
        if write and role != "write":
            raise Reply(403, {"error": "This token does not have write access"})
        return user

    def _role(self, h: BaseHTTPRequestHandler) -> str:
        return self.tokens[h.headers.get("authorization", "").removeprefix("Bearer ")][1]

    def _repo(self, h: BaseHTTPRequestHandler, rid: str, write: bool) -> Repo:
        user = self._user(h, write)
        repo = self.repos.get(rid)
        if repo is None or (repo.private and user != repo.owner):
            raise Reply(404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"})
        if write and user != repo.owner and repo.owner not in self.orgs.get(user or "", []):
            raise Reply(403, {"error": f"You don't have the rights to write to {rid}"})
        return repo

    def route(self, h: BaseHTTPRequestHandler, method: str, body: bytes) -> None:
        url = urlparse(h.path)
        path, query = unquote(url.path), parse_qs(url.query)
        self.requests.append((method, path, h.headers.get("authorization", "")))
        parts = path.strip("/").split("/")
        if method == "POST" and path == "/api/repos/create":
            return self._create(h, json.loads(body))
        if method == "POST" and path == "/api/validate-yaml":
            raise Reply(200, {"errors": [], "warnings": []})
        if method == "GET" and path == "/api/whoami-v2":
            user = self._user(h, write=False)
            if user is None:
                raise Reply(401, {"error": "Invalid credentials in Authorization header"})
            role = self._role(h)
            access = {"displayName": "loopback", "role": role}
            orgs = [{"name": o} for o in self.orgs.get(user, [])]
            raise Reply(
                200,
                {
                    "name": user,
                    "type": "user",
                    "orgs": orgs,
                    "auth": {"type": "access_token", "accessToken": access},
                },
            )
        if parts[0] == "lfs-upload" and method == "PUT":
            return self._lfs_put(f"{parts[1]}/{parts[2]}", parts[3], body)
        if parts[0] == "lfs-verify" and method == "POST":
            return self._lfs_verify(f"{parts[1]}/{parts[2]}", json.loads(body))
        if parts[0] == "datasets" and len(parts) > 3 and parts[2].endswith(".git"):
            rid = f"{parts[1]}/{parts[2].removesuffix('.git')}"
            return self._lfs_batch(h, rid, json.loads(body))
        if parts[0] == "datasets" and len(parts) > 4 and parts[3] == "resolve":
            return self._resolve(h, f"{parts[1]}/{parts[2]}", parts[4], "/".join(parts[5:]), method)
        if parts[:2] == ["api", "datasets"] and len(parts) == 4 and method == "GET":
            return self._api(h, method, f"{parts[2]}/{parts[3]}", "revision", [], body, query)
        if parts[:2] == ["api", "datasets"] and len(parts) >= 5:
            rid, action, rest = f"{parts[2]}/{parts[3]}", parts[4], parts[5:]
            return self._api(h, method, rid, action, rest, body, query)
        raise Reply(404, {"error": f"no route {method} {path}"})

    def _create(self, h: BaseHTTPRequestHandler, req: dict[str, Any]) -> None:
        user = self._user(h, write=True)
        assert req["type"] == "dataset"
        owner = req.get("organization") or user
        rid = f"{owner}/{req['name']}"
        if rid in self.repos:
            if self.repos[rid].owner != user and self.repos[rid].private:
                raise Reply(403, {"error": f"You don't have the rights to create {rid}"})
            raise Reply(
                409,
                {
                    "error": "You already created this dataset repo",
                    "url": f"{self.url}/datasets/{rid}",
                },
            )
        if owner != user and owner not in self.orgs.get(user or "", []):
            raise Reply(
                403, {"error": f"You don't have the rights to create a dataset under {owner}"}
            )
        first = hashlib.sha1(rid.encode()).hexdigest()
        repo = Repo(
            owner=owner, private=req.get("visibility") == "private" or bool(req.get("private"))
        )
        repo.commits[first] = {".gitattributes": Entry(GITATTRIBUTES, lfs=False)}
        repo.history.append(first)
        repo.messages.append("initial commit")
        self.repos[rid] = repo
        raise Reply(200, {"url": f"{self.url}/datasets/{rid}", "name": rid, "id": first})

    def _commit(self, rid: str, repo: Repo, body: bytes) -> None:
        with self.lock:
            oid = repo.apply_commit(body)
        self._fault("commit_lost")  # the commit landed, but its reply never arrives
        url = f"{self.url}/datasets/{rid}/commit/{oid}"
        raise Reply(200, {"commitUrl": url, "commitOid": oid, "success": True})

    def _api(
        self, h, method: str, rid: str, action: str, rest: list[str], body: bytes, query
    ) -> None:
        write = method in ("POST", "DELETE", "PUT")
        repo = self._repo(h, rid, write=write)
        if method == "GET" and action == "refs":
            tags = [
                {"name": t, "ref": f"refs/tags/{t}", "targetCommit": c}
                for t, c in repo.tags.items()
            ]
            main = [{"name": "main", "ref": "refs/heads/main", "targetCommit": repo.head}]
            raise Reply(200, {"branches": main, "converts": [], "pullRequests": [], "tags": tags})
        if method == "GET" and action in ("revision", "tree"):
            oid = repo.resolve(rest[0] if rest else "main")
            if oid is None:
                raise Reply(404, {"error": "Invalid rev id"}, {"X-Error-Code": "RevisionNotFound"})
            snapshot = repo.commits[oid]
            if action == "revision":
                siblings = [{"rfilename": p} for p in sorted(snapshot)]
                raise Reply(
                    200, {"id": rid, "sha": oid, "private": repo.private, "siblings": siblings}
                )
            recursive = query.get("recursive", ["False"])[0].lower() == "true"
            raise Reply(200, repo.tree(snapshot, "/".join(rest[1:]), recursive))
        if method == "POST" and action == "preupload":
            self._fault("preupload")
            files = [
                {
                    "path": f["path"],
                    "uploadMode": "lfs"
                    if repo.is_lfs(f["path"], b64decode(f["sample"]), f["size"])
                    else "regular",
                    "shouldIgnore": False,
                    "oid": None,
                }
                for f in json.loads(body)["files"]
            ]
            raise Reply(200, {"files": files})
        if method == "POST" and action == "commit":
            self._fault("commit")
            return self._commit(rid, repo, body)
        if method == "POST" and action == "tag":
            self._fault("tag")
            tag = json.loads(body)["tag"]
            target = repo.resolve(rest[0] if rest else "main")
            with self.lock:
                if tag in repo.tags:
                    raise Reply(409, {"error": "Tag already exists"})
                if target is None:
                    raise Reply(
                        404, {"error": "Invalid rev id"}, {"X-Error-Code": "RevisionNotFound"}
                    )
                repo.tags[tag] = target
            raise Reply(200, {})
        if method == "DELETE" and action == "tag":
            if repo.tags.pop(rest[0], None) is None:
                raise Reply(404, {"error": "Tag not found"})
            raise Reply(200, {})
        raise Reply(404, {"error": f"no route {method} {action}"})

    def _lfs_batch(self, h: BaseHTTPRequestHandler, rid: str, req: dict[str, Any]) -> None:
        repo = self._repo(h, rid, write=True)
        self._fault("lfs_batch")
        assert req["operation"] == "upload" and "basic" in req.get("transfers", ["basic"])
        objects = []
        for obj in req["objects"]:
            item: dict[str, Any] = {"oid": obj["oid"], "size": obj["size"], "authenticated": True}
            if obj["oid"] not in repo.lfs:
                item["actions"] = {
                    "upload": {"href": f"{self.url}/lfs-upload/{rid}/{obj['oid']}", "header": {}},
                    "verify": {"href": f"{self.url}/lfs-verify/{rid}", "header": {}},
                }
            objects.append(item)
        raise Reply(
            200,
            {"transfer": "basic", "objects": objects},
            {"Content-Type": "application/vnd.git-lfs+json"},
        )

    def _lfs_put(self, rid: str, oid: str, body: bytes) -> None:
        self._fault("lfs_put")
        if hashlib.sha256(body).hexdigest() != oid:
            raise Reply(400, {"error": "content does not match its oid"})
        self.repos[rid].lfs[oid] = body
        raise Reply(200, None)

    def _lfs_verify(self, rid: str, req: dict[str, Any]) -> None:
        data = self.repos[rid].lfs.get(req["oid"])
        if data is None or len(data) != req["size"]:
            raise Reply(404, {"error": "object not found"})
        raise Reply(200, {})

    def _resolve(self, h, rid: str, rev: str, path: str, method: str) -> None:
        repo = self._repo(h, rid, write=False)
        oid = repo.resolve(rev)
        if oid is None:
            raise Reply(404, {"error": "Invalid rev id"}, {"X-Error-Code": "RevisionNotFound"})
        entry = repo.commits[oid].get(path)
        if entry is None:
            raise Reply(
                404,
                {"error": "Entry not found"},
                {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": oid},
            )
        item = entry.tree_item(path)
        etag = item["lfs"]["oid"] if entry.lfs else item["oid"]
        headers = {
            "X-Repo-Commit": oid,
            "ETag": f'"{etag}"',
            "Content-Type": "application/octet-stream",
        }
        if entry.lfs:
            headers |= {"X-Linked-Etag": f'"{etag}"', "X-Linked-Size": str(len(entry.data))}
        raise Reply(200, entry.data, headers)


@contextmanager
def running(monkeypatch: Any, tmp_path: Path) -> Iterator[LoopbackHub]:
    """A started hub that huggingface_hub (HF_ENDPOINT, constants.ENDPOINT) talks to; no token
    from a developer's own login can leak in, and the download cache is the test's own."""
    import huggingface_hub.constants as hc

    hub = LoopbackHub().start()
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setattr(hc, "ENDPOINT", hub.url)
    monkeypatch.setattr(
        hc, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}"
    )
    monkeypatch.setattr(hc, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(hc, "HF_TOKEN_PATH", str(tmp_path / "no-token"))
    monkeypatch.setattr(hc, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    try:
        yield hub
    finally:
        hub.stop()
