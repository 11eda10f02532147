"""Grounding annotations and predictions (docs/formats.md), validated with errors that name the file,
the record and the key (pure; no gradio).

Annotations: {"movies": [{"movie_id", "video", "subtitles"?}], "pairs": [{"pair_id", "movie_id",
"contrast_attribute", "target": {"qid", "query", "interval"}, "confusable": {...}}]}.
The file's shape is checked by components.common.validate (the schema below); what a schema
cannot say (unique ids, known movies, intervals inside the movie, paths inside the folder) is
checked after it, in the same words. Predictions (JSONL): {"qid", "interval": [s, e]} + optional
"window", "trace", "source", "fallback_interval". An unreadable interval (not two finite JSON
numbers with e > s; numeric strings included) is kept as an invalid prediction (IoU 0,
docs/metrics.md), not an error.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict
from typing import NotRequired

from components import datasource
from components.base.errors import DataFormatError
from components.common.intervals import valid_interval
from components.base.io import load_json
from components.common.paths import confined_path
from components.common.validate import validated_as

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
    source: str | None = None               # how it was obtained (types.MODEL_SOURCES, FALLBACKS)
    fallback_interval: tuple[float, float] | None = None  # a fallback's interval (not an answer)


def numeric_interval(value: Any) -> tuple[float, float] | None:
    """[s, e] of two finite JSON numbers with e > s, else None. Numeric strings ("2", "8") are
    not numbers: docs/metrics.md calls a non-numeric prediction invalid (IoU 0)."""
    if not isinstance(value, (list, tuple)) or len(value) != 2 or \
            not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        return None
    return valid_interval(value)


# -- the file's shape -------------------------------------------------------------------------------
def _text(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"must be a non-empty string, got {value!r}.")
    return value


def _path_or_absent(value: Any) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ValueError("must be a path string or absent.")
    return value


def _interval(value: Any) -> tuple[float, float]:
    interval = valid_interval(value)
    if interval is None:
        raise ValueError(f"must be [start, end] seconds with end > start, got {value!r}.")
    if interval[0] < 0:
        raise ValueError(f"{list(interval)} starts before 0 s.")
    return interval


@cache
def _schema() -> type:
    """The annotation file as pydantic reads it (pydantic is imported on first use only)."""
    from pydantic import BeforeValidator

    text = Annotated[str, BeforeValidator(_text)]
    # functional TypedDicts: the field types are objects here, not strings to resolve later
    movie = TypedDict("MovieRecord", {
        "movie_id": text, "video": text,
        "subtitles": NotRequired[Annotated[str | None, BeforeValidator(_path_or_absent)]]})
    query = TypedDict("QueryRecord", {
        "qid": text, "query": text,
        "interval": Annotated[tuple[float, float], BeforeValidator(_interval)]})
    pair = TypedDict("PairRecord", {"pair_id": text, "movie_id": text, "contrast_attribute": text,
                                    "target": query, "confusable": query})
    return TypedDict("AnnotationFile", {"movies": list[movie], "pairs": list[pair]})


_ID_KEYS = {"movies": "movie_id", "pairs": "pair_id", "target": "qid", "confusable": "qid"}
_SUB_RECORDS = ("target", "confusable")


def _named(node: Any, id_key: str | None) -> str:
    """" ('p1')" after a record that carries a readable id, else ""."""
    ident = node.get(id_key) if isinstance(node, dict) and id_key else None
    return f" ('{ident}')" if isinstance(ident, str) and ident.strip() else ""


def place(data: Any, loc: tuple) -> str:
    """Where `loc` points, naming records by their ids: ("pairs", 0, "target", "interval") ->
    "pairs[0] ('p1').target ('q1') key 'interval'"."""
    out, node, parent = "", data, None
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(part, int):
            node = node[part] if isinstance(node, list) and 0 <= part < len(node) else None
            out += f"[{part}]" + _named(node, _ID_KEYS.get(parent))
        elif part in _SUB_RECORDS or not last:
            node = node.get(part) if isinstance(node, dict) else None
            out += ("." if out else "") + str(part) + (_named(node, "qid") if part in _SUB_RECORDS else "")
        else:
            out += (" " if out else "the top level ") + f"key '{part}'"
        parent = part
    return out or "the top level"


# -- loading --------------------------------------------------------------------------------------
def load_annotations(path: str | Path, *, durations: dict[str, float] | None = None,
                     check_files: bool = False) -> GroundingAnnotations:
    """Read and validate a grounding annotation file. `durations` (movie_id -> seconds) enables
    the check that intervals end within the movie; `check_files` that videos/subtitles exist.
    `path` may name a file of a dataset repository (`hf://datasets/...`): it is fetched, and the
    movies it names are fetched when they are opened (components/datasource)."""
    path = datasource.open_data_path(path)
    data = load_json(datasource.local(path), "grounding annotation file")
    checked = validated_as(_schema(), data, file=path, where=lambda loc: place(data, loc))
    movies: dict[str, MovieEntry] = {}
    for i, (m, raw) in enumerate(zip(checked["movies"], data["movies"])):
        entry = _movie_entry(path, f"movies[{i}] ('{m['movie_id']}')", m, raw, check_files)
        if entry.movie_id in movies:
            raise DataFormatError(f"{path}: movies[{i}] ('{entry.movie_id}'): duplicate movie_id "
                                  f"'{entry.movie_id}'; each movie once.")
        movies[entry.movie_id] = entry
    pairs: list[GroundingPair] = []
    pair_ids: set[str] = set()
    qids: set[str] = set()
    for i, p in enumerate(checked["pairs"]):
        where = f"pairs[{i}] ('{p['pair_id']}')"
        if p["pair_id"] in pair_ids:
            raise DataFormatError(f"{path}: {where}: duplicate pair_id '{p['pair_id']}'; pair ids must be unique.")
        pair_ids.add(p["pair_id"])
        if p["movie_id"] not in movies:
            raise DataFormatError(f"{path}: {where} key 'movie_id': '{p['movie_id']}' is not listed in "
                                  f"'movies' (known: {', '.join(movies) or 'none'}).")
        pairs.append(_pair(path, where, p, qids, (durations or {}).get(p["movie_id"])))
    return GroundingAnnotations(path, movies, pairs)


def _movie_entry(path: Path, where: str, m: dict, raw: dict, check_files: bool) -> MovieEntry:
    base = path.parent
    video = confined_path(base, m["video"], file=path, where=where, key="video")
    subs = m.get("subtitles")
    sub_path = confined_path(base, subs, file=path, where=where, key="subtitles") if subs else None
    if check_files:
        if not datasource.is_file(video):
            raise DataFormatError(f"{path}: {where} key 'video': file not found: {video}.")
        if sub_path is not None and not datasource.is_file(sub_path):
            raise DataFormatError(f"{path}: {where} key 'subtitles': file not found: {sub_path}.")
    extra = {k: v for k, v in raw.items() if k not in ("movie_id", "video", "subtitles")}
    return MovieEntry(m["movie_id"], video, sub_path, extra)


def movie_files(ann: GroundingAnnotations, movie_ids, memory_dir: str | Path | None = None) -> list[Path]:
    """What opening these movies reads: each video, its subtitles and, under `memory_dir`, its
    character memory and the files beside it (what a batch run fetches ahead from a repository)."""
    out: list[Path] = []
    for mid in dict.fromkeys(movie_ids):
        entry = ann.movie(mid)
        out += [entry.video, *([entry.subtitles] if entry.subtitles else [])]
        if memory_dir is not None:
            out.append(Path(memory_dir) / f"{mid}.json")
            out += datasource.glob(memory_dir, f"{mid}/*")
    return out


def _pair(path: Path, where: str, p: dict, qids: set[str], duration: float | None) -> GroundingPair:
    """One checked pair as two queries; qids must be new, intervals end within the movie."""
    for role in ("target", "confusable"):
        q = p[role]
        qwhere = f"{where}.{role}"
        if q["qid"] in qids:
            raise DataFormatError(f"{path}: {qwhere}: duplicate qid '{q['qid']}'; every query needs its own id.")
        qids.add(q["qid"])
        if duration is not None and q["interval"][1] > duration + 1e-6:
            raise DataFormatError(f"{path}: {qwhere} ('{q['qid']}') key 'interval' {list(q['interval'])} ends "
                                  f"after the movie '{p['movie_id']}' ({duration:.1f} s); fix the interval "
                                  "or the video.")
    t, c = p["target"], p["confusable"]
    mid, pid, attr = p["movie_id"], p["pair_id"], p["contrast_attribute"]
    target = GroundingQuery(t["qid"], t["query"], tuple(t["interval"]), pid, mid, "target", attr, c["qid"])
    conf = GroundingQuery(c["qid"], c["query"], tuple(c["interval"]), pid, mid, "confusable", attr, t["qid"])
    return GroundingPair(pid, mid, attr, target, conf)


def _check_in_movie(path: Path, line: int, qid: str, key: str, value: Any) -> None:
    """A time before 0 s is outside every movie: refused (docs/decisions.md "Numbers"), since
    scoring it, or clipping it to 0, would score something the model did not say."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) for x in value) \
            and min(value) < 0:
        raise DataFormatError(f"{path}: line {line} (qid '{qid}') key '{key}': {list(value)} starts "
                              "before 0 s, outside the movie; fix or remove the line (a prediction "
                              "is never clipped or guessed).")


def load_predictions(path: str | Path, where: dict | None = None) -> dict[str, Prediction]:
    """qid -> Prediction. A line without a qid, a qid given twice, or a time before 0 s is a
    DataFormatError. `where`, when given, gets qid -> "<file> line <n>"."""
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
        for key in ("interval", "window", "fallback_interval"):
            _check_in_movie(path, n, qid, key, rec.get(key))
        source = rec.get("source")
        if where is not None:
            where.setdefault(qid, f"{path} line {n}")
        out[qid] = Prediction(qid, numeric_interval(rec.get("interval")),
                              numeric_interval(rec.get("window")), rec.get("trace"), rec,
                              source=str(source) if source is not None else None,
                              fallback_interval=numeric_interval(rec.get("fallback_interval")))
    return out
