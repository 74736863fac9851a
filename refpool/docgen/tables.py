"""The reference tables: models-file fields, release columns, gate codes, exit statuses.

Each is read from its one home in the code (a table the code itself uses), never retyped.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from generators.modelcfg import FIELDS, RETIRED, ROLES, STRUCTURED_OUTPUT, load_entry
from refpool.core.contracts import ReleaseRow
from refpool.core.errors import EXIT_STATUSES
from refpool.core.release_columns import RELEASE_COLUMN_SOURCES, RELEASE_COLUMNS
from renderer.profiles import CODES, PROFILES

# The few fields whose default depends on another field: shown as the code computes them.
_ROUTER = "https://router.huggingface.co/v1"
_LOCAL = "http://localhost:8000/v1"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _json(value: Any) -> str:
    return f"`{json.dumps(value)}`"


def _model_defaults() -> dict[str, str]:
    """Each field's default, read from a minimal entry as the loader fills it in."""
    local = load_entry({"model": "m", "base_url": _LOCAL})
    router = load_entry({"model": "m", "base_url": _ROUTER})
    seeing = load_entry({"model": "m", "base_url": _LOCAL, "accepts_images": True})
    out = {"model": "required", "base_url": "required"}
    for name in FIELDS:
        if name in out:
            continue
        if name == "key_env":
            out[name] = (
                f"{_json(router.key_env)} on `router.huggingface.co`, {_json(local.key_env)}"
                " elsewhere (your own server is never sent your HF token)"
            )
        elif name == "roles":
            out[name] = f"{_json(list(local.roles))}; {_json(list(seeing.roles))} with images"
        elif name == "price_per_mtok":
            out[name] = "none (no cost estimate)"
        elif name == "notes":
            out[name] = "none (not sent anywhere)"
        elif name == "structured_output":
            out[name] = "the role's: `json_schema` for a judge, `none` for a critic"
        else:
            value = getattr(local, name)
            out[name] = _json(list(value) if isinstance(value, tuple) else value)
    return out


def models_file() -> str:
    defaults = _model_defaults()
    lines = [
        "# Models file",
        "",
        "Coders, critics and judges are entries of a JSON file: `generators/models.json` ships the",
        "presets, and `--models-file FILE` or `$REFPOOL_MODELS` names your own. The file is",
        '`{"models": {NAME: {field: value, ...}}}`; a NAME starting with `_` is ignored (a comment).',
        "Any other field is refused with an error that names it, so a misspelt `extra_body` never",
        "sends every request with thinking on. How to write entries for vLLM, llama.cpp, Ollama and",
        "the HF router: [Use local and hosted model servers](../how-to/model-servers.md).",
        "",
        "| field | meaning | default |",
        "|---|---|---|",
    ]
    for name, meaning in FIELDS.items():
        lines.append(f"| `{name}` | {_cell(meaning)} | {_cell(defaults[name])} |")
    lines += [
        "",
        f"`roles` holds any of {', '.join(f'`{r}`' for r in ROLES)}; `structured_output` one of",
        f"{', '.join(f'`{s}`' for s in STRUCTURED_OUTPUT)}.",
        "",
        "Retired fields are refused with what to write instead:",
        "",
    ]
    lines += [f"- `{name}`: {advice}" for name, advice in RETIRED.items()]
    return "\n".join(lines) + "\n"


def release_columns() -> str:
    fields = dataclasses.fields(ReleaseRow)
    lines = [
        "# Release columns",
        "",
        "Each line of a release's `metadata.jsonl` is one painting, with these keys in this order",
        "(`ReleaseRow` in `refpool/core/contracts.py`). The first 13 are the published",
        "experiment's columns; the rest add provenance. `datasets.load_dataset` reads the PNG of",
        "`file_name` as the `image` column. How a release is made:",
        "[Release and publish](../how-to/release-and-publish.md).",
        "",
        "Curator names can be replaced by stable pseudonyms (`pool release",
        "--pseudonymise-curators`).",
        "",
        "| column | type | holds | from |",
        "|---|---|---|---|",
    ]
    for f in fields:
        kind = str(f.type).replace("|", "or")
        holds, source = RELEASE_COLUMNS[f.name], RELEASE_COLUMN_SOURCES[f.name]
        lines.append(f"| `{f.name}` | `{kind}` | {_cell(holds)} | {_cell(source)} |")
    return "\n".join(lines) + "\n"


def gate_codes() -> str:
    lines = [
        "# Gate codes",
        "",
        "Every violation the gate reports carries one of these codes and a message written for the",
        "model that will revise its program (the message below; a line number is added where the",
        "sketch has one). A rejected painting scores zero. What each means for a person and what",
        "to do: [Troubleshooting](../troubleshooting.md). Why the gate works the way it does:",
        "[The gate, by construction](../explanation/gate.md).",
        "",
        "| code | message |",
        "|---|---|",
    ]
    lines += [f"| `{code}` | {_cell(message)} |" for code, message in CODES.items()]
    lines += ["", "Profiles, and the brush methods each allows:", ""]
    for name, profile in PROFILES.items():
        methods = ", ".join(f"`{m}`" for m in profile.brush_methods)
        lines.append(f"- `{name}`: {methods}")
    return "\n".join(lines) + "\n"


def exit_statuses() -> str:
    lines = [
        "# Exit status",
        "",
        "Every `refpool` command ends the same way when something is wrong: `error: <what went",
        "wrong and what to do>` on stderr, a `hint:` line naming the flag that fixes it where one",
        "does, and one of these statuses; never a traceback (a traceback is a bug: please report",
        "it). The studio shows the same messages in its message box.",
        "",
        "| status | meaning |",
        "|---|---|",
    ]
    lines += [f"| {status} | {_cell(meaning)} |" for status, meaning in EXIT_STATUSES.items()]
    lines += [
        "",
        "Each message, what it means and what to do: [Troubleshooting](../troubleshooting.md).",
    ]
    return "\n".join(lines) + "\n"
