"""SRT / WebVTT loading with pysubs2.

Encodings tried in order: UTF-8 (BOM allowed), UTF-16 (only when a BOM is present, or when the
bytes look like BOM-less UTF-16), cp1252, latin-1. Cue text has formatting tags removed
(SRT <i>/<b>/<font>, ASS {\\...} overrides, WebVTT <v ...>/<c.class>/timestamps) and line breaks
replaced by single spaces.
"""
from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path

from components.base.errors import MediaError
from components.datasource import local

_TAG = re.compile(r"<[^<>]*>")
_SPACE = re.compile(r"\s+")
_RESAVE = "open it in a text editor and re-save it as UTF-8 (SRT or WebVTT)"


@dataclass(frozen=True)
class Cue:
    start: float  # seconds
    end: float
    text: str


def _decode(data: bytes, path: Path) -> str:
    if data.startswith(codecs.BOM_UTF8):
        candidates = ["utf-8-sig"]
    elif data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        candidates = ["utf-16"]
    else:
        candidates = ["utf-8"]
        even, odd = data[0:200:2], data[1:200:2]
        if data and odd.count(0) > len(odd) * 0.4:
            candidates.append("utf-16-le")
        elif data and even.count(0) > len(even) * 0.4:
            candidates.append("utf-16-be")
        candidates += ["cp1252", "latin-1"]
    for encoding in candidates:
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            continue
        if "\x00" in text:  # binary data that happened to decode
            continue
        return text
    raise MediaError(f"subtitle file {path} is not in a readable text encoding "
                     f"(tried {', '.join(candidates)}); {_RESAVE}.")


def _strip_vtt_blocks(text: str) -> str:
    """Drop WebVTT NOTE / STYLE / REGION blocks and cue identifiers (pysubs2 reads them as text)."""
    blocks = re.split(r"\n\s*\n", text.replace("\r\n", "\n").replace("\r", "\n"))
    keep = []
    for block in blocks:
        if re.match(r"\s*(NOTE|STYLE|REGION)(\s|$)", block):
            continue
        lines = block.strip("\n").split("\n")
        if len(lines) > 1 and "-->" not in lines[0] and "-->" in lines[1]:
            lines = lines[1:]  # a cue identifier line, which pysubs2 would read as text
        keep.append("\n".join(lines))
    return "\n\n".join(keep) + "\n"


def _clean(text: str) -> str:
    text = _TAG.sub("", text.replace("\n", " "))
    return _SPACE.sub(" ", text).strip()


def load_subtitles(path: str | Path) -> list[Cue]:
    """Cues (seconds, plain text) of an .srt / .vtt file, sorted by start time."""
    import pysubs2

    p = local(path)  # fetched first when it comes from a dataset repository
    if not p.is_file():
        raise MediaError(f"subtitle file not found: {p}. Check the path.")
    data = p.read_bytes()
    if not data.strip():
        return []
    text = _decode(data, p)
    fmt = {".srt": "srt", ".vtt": "vtt"}.get(p.suffix.lower())
    if fmt == "vtt" or text.lstrip("\ufeff").startswith("WEBVTT"):
        text = _strip_vtt_blocks(text)
    try:
        subs = pysubs2.SSAFile.from_string(text, format_=fmt)
    except Exception as exc:  # noqa: BLE001 - pysubs2 raises several kinds of parse errors
        if fmt is not None:
            try:  # a mislabeled file (.srt holding WebVTT or the other way round)
                subs = pysubs2.SSAFile.from_string(text)
            except Exception:  # noqa: BLE001
                subs = None
        else:
            subs = None
        if subs is None:
            raise MediaError(f"subtitle file {p} could not be parsed as SRT or WebVTT "
                             f"({str(exc).strip()[:120] or type(exc).__name__}); if it is in another "
                             f"encoding or format, {_RESAVE}.") from None
    cues = []
    for event in subs:
        if event.is_comment:
            continue
        cue_text = _clean(event.plaintext)
        if cue_text:
            cues.append(Cue(start=event.start / 1000.0, end=event.end / 1000.0, text=cue_text))
    if not cues:
        raise MediaError(f"subtitle file {p} has text but no cues could be read from it (wrong "
                         f"encoding or not SRT/WebVTT); {_RESAVE}.")
    cues.sort(key=lambda c: (c.start, c.end))
    return cues


def cues_in_window(cues: list[Cue], start: float, end: float) -> list[Cue]:
    """Cues overlapping [start, end]: cue.start < end and cue.end > start (a cue that only touches
    the window at one instant is left out; a zero-length cue counts when inside the window)."""
    out = []
    for cue in cues:
        if cue.end > cue.start:
            if cue.start < end and cue.end > start:
                out.append(cue)
        elif start <= cue.start <= end:
            out.append(cue)
    return out
