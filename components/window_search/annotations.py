"""Grounding annotations and predictions (formats.md), validated with errors that name the file,
the record and the key (pure; no gradio).

Annotations: {"movies": [{"movie_id", "video", "subtitles"?}], "pairs": [{"pair_id", "movie_id",
"contrast_attribute", "target": {"qid", "query", "interval"}, "confusable": {...}}]}.
Predictions (JSONL): {"qid", "interval": [s, e]} + optional "window", "trace". An unreadable
interval is kept as an invalid prediction (IoU 0, metrics.md), not an error.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from components.common.errors import DataFormatError
from components.common.paths import confined_path

CONTRAST_ATTRIBUTES = ("subject", "visual anchor", "core action", "motion", "interaction", "setting",
                       "temporal composition")


@dataclass
class MovieEntry:
    movie_id: str
    video: Path
    subtitles: Path | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class GroundingQuery:
    qid: str
    query: str
    interval: tuple[float, float]
    pair_id: str
    movie_id: str
    role: str                 # "target" | "confusable"
    contrast_attribute: str
    partner_qid: str


@dataclass
class GroundingPair:
    pair_id: str
    movie_id: str
    contrast_attribute: str
    target: GroundingQuery
    confusable: GroundingQuery


@dataclass
class GroundingAnnotations:
    path: Path
    movies: dict[str, MovieEntry]
    pairs: list[GroundingPair]

    @property
    def queries(self) -> list[GroundingQuery]:
        return [q for p in self.pairs for q in (p.target, p.confusable)]

    def query(self, qid: str) -> GroundingQuery:
        for q in self.queries:
            if q.qid == qid:
                return q
        raise KeyError(qid)

    def movie(self, movie_id: str) -> MovieEntry:
        return self.movies[movie_id]


@dataclass
class Prediction:
    qid: str
    interval: tuple[float, float] | None   # None when missing or invalid (IoU 0)
    window: tuple[float, float] | None = None
    trace: str | None = None
    raw: Any = None


def valid_interval(value: Any) -> tuple[float, float] | None:
    """[s, e] with finite numbers and e > s, else None."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    try:
        if any(isinstance(x, bool) for x in value):
            return None
        s, e = float(value[0]), float(value[1])
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(s) and math.isfinite(e)) or e <= s:
        return None
    return s, e


def _require(record: dict, key: str, where: str, path: Path, fix: str = "") -> Any:
    if not isinstance(record, dict):
        raise DataFormatError(f"{path}: {where} must be a JSON object, got {type(record).__name__}.")
    if key not in record:
        raise DataFormatError(f"{path}: {where} has no key '{key}'{'; ' + fix if fix else ''}.")
    return record[key]


def _str(record: dict, key: str, where: str, path: Path) -> str:
    value = _require(record, key, where, path)
    if not isinstance(value, str) or not value.strip():
        raise DataFormatError(f"{path}: {where} key '{key}' must be a non-empty string, got {value!r}.")
    return value


