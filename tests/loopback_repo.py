"""The repository model of the loopback Hub (tests/loopback_hub.py): snapshots per commit,
tags, uploaded LFS objects, and the Hub's rules for what a commit may contain."""

from __future__ import annotations

import fnmatch
import hashlib
import json
from base64 import b64decode
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote


class Reply(Exception):
    def __init__(self, code: int, body: Any = None, headers: dict[str, str] | None = None):
        self.code, self.body, self.headers = code, body, headers or {}


TOKEN = "hf_loopbackSECRETtoken1234567890"
READ_TOKEN = "hf_loopbackREADonly0987654321abc"
LFS_THRESHOLD = 10 * 1024 * 1024  # the Hub stores text over 10 MB in LFS too
GITATTRIBUTES = (
    b"*.parquet filter=lfs diff=lfs merge=lfs -text\n*.png filter=lfs diff=lfs merge=lfs -text\n"
)


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def lfs_pointer(oid: str, size: int) -> bytes:
    return f"version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n".encode()


@dataclass
class Entry:
    data: bytes
    lfs: bool

    def tree_item(self, path: str) -> dict[str, Any]:
        item: dict[str, Any] = {"type": "file", "path": path, "size": len(self.data)}
        if self.lfs:
            oid = hashlib.sha256(self.data).hexdigest()
            pointer = lfs_pointer(oid, len(self.data))
            item["oid"] = git_blob_id(pointer)
            item["lfs"] = {"oid": oid, "size": len(self.data), "pointerSize": len(pointer)}
        else:
            item["oid"] = git_blob_id(self.data)
        return item


@dataclass
class Repo:
    owner: str
    private: bool
    commits: dict[str, dict[str, Entry]] = field(default_factory=dict)  # oid -> snapshot
    history: list[str] = field(default_factory=list)  # commit oids, oldest first
    messages: list[str] = field(default_factory=list)
    tags: dict[str, str] = field(default_factory=dict)
    lfs: dict[str, bytes] = field(default_factory=dict)  # uploaded LFS objects by sha256

    @property
    def head(self) -> str:
        return self.history[-1]

    @property
    def files(self) -> dict[str, bytes]:
        return {p: e.data for p, e in self.commits[self.head].items()}

    def resolve(self, rev: str) -> str | None:
        rev = unquote(rev)
        if rev in ("main", "refs/heads/main"):
            return self.head
        if rev in self.tags or rev.removeprefix("refs/tags/") in self.tags:
            return self.tags[rev.removeprefix("refs/tags/")]
        return rev if rev in self.commits else None

    def tree(
        self, snapshot: dict[str, Entry], folder: str, recursive: bool
    ) -> list[dict[str, Any]]:
        """The Hub's tree listing: files and folders under `folder`, one level unless recursive."""
        base = folder.strip("/") + "/" if folder.strip("/") else ""
        items: dict[str, dict[str, Any]] = {}
        for path, entry in sorted(snapshot.items()):
            if not path.startswith(base):
                continue
            parts = path[len(base) :].split("/")
            for depth in range(1, len(parts)):  # the folders on the way
                if depth == 1 or recursive:
                    sub = base + "/".join(parts[:depth])
                    oid = hashlib.sha1(sub.encode()).hexdigest()
                    items.setdefault(sub, {"type": "directory", "path": sub, "oid": oid})
            if len(parts) == 1 or recursive:
                items[path] = entry.tree_item(path)
        return list(items.values())

    def is_lfs(self, path: str, sample: bytes, size: int) -> bool:
        """As the Hub decides: marked in .gitattributes, binary, or big."""
        attrs = self.commits[self.head].get(".gitattributes")
        patterns = [
            line.split()[0]
            for line in (attrs.data.decode() if attrs else "").splitlines()
            if "filter=lfs" in line
        ]
        marked = any(
            fnmatch.fnmatch(path, p) or fnmatch.fnmatch(path.rsplit("/", 1)[-1], p)
            for p in patterns
        )
        try:
            sample.decode("utf-8")
            binary = b"\0" in sample
        except UnicodeDecodeError:
            binary = True
        return marked or binary or size > LFS_THRESHOLD

    def apply_commit(self, body: bytes) -> str:
        """Apply an NDJSON commit as the Hub does, all or nothing; return the new commit oid."""
        lines = [json.loads(x) for x in body.splitlines() if x.strip()]
        header = lines[0]["value"]
        if header.get("parentCommit") not in (None, self.head):
            raise Reply(
                412, {"error": "A commit has happened since. Please refresh and try again."}
            )
        snapshot = dict(self.commits[self.head])
        for item in lines[1:]:
            key, value = item["key"], item["value"]
            path = value["path"]
            if key == "file":
                data = b64decode(value["content"])
                if self.is_lfs(path, data[:512], len(data)):
                    raise Reply(400, {"error": f"{path}: binary files must be stored with LFS"})
                snapshot[path] = Entry(data, lfs=False)
            elif key == "lfsFile":
                data = self.lfs.get(value["oid"])
                if data is None or len(data) != value.get("size", len(data)):
                    raise Reply(
                        422, {"error": f"{path}: LFS object {value['oid']} was never uploaded"}
                    )
                snapshot[path] = Entry(data, lfs=True)
            elif key == "deletedFile":
                if snapshot.pop(path, None) is None:
                    raise Reply(
                        404,
                        {"error": f"A file with this name doesn't exist: {path}"},
                        {"X-Error-Code": "EntryNotFound"},
                    )
            elif key == "deletedFolder":
                for p in [p for p in snapshot if p.startswith(path.rstrip("/") + "/")]:
                    del snapshot[p]
            else:
                raise Reply(400, {"error": f"unsupported {key}"})
        oid = hashlib.sha1(self.head.encode() + body).hexdigest()
        self.commits[oid] = snapshot
        self.history.append(oid)
        self.messages.append(header["summary"])
        return oid
