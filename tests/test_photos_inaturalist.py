"""iNaturalist client against a loopback server answering in the documented API v1 shape."""

from __future__ import annotations

import io
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from PIL import Image, ImageDraw

from refpool.cli import main
from refpool.core.store.photos import list_photos
from refpool.intake.inaturalist import fetch, parse_licences
from refpool.intake.photos import import_folder


def _jpeg(colour, shape) -> bytes:
    img = Image.new("RGB", (500, 375), (30, 80, 40))
    draw = ImageDraw.Draw(img)
    if shape == "disc":
        draw.ellipse((150, 90, 350, 290), fill=colour)
    else:
        draw.polygon([(250, 40), (420, 330), (80, 330)], fill=colour)
    buf = io.BytesIO()
    img.save(buf, "JPEG")
    return buf.getvalue()


def _observation(oid, photo_id, licence, base):
    return {
        "id": oid,
        "uri": f"https://www.inaturalist.org/observations/{oid}",
        "quality_grade": "research",
        "observed_on": "2024-03-0" + str(oid % 9 + 1),
        "place_guess": "Honolulu, HI, USA",
        "taxon": {"id": 70095, "name": "Hibiscus rosa-sinensis"},
        "user": {"login": f"user{oid}", "name": ""},
        "photos": [
            {
                "id": photo_id,
                "license_code": licence,
                "attribution": f"(c) user{oid}, some rights reserved ({(licence or 'none').upper()})",
                "url": f"{base}/photos/{photo_id}/square.jpg",
            },
            {"id": photo_id + 1, "license_code": "cc0", "url": f"{base}/photos/x/square.jpg"},
        ],
    }


@pytest.fixture
def inat():
    seen: list[dict] = []
    images = {"101": _jpeg((230, 80, 60), "disc"), "202": _jpeg((250, 200, 40), "tri")}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):  # noqa: N802
            url = urllib.parse.urlparse(self.path)
            if url.path == "/v1/observations":
                query = dict(urllib.parse.parse_qsl(url.query))
                seen.append(query)
                base = f"http://127.0.0.1:{self.server.server_address[1]}"
                results = [
                    _observation(1, 101, "cc-by", base),
                    _observation(2, 300, "cc-by-nc", base),  # first photo closed: skipped
                    _observation(3, 202, "cc0", base),
                ]
                body = {"total_results": 3, "page": 1, "per_page": 30, "results": results}
                self._send(200, json.dumps(body).encode(), "application/json")
            elif url.path.startswith("/photos/"):
                pid, size = url.path.split("/")[2:4]
                if size != "large.jpg" or pid not in images:
                    self._send(404, b"no", "text/plain")
                else:
                    self._send(200, images[pid], "image/jpeg")
            else:
                self._send(404, b"no", "text/plain")

        def _send(self, status, data, ctype):
            self.send_response(status)
            self.send_header("content-type", ctype)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


def test_fetch_follows_the_documented_api(inat, tmp_path, store):
    api, seen = inat
    entries, skipped = fetch(
        "Hibiscus rosa-sinensis", ["cc0", "cc-by", "cc-by-sa"], 5, tmp_path / "dl", api
    )
    query = seen[0]
    assert query["taxon_name"] == "Hibiscus rosa-sinensis"
    assert query["quality_grade"] == "research"
    assert query["order_by"] == "votes"
    assert query["photo_license"] == "cc0,cc-by,cc-by-sa"
    assert [e.photo_id for e in entries] == [101, 202]  # first photo of each observation
    assert skipped and "cc-by-nc" in skipped[0][1]
    first = entries[0]
    assert first.observation_url == "https://www.inaturalist.org/observations/1"
    assert first.license == "cc-by" and first.place == "Honolulu, HI, USA"
    assert first.observed_on and first.attribution.startswith("(c) user1")
    manifest = json.loads((tmp_path / "dl" / "manifest.json").read_text())
    assert {
        "file",
        "photo_id",
        "observation_url",
        "license",
        "attribution",
        "observed_on",
        "place",
    } <= set(manifest[0])
    report = import_folder(store, tmp_path / "dl")
    assert report.ok, report.refused
    photos = list_photos(store)
    assert {p.licence for p in photos} == {"CC-BY", "CC0"}
    assert photos[0].subject == "Hibiscus rosa-sinensis"
    extra = json.loads(
        store.query("SELECT extra FROM photos WHERE id = ?", (photos[0].id,))[0]["extra"]
    )
    assert extra["photo_id"] == "101" and extra["place"] == "Honolulu, HI, USA"


def test_cli_inaturalist_then_import(inat, tmp_path, capsys):
    api, _ = inat
    out = tmp_path / "cli"
    code = main(
        [
            "photos",
            "inaturalist",
            "--taxon",
            "Hibiscus rosa-sinensis",
            "--limit",
            "1",
            "--out",
            str(out),
            "--api-url",
            api,
            "--import",
        ]
    )
    assert code == 0
    assert "imported 1" in capsys.readouterr().out


def test_closed_licence_codes_are_rejected():
    with pytest.raises(ValueError, match="cc-by-nc"):
        parse_licences("cc0,cc-by-nc")