def load_annotations(path: str | Path, *, durations: dict[str, float] | None = None,
                     check_files: bool = False) -> GroundingAnnotations:
    """Read and validate a grounding annotation file. `durations` (movie_id -> seconds) enables
    the check that intervals end within the movie; `check_files` that videos/subtitles exist."""
    from components.common.io import load_json

    path = Path(path)
    data = load_json(path, "grounding annotation file")
    if not isinstance(data, dict):
        raise DataFormatError(f"{path}: the top level must be an object with 'movies' and 'pairs'.")
    movies_raw = _require(data, "movies", "the top level", path,
                          'add "movies": [{"movie_id": ..., "video": ...}]')
    pairs_raw = _require(data, "pairs", "the top level", path)
    if not isinstance(movies_raw, list) or not isinstance(pairs_raw, list):
        raise DataFormatError(f"{path}: 'movies' and 'pairs' must be lists.")
    base = path.parent
    movies: dict[str, MovieEntry] = {}
    for i, m in enumerate(movies_raw):
        where = f"movies[{i}]"
        mid = _str(m, "movie_id", where, path)
        where = f"movies[{i}] ('{mid}')"
        if mid in movies:
            raise DataFormatError(f"{path}: {where}: duplicate movie_id '{mid}'; each movie once.")
        video = confined_path(base, _str(m, "video", where, path), file=path, where=where, key="video")
        subs = m.get("subtitles")
        if subs is not None and not isinstance(subs, str):
            raise DataFormatError(f"{path}: {where} key 'subtitles' must be a path string or absent.")
        sub_path = confined_path(base, subs, file=path, where=where, key="subtitles") if subs else None
        if check_files:
            if not video.is_file():
                raise DataFormatError(f"{path}: {where} key 'video': file not found: {video}.")
            if sub_path is not None and not sub_path.is_file():
                raise DataFormatError(f"{path}: {where} key 'subtitles': file not found: {sub_path}.")
        extra = {k: v for k, v in m.items() if k not in ("movie_id", "video", "subtitles")}
        movies[mid] = MovieEntry(mid, video, sub_path, extra)

    pairs: list[GroundingPair] = []
    pair_ids: set[str] = set()
    qids: set[str] = set()
    for i, p in enumerate(pairs_raw):
        where = f"pairs[{i}]"
        pid = _str(p, "pair_id", where, path)
        where = f"pairs[{i}] ('{pid}')"
        if pid in pair_ids:
            raise DataFormatError(f"{path}: {where}: duplicate pair_id '{pid}'; pair ids must be unique.")
        pair_ids.add(pid)
        mid = _str(p, "movie_id", where, path)
        if mid not in movies:
            raise DataFormatError(f"{path}: {where} key 'movie_id': '{mid}' is not listed in 'movies' "
                                  f"(known: {', '.join(movies) or 'none'}).")
        attr = _str(p, "contrast_attribute", where, path)
        sides = {}
        for role in ("target", "confusable"):
            q = _require(p, role, where, path)
            qwhere = f"{where}.{role}"
            qid = _str(q, "qid", qwhere, path)
            if qid in qids:
                raise DataFormatError(f"{path}: {qwhere}: duplicate qid '{qid}'; every query needs its own id.")
            qids.add(qid)
            text = _str(q, "query", qwhere, path)
            raw = _require(q, "interval", qwhere, path)
            interval = valid_interval(raw)
            if interval is None:
                raise DataFormatError(f"{path}: {qwhere} ('{qid}') key 'interval' must be [start, end] "
                                      f"seconds with end > start, got {raw!r}.")
            if interval[0] < 0:
                raise DataFormatError(f"{path}: {qwhere} ('{qid}') key 'interval' {list(interval)} starts "
                                      "before 0 s.")
            dur = (durations or {}).get(mid)
            if dur is not None and interval[1] > dur + 1e-6:
                raise DataFormatError(f"{path}: {qwhere} ('{qid}') key 'interval' {list(interval)} ends "
                                      f"after the movie '{mid}' ({dur:.1f} s); fix the interval or the video.")
            sides[role] = (qid, text, interval)
        (tq, tt, ti), (cq, ct, ci) = sides["target"], sides["confusable"]
        target = GroundingQuery(tq, tt, ti, pid, mid, "target", attr, cq)
        conf = GroundingQuery(cq, ct, ci, pid, mid, "confusable", attr, tq)
        pairs.append(GroundingPair(pid, mid, attr, target, conf))
    return GroundingAnnotations(path, movies, pairs)


def load_predictions(path: str | Path) -> dict[str, Prediction]:
    """qid -> Prediction. A line without a qid, or a qid given twice, is a DataFormatError."""
    path = Path(path)
    if not path.exists():
        raise DataFormatError(f"prediction file not found: {path}")
    out: dict[str, Prediction] = {}
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (UnicodeDecodeError, OSError) as exc:
        raise DataFormatError(f"{path} is not a readable UTF-8 JSONL file ({exc}).") from None
    for n, line in enumerate(lines, 1):
        line = line.strip()
        if not line:
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataFormatError(f"{path}: line {n} is not valid JSON ({exc.msg}).") from None
        if not isinstance(rec, dict) or "qid" not in rec:
            raise DataFormatError(f"{path}: line {n} has no key 'qid'; each line is "
                                  '{"qid": ..., "interval": [s, e]}.')
        qid = str(rec["qid"])
        if qid in out:
            raise DataFormatError(f"{path}: line {n}: duplicate qid '{qid}'; keep one prediction per query.")
        out[qid] = Prediction(qid, valid_interval(rec.get("interval")),
                              valid_interval(rec.get("window")),
                              rec.get("trace"), rec)
    return out
