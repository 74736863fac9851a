"""Pull research-grade, openly licensed photos from iNaturalist (documented API v1).

    GET {api}/v1/observations?taxon_name=...&quality_grade=research&photo_license=cc0,cc-by
        &order_by=votes&order=desc&photos=true&per_page=N&page=P

Each observation contributes its first photo. The photo's own `license_code` is checked again
(an observation matches the filter if *any* photo does). Photos are downloaded to a folder,
with `photos.csv` that `refpool photos import` accepts and `manifest.json` with every field.
"""

from __future__ import annotations

import csv
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from refpool.core.errors import InputError

DEFAULT_API = "https://api.inaturalist.org"
OPEN_CODES = ("cc0", "cc-by", "cc-by-sa")
USER_AGENT = "refpool/0.1 (reference-pool builder)"
PER_PAGE_MAX = 200  # the API's cap


@dataclass
class ManifestEntry:
    file: str
    photo_id: int
    observation_id: int
    observation_url: str
    license: str
    attribution: str
    author: str
    observed_on: str
    place: str
    taxon: str
    photo_url: str


def _get(url: str, timeout: float) -> bytes:
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return response.read()


def parse_licences(text: str) -> list[str]:
    codes = [c.strip().lower() for c in text.split(",") if c.strip()]
    bad = [c for c in codes if c not in OPEN_CODES]
    if bad or not codes:
        raise InputError(
            f"unsupported licence code(s) {bad or text!r}; choose from {', '.join(OPEN_CODES)}"
        )
    return codes


def search_observations(
    taxon: str,
    licences: list[str],
    limit: int,
    api_url: str = DEFAULT_API,
    timeout: float = 30.0,
) -> list[dict]:
    """Up to `limit` research-grade observations with photos, most-voted first."""
    found: list[dict] = []
    page = 1
    while len(found) < limit:
        per_page = min(PER_PAGE_MAX, max(limit * 2, 10))  # spare for licence re-checks
        params: dict[str, str | int] = {
            "taxon_name": taxon,
            "quality_grade": "research",
            "photo_license": ",".join(licences),
            "photos": "true",
            "order_by": "votes",
            "order": "desc",
            "per_page": per_page,
            "page": page,
        }
        url = f"{api_url.rstrip('/')}/v1/observations?{urllib.parse.urlencode(params)}"
        body = json.loads(_get(url, timeout))
        results = body.get("results") or []
        found.extend(results)
        if not results or page * per_page >= int(body.get("total_results") or 0):
            break
        page += 1
    return found


def _author(photo: dict, observation: dict) -> str:
    user = observation.get("user") or {}
    name = user.get("name") or user.get("login")
    if name:
        return f"{name} (iNaturalist)"
    # attribution looks like "(c) someone, some rights reserved (CC BY)"
    match = re.match(r"\(c\)\s*([^,]+)", photo.get("attribution") or "")
    return f"{match.group(1).strip()} (iNaturalist)" if match else "iNaturalist user"


def fetch(
    taxon: str,
    licences: list[str],
    limit: int,
    out: Path | str,
    api_url: str = DEFAULT_API,
    size: str = "large",
    timeout: float = 30.0,
) -> tuple[list[ManifestEntry], list[tuple[str, str]]]:
    """Download the first photo of each matching observation into `out`.

    Returns (manifest entries, skipped [(what, why)]). Writes out/photos.csv (for
    `photos import`) and out/manifest.json. Network errors on single photos are skipped.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    entries: list[ManifestEntry] = []
    skipped: list[tuple[str, str]] = []
    for obs in search_observations(taxon, licences, limit, api_url, timeout):
        if len(entries) >= limit:
            break
        photos = obs.get("photos") or []
        label = f"observation {obs.get('id')}"
        if not photos:
            skipped.append((label, "no photos"))
            continue
        photo = photos[0]  # first photo per observation, as the published run did
        code = (photo.get("license_code") or "").lower()
        if code not in licences:
            skipped.append((label, f"first photo licence {code or 'none'!r} is not requested"))
            continue
        thumb = photo.get("url") or ""
        photo_url = re.sub(r"/square\.", f"/{size}.", thumb)
        suffix = Path(urllib.parse.urlparse(photo_url).path).suffix or ".jpg"
        name = f"inat_{photo['id']}{suffix.lower()}"
        try:
            (out / name).write_bytes(_get(photo_url, timeout))
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            skipped.append((label, f"download failed: {exc}"))
            continue
        entries.append(
            ManifestEntry(
                file=name,
                photo_id=int(photo["id"]),
                observation_id=int(obs["id"]),
                observation_url=obs.get("uri")
                or f"https://www.inaturalist.org/observations/{obs['id']}",
                license=code,
                attribution=photo.get("attribution") or "",
                author=_author(photo, obs),
                observed_on=str(obs.get("observed_on") or ""),
                place=obs.get("place_guess") or "",
                taxon=((obs.get("taxon") or {}).get("name")) or taxon,
                photo_url=photo_url,
            )
        )
    _write_manifest(out, entries)
    return entries, skipped


def _write_manifest(out: Path, entries: list[ManifestEntry]) -> None:
    (out / "manifest.json").write_text(
        json.dumps([asdict(e) for e in entries], indent=2), encoding="utf-8"
    )
    columns = [
        "file",
        "source",
        "author",
        "license",
        "notes",
        "subject",
        "photo_id",
        "observed_on",
        "place",
        "attribution",
    ]
    with (out / "photos.csv").open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns)
        writer.writeheader()
        for e in entries:
            writer.writerow(
                {
                    "file": e.file,
                    "source": e.observation_url,
                    "author": e.author,
                    "license": e.license,
                    "notes": e.attribution,
                    "subject": e.taxon,
                    "photo_id": e.photo_id,
                    "observed_on": e.observed_on,
                    "place": e.place,
                    "attribution": e.attribution,
                }
            )
