"""What blind mode does to text a curator reads: programs lose their comments (a coder often
signs its work, e.g. `// Kimi-K3 …`) and every spelling of a known model, vendor or family
name is masked wherever it is still written (a string, an identifier, a critique's wording).
A program that still names its model after that is not shown at all (see curation/detail.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from generators.modelcfg import load_models
from refpool.core.errors import RefpoolError
from refpool.core.store import Store, candidates

MASK = "[model]"


def strip_js_comments(source: str) -> str:
    """The program without `//` and `/* */` comments; string and template literals are kept
    as they are. Regex literals are not parsed (a `//` inside one is rare in sketches)."""
    out: list[str] = []
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        two = source[i : i + 2]
        if c in "\"'`":
            end = _string_end(source, i)
            out.append(source[i:end])
            i = end
        elif two == "//":
            while i < n and source[i] != "\n":
                i += 1
        elif two == "/*":
            end = source.find("*/", i + 2)
            i = n if end < 0 else end + 2
            out.append(" ")
        else:
            out.append(c)
            i += 1
    # drop the lines that held only a comment, and trailing blanks left behind
    lines = [line.rstrip() for line in "".join(out).split("\n")]
    kept = [
        line
        for line, was in zip(lines, source.split("\n"), strict=False)
        if line or not was.strip()
    ]
    return "\n".join(kept).strip("\n") + "\n"


def _string_end(source: str, start: int) -> int:
    quote, i = source[start], start + 1
    while i < len(source):
        if source[i] == "\\":
            i += 2
            continue
        if source[i] == quote:
            return i + 1
        if source[i] == "\n" and quote != "`":
            return i  # an unterminated string ends at the line
        i += 1
    return len(source)


# -- every spelling of a model's name -----------------------------------------------------
_TOKENS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")  # KimiK3 -> Kimi, K, 3; GLM5 -> GLM, 5
_SEP = r"[\s_\-./:@]*"  # what may stand between a name's parts: nothing (camelCase) or any of these
# a name starts where a word or a camelCase hump does, and ends before a lowercase letter
_START = r"(?:(?<![A-Za-z0-9])|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Za-z])(?=\d))"
_END = r"(?![a-z])"
MIN_FAMILY = 3  # a one- or two-letter first part ("K", "o1") is no family name


def model_names(store: Store) -> list[str]:
    """Every model and vendor name blind mode hides: the store's generators and the models
    file's handles and endpoint ids (vendor/model). Critics named on a candidate's chain are
    added where the chain is read (curation/detail.py)."""
    names = set(candidates.generators(store))
    try:
        entries = load_models()
    except RefpoolError:  # an unreadable models file must not stop a blind session
        entries = {}
    for cfg in entries.values():
        names.update((cfg.name, cfg.model))
    return sorted(n for n in names if n.strip())


def name_variants(names: Iterable[str]) -> list[list[str]]:
    """Each name as the word sequences that spell it, longest first: the whole name, each
    path part ('moonshotai/Kimi-K3' -> 'moonshotai', 'Kimi-K3') and its family (the first
    word, 'kimi'). Words are lowercase: 'Kimi-K3', 'kimi_k3' and 'KimiK3' all give
    ['kimi', 'k', '3']."""
    out: set[tuple[str, ...]] = set()
    for name in names:
        for part in [name, *re.split(r"[/:@]", name)]:
            words = tuple(w.lower() for w in _TOKENS.findall(part))
            if not words or len("".join(words)) < MIN_FAMILY:
                continue
            out.add(words)
            if words[0].isalpha() and len(words[0]) >= MIN_FAMILY:
                out.add(words[:1])  # the family: "Kimi" alone names it too
    return [list(w) for w in sorted(out, key=lambda w: (-len("".join(w)), w))]


@functools.lru_cache(maxsize=32)
def _pattern(variants: tuple[tuple[str, ...], ...]) -> re.Pattern[str] | None:
    if not variants:
        return None
    spelled = (_SEP.join(f"(?i:{re.escape(w)})" for w in words) for words in variants)
    return re.compile(_START + "(?:" + "|".join(spelled) + ")" + _END)


def _compiled(names: Iterable[str]) -> re.Pattern[str] | None:
    return _pattern(tuple(tuple(v) for v in name_variants(names)))


def mask_names(text: str, names: Iterable[str]) -> str:
    """`text` with every spelling of the names (case, separators, camelCase, inside a compound
    identifier such as kimi_k3_palette) replaced by MASK."""
    pattern = _compiled(names)
    if pattern is None or not text:
        return text
    return pattern.sub(MASK, text)


def still_named(text: str, names: Iterable[str]) -> list[str]:
    """The names that can still be read in `text` once separators and case are ignored (say
    'mykimik3' or 'K.i.m.i'): the residual check after masking."""
    squashed = re.sub(r"[^a-z0-9]", "", text.lower().replace(MASK, " "))
    return [
        "".join(words)
        for words in name_variants(names)
        if len("".join(words)) >= MIN_FAMILY + 1 and "".join(words) in squashed
    ]
