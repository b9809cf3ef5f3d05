"""Cut document text into plain and matched pieces for templates to escape and wrap in <mark>.

Nothing here produces HTML: the template escapes every piece (autoescape), so
hostile document text can never become markup.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

SNIPPET_CHARS = 320


def merge_spans(spans: Iterable[Sequence[int]], length: int) -> list[tuple[int, int]]:
    """Sorted, non-overlapping (start, end) spans clipped to [0, length)."""
    clipped = sorted((max(0, int(s)), min(length, int(e))) for s, e, *_ in spans)
    merged: list[tuple[int, int]] = []
    for start, end in clipped:
        if end <= start:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def highlight_pieces(text: str, spans: Iterable[Sequence[int]], *, window: int | None = SNIPPET_CHARS) -> list[dict]:
    """[{"text": str, "match": bool}, ...] covering `text` (or a window around the first match).

    With `window`, long texts are cut to about that many characters around the
    first match, with "…" pieces marking the cuts.
    """
    text = text or ""
    merged = merge_spans(spans, len(text))
    lo, hi = 0, len(text)
    if window is not None and len(text) > window:
        first = merged[0][0] if merged else 0
        lo = max(0, first - window // 3)
        hi = min(len(text), lo + window)
    pieces: list[dict] = []
    if lo > 0:
        pieces.append({"text": "…", "match": False})
    cursor = lo
    for start, end in merged:
        if end <= lo or start >= hi:
            continue
        start, end = max(start, lo), min(end, hi)
        if start > cursor:
            pieces.append({"text": text[cursor:start], "match": False})
        pieces.append({"text": text[start:end], "match": True})
        cursor = end
    if cursor < hi:
        pieces.append({"text": text[cursor:hi], "match": False})
    if hi < len(text):
        pieces.append({"text": "…", "match": False})
    return pieces


_INDENTED = re.compile(r"^[ \t]")


def paragraphs(text: str) -> list[str]:
    """Newswire text as paragraphs: a blank line or an indented line starts one; other line breaks are joined.

    Returns plain strings: the template escapes them.
    """
    found: list[str] = []
    current: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if not line.strip():
            if current:
                found.append(" ".join(current))
                current = []
            continue
        if current and _INDENTED.match(line):
            found.append(" ".join(current))
            current = []
        current.append(" ".join(line.split()))
    if current:
        found.append(" ".join(current))
    return found
