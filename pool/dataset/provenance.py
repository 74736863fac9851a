"""Where a painting came from, as the export and its dataset card state it: the photo credit,
the refinement chain with its critiques, the renderer that drew it and the runs that made it."""

from __future__ import annotations

import json
import re
from typing import Any

from refpool.core.contracts import Candidate, Photo
from refpool.core.defaults import GATE_PROFILE
from refpool.core.store import Store, candidates, model_calls

_SECRETISH = re.compile(r"key|token|secret|password|authorization", re.IGNORECASE)


def attribution(photo: Photo) -> str:
    """How a painting credits its reference photo."""
    return f"{photo.file_name} by {photo.author}, {photo.licence_label}, {photo.source_url}"


def critique_history(store: Store, candidate_id: int) -> list[dict[str, Any]]:
    """The candidate's refinement chain up to itself, oldest round first."""
    return [
        {
            "candidate_id": c.id,
            "round": c.round,
            "generator": c.generator,
            "accepted": c.accepted,
            "gate_codes": c.gate_codes,
            "critique": c.critique.to_dict() if c.critique else None,
        }
        for c in candidates.chain(store, candidate_id, descendants=False)
    ]


def served_model(store: Store, candidate: Candidate) -> str | None:
    """The model the server said wrote the candidate's program (None: procedural, or unsaid)."""
    if candidate.coder_call_id is None:
        return None
    call = model_calls.get(store, candidate.coder_call_id)
    return call.served_model if call is not None else None


def endpoint_model(store: Store, candidate: Candidate) -> str:
    """The model id the endpoint was asked for when it wrote the candidate's program (the
    models-file entry's `model`); `procedural` for the offline painter, or the models-file name
    when no call is recorded (a program made before calls were kept)."""
    if candidate.coder_call_id is None:
        return candidate.generator
    call = model_calls.get(store, candidate.coder_call_id)
    return call.model if call is not None and call.model else candidate.generator


def render_info(store: Store, candidate: Candidate) -> tuple[dict[str, str], str]:
    """(renderer library versions, gate profile) of the render that made the candidate's PNG."""
    rows = []
    if candidate.render_id is not None:
        rows = store.query(
            "SELECT lib_versions, profile FROM renders WHERE id = ?", (candidate.render_id,)
        )
    if not rows and candidate.png_sha:
        rows = store.query(
            "SELECT lib_versions, profile FROM renders WHERE png_sha = ? ORDER BY id DESC LIMIT 1",
            (candidate.png_sha,),
        )
    if not rows:
        return {}, GATE_PROFILE
    return json.loads(rows[0]["lib_versions"] or "{}"), rows[0]["profile"]


def run_configs(store: Store, run_ids: list[int]) -> list[dict[str, Any]]:
    """{run, config} for each run that is still recorded, credentials scrubbed."""
    out = []
    for rid in run_ids:
        rows = store.query("SELECT config FROM runs WHERE id = ?", (rid,))
        if rows:
            out.append({"run": rid, "config": scrub(json.loads(rows[0]["config"]))})
    return out


def scrub(config: object) -> object:
    """Drop anything that looks like a credential from a run config before it is published."""
    if isinstance(config, dict):
        return {k: scrub(v) for k, v in config.items() if not _SECRETISH.search(str(k))}
    if isinstance(config, list):
        return [scrub(v) for v in config]
    return config


# Licence codes as the published pool spells them (cc-by, cc-by-sa, cc0), per photo licence.
PHOTO_LICENCE_CODE = {"CC-BY": "cc-by", "CC-BY-SA": "cc-by-sa", "CC0": "cc0", "PD": "pd"}
# A painting's licence follows its photo: derivatives of BY-SA must stay BY-SA; BY needs credit.
ROW_LICENCE = {"CC-BY-SA": "cc-by-sa", "CC-BY": "cc-by", "CC0": "cc0", "PD": "cc0"}
ROW_LICENCE_URL = {
    "cc-by": "https://creativecommons.org/licenses/by/4.0/",
    "cc-by-sa": "https://creativecommons.org/licenses/by-sa/4.0/",
    "cc0": "https://creativecommons.org/publicdomain/zero/1.0/",
}
ROW_LICENCE_NAME = {"cc-by": "CC BY 4.0", "cc-by-sa": "CC BY-SA 4.0", "cc0": "CC0 1.0"}
# The Hub's `license:` identifiers, least restrictive first.
HUB_LICENCE = {"cc0": "cc0-1.0", "cc-by": "cc-by-4.0", "cc-by-sa": "cc-by-sa-4.0"}


def photo_licence_url(photo: Photo) -> str:
    """The deed of the photo's own licence (its version, 4.0 when none was recorded)."""
    version = photo.licence_version.strip() or "4.0"
    if photo.licence == "CC-BY":
        return f"https://creativecommons.org/licenses/by/{version}/"
    if photo.licence == "CC-BY-SA":
        return f"https://creativecommons.org/licenses/by-sa/{version}/"
    if photo.licence == "CC0":
        return "https://creativecommons.org/publicdomain/zero/1.0/"
    return "https://creativecommons.org/publicdomain/mark/1.0/"


def photo_licence_name(photo: Photo) -> str:
    """ "CC BY 2.0", "CC BY-SA 4.0", "CC0 1.0" or "Public Domain", as a credit line spells it."""
    if photo.licence == "PD":
        return "Public Domain"
    if photo.licence == "CC0":
        return "CC0 1.0"
    version = photo.licence_version.strip()
    name = photo.licence.replace("CC-", "CC ", 1)
    return f"{name} {version}".strip()


def adapted_from(photo: Photo) -> str:
    """The credit a painting carries: a derived work, adapted from its reference photo."""
    row = ROW_LICENCE[photo.licence]
    return (
        f'Watercolour painting adapted from the photo "{photo.file_name}" by {photo.author}'
        f" ({photo.source_url}), licensed {photo_licence_name(photo)}"
        f" ({photo_licence_url(photo)}). The painting is licensed {ROW_LICENCE_NAME[row]}"
        f" ({ROW_LICENCE_URL[row]})."
    )
