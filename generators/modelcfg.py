"""Models as data: the models file's fields, checked strictly, as ModelConfig records.

Models come from generators/models.json (presets), or from the file named by --models-file or
$REFPOOL_MODELS. A misspelt field is an error that names it (a silently ignored
`extra_body` would send every request with thinking on). Keys are read from the environment
variable an entry names and never logged, stored or put into an error message.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from refpool.core import secret_values
from refpool.core.errors import InputError, RefpoolError

MODELS_ENV = "REFPOOL_MODELS"
# The Hugging Face router: the only endpoint that may be sent $HF_TOKEN without being told to.
ROUTER_HOSTS = frozenset({"router.huggingface.co"})
ROLES = ("coder", "critic", "judge")  # judge: reserved for the pairwise judge
STRUCTURED_OUTPUT = ("none", "json_object", "json_schema")
RETIRED = {"json_mode": 'use "structured_output": "json_object" (or "none", "json_schema")'}
FIELDS = {
    "model": "the endpoint's model id",
    "base_url": "the OpenAI-compatible /v1 URL",
    "key_env": "environment variable holding the key (null: none)",
    "accepts_images": "true if the model takes images",
    "roles": f"what the model may do: a list of {', '.join(ROLES)}",
    "temperatures": "one is drawn per candidate",
    "max_tokens": "completion budget (reasoning and answer share it on most servers)",
    "timeout_s": "total deadline of one attempt, in seconds",
    "concurrency": "requests in flight to this model's base_url (the lowest of its models)",
    "price_per_mtok": '{"input": USD, "output": USD} per million tokens',
    "structured_output": "response_format sent: none, json_object or json_schema (default: the"
    " role's, json_schema for a judge, none for a critic)",
    "retry_budget_s": "longest total wait, in seconds, for one request's retries when the server"
    " says how long to wait (Retry-After, rate-limit resets, a loading model)",
    "adapt": "let refpool change a request field the server refuses when a safe change exists"
    " (max_tokens sent as max_completion_tokens; no temperature for a model that takes none),"
    " recording it with each call (default true; false: the model is stopped instead)",
    "extra_body": "fields merged into every request body (e.g. chat_template_kwargs)",
    "headers": "extra HTTP headers sent with every request",
    "notes": "free text",
}


class ModelsFileError(InputError):
    """The models file cannot be read, or an entry or a choice from it is wrong."""


class MissingKey(RefpoolError, RuntimeError):
    """A model's key is not in the environment variable its entry names (never the key)."""


@dataclass(frozen=True)
class ModelConfig:
    name: str  # our handle, e.g. "glm-5.2"
    model: str  # the endpoint's model id
    base_url: str
    key_env: str | None = None
    accepts_images: bool = False
    temperatures: tuple[float, ...] = (0.6, 0.9, 1.1)
    max_tokens: int = 2400
    timeout_s: float = 180.0
    concurrency: int = 4
    price_in: float | None = None  # USD per million tokens
    price_out: float | None = None
    structured_output: str | None = None  # None: the role's default (see llm.response_format)
    retry_budget_s: float = 300.0
    roles: tuple[str, ...] = ("coder",)
    extra_body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    adapt: bool = True

    def fingerprint(self) -> str:
        """What shapes this entry's requests (never a header's value): a server's refusal of
        the configuration holds for as long as this is unchanged."""
        shape = {
            "model": self.model,
            "base_url": self.base_url,
            "accepts_images": self.accepts_images,
            "max_tokens": self.max_tokens,
            "structured_output": self.structured_output,
            "extra_body": self.extra_body,
            "headers": sorted(self.headers),
            "adapt": self.adapt,
        }
        text = json.dumps(shape, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def api_key(self) -> str:
        if not self.key_env:
            return "not-needed"  # local servers (vLLM, llama.cpp, Ollama) ignore it
        key = os.environ.get(self.key_env)
        if not key:
            raise MissingKey(
                f"model {self.name!r} needs an API key in ${self.key_env}; export it, or use"
                " your own models file (an entry's key_env names its variable; a local server"
                " needs none)",
                hint="choose a models file",
            )
        secret_values.register(key)  # so an echo of it in an error is scrubbed, prefix or not
        return key

    def cost(self, prompt_tokens: int | None, completion_tokens: int | None) -> float | None:
        if self.price_in is None or self.price_out is None or prompt_tokens is None:
            return None
        return round(
            (prompt_tokens * self.price_in + (completion_tokens or 0) * self.price_out) / 1e6, 6
        )

    def require_role(self, role: str) -> None:
        """Fail with a clear message if this model is not declared for `role`."""
        if role not in self.roles:
            raise ModelsFileError(
                f"model {self.name!r} is not declared as a {role} (its roles: "
                f'{", ".join(self.roles)}); add {role!r} to its "roles" in the models file'
            )


def read_models_file(path: str | Path | None = None) -> tuple[Any, str]:
    """The parsed models file (`path`, $REFPOOL_MODELS, or the shipped presets) and where it
    came from, for messages. It holds more than models: the `scorers` section too."""
    path = path or os.environ.get(MODELS_ENV)
    if path:
        try:
            text = Path(path).read_text("utf-8")
        except OSError as exc:
            raise ModelsFileError(f"cannot read the models file {path}: {exc.strerror}") from None
        where = str(path)
    else:
        text = resources.files("generators").joinpath("models.json").read_text("utf-8")
        where = "generators/models.json"
    try:
        return json.loads(text), where
    except json.JSONDecodeError as exc:
        raise ModelsFileError(f"{where} is not valid JSON: {exc}") from None


def load_models(path: str | Path | None = None) -> dict[str, ModelConfig]:
    """name -> ModelConfig from `path`, $REFPOOL_MODELS, or the shipped presets."""
    data, where = read_models_file(path)
    entries = data.get("models", data) if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise ModelsFileError(f'{where}: expected {{"models": {{NAME: {{...}}}}}}')
    return {
        name: _entry(where, name, entry)
        for name, entry in entries.items()
        if not name.startswith("_")
    }


def load_entry(entry: dict[str, Any], name: str = "example") -> ModelConfig:
    """One entry as the loader reads it, defaults filled in (the reference page uses this)."""
    return _entry("a models file", name, entry)


def _entry(where: str, name: str, entry: Any) -> ModelConfig:
    def bad(what: str) -> ModelsFileError:
        return ModelsFileError(f"{where}: model {name!r}: {what}")

    if not isinstance(entry, dict):
        raise bad("expected an object of fields")
    retired = sorted(set(entry) & set(RETIRED))
    if retired:
        raise bad("; ".join(f"field {k!r} is retired: {RETIRED[k]}" for k in retired))
    unknown = sorted(set(entry) - set(FIELDS))
    if unknown:
        known = "; ".join(f"{k} ({v})" for k, v in FIELDS.items())
        raise bad(f"unknown field(s) {', '.join(map(repr, unknown))}. Known fields: {known}")
    if "model" not in entry or "base_url" not in entry:
        raise bad("needs at least 'model' and 'base_url'")
    accepts_images = bool(entry.get("accepts_images", False))
    roles = entry.get("roles", ["coder", "critic"] if accepts_images else ["coder"])
    if isinstance(roles, str):
        roles = [roles]
    if not isinstance(roles, list) or not set(roles) <= set(ROLES):
        raise bad(f"roles must be a list of {', '.join(ROLES)}, not {roles!r}")
    for key in ("extra_body", "headers"):
        if not isinstance(entry.get(key, {}), dict):
            raise bad(f"{key} must be an object")
    if not entry.get("temperatures", [0.6]):
        raise bad("temperatures must list at least one temperature")
    headers = {str(k): str(v) for k, v in (entry.get("headers") or {}).items()}
    if any(k.lower() == "authorization" for k in headers):
        raise bad("put the key in an environment variable named by key_env, not in headers")
    structured = entry.get("structured_output")
    if structured is not None and structured not in STRUCTURED_OUTPUT:
        raise bad(
            f"structured_output must be one of {', '.join(STRUCTURED_OUTPUT)}, not {structured!r}"
        )
    price = entry.get("price_per_mtok") or {}
    try:
        return ModelConfig(
            name=name,
            model=str(entry["model"]),
            base_url=str(entry["base_url"]),
            key_env=entry.get("key_env", _default_key_env(str(entry["base_url"]))),
            accepts_images=accepts_images,
            temperatures=tuple(float(t) for t in entry.get("temperatures", (0.6, 0.9, 1.1))),
            max_tokens=int(entry.get("max_tokens", 2400)),
            timeout_s=float(entry.get("timeout_s", 180)),
            concurrency=max(1, int(entry.get("concurrency", 4))),
            price_in=price.get("input"),
            price_out=price.get("output"),
            structured_output=structured,
            retry_budget_s=max(0.0, float(entry.get("retry_budget_s", 300))),
            roles=tuple(roles),
            extra_body=dict(entry.get("extra_body") or {}),
            headers=headers,
            adapt=bool(entry.get("adapt", True)),
        )
    except (TypeError, ValueError) as exc:
        raise bad(f"a field has the wrong type ({exc})") from None


def _default_key_env(base_url: str) -> str | None:
    """HF_TOKEN for the Hugging Face router only: a user's own endpoint never gets it unasked."""
    return "HF_TOKEN" if urlparse(base_url).hostname in ROUTER_HOSTS else None
