"""Character memory per movie (paper §4.2, D.2; docs/formats.md layout), pure; no gradio.

    {"movie_id": "m01", "characters": [{"char_id": "C1", "display_name": "Lloyd Christmas",
      "names": ["Lloyd", "Lloyd Christmas"],
      "references": [{"ref_id": "C1:r1", "image": "m01/C1_r1.jpg", "time": 1432.0}]}]}

Image paths are relative to the JSON file's folder (docs/formats.md: "Paths inside a file are relative
to the file's folder"); a path that is not found there is also tried relative to the folder above
(docs/formats.md's example writes "memory/m01/C1_r1.jpg" as seen from the data root).

MatchCharacters (Algorithm 1, line 1) is a name lookup without a model call: case-insensitive,
whole word, any of a character's names.
"""
from __future__ import annotations

import io
import json
import re
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Iterable

from backends.ask import Asked, Unparsed, ask
from backends.base import GenerationParams, GenerationRequest, Message, VLMBackend
from backends.errors import GenerationStopped
from components import datasource
from components.base.errors import DataFormatError, UserError
from components.base.io import atomic_write_bytes, load_json
from components.media import Cue
from components.window_search.replies import picked_frames

if TYPE_CHECKING:  # PIL stays out of `python app.py --help`
    from PIL import Image


@dataclass
class Reference:
    ref_id: str
    image: str            # resolved path of the image (stored relative to the JSON's folder)
    time: float | None = None


@dataclass
class Character:
    char_id: str
    display_name: str
    names: list[str]
    references: list[Reference] = field(default_factory=list)


class CharacterMemory:
    """Names + reference frames of one movie. Satisfies the agent's CharacterMemoryView."""

    def __init__(self, movie_id: str, characters: Iterable[Character] = (), path: str | Path | None = None):
        self.movie_id = movie_id
        self.characters: list[Character] = list(characters)
        self.path = Path(path) if path else None

    # -- lookup ----------------------------------------------------------------------------------
    def match_characters(self, query: str) -> list[Character]:
        """Characters any of whose names occurs in the query as a whole word (case-insensitive)."""
        out = []
        for ch in self.characters:
            for name in ch.names:
                if name.strip() and re.search(rf"(?<!\w){re.escape(name.strip())}(?!\w)", query, re.IGNORECASE):
                    out.append(ch)
                    break
        return out

    def character(self, char_id: str) -> Character:
        for ch in self.characters:
            if ch.char_id == char_id:
                return ch
        raise UserError(f"no character '{char_id}' in the memory of {self.movie_id} "
                        f"(known: {', '.join(c.char_id for c in self.characters) or 'none'}).")

    def image_path(self, ref: Reference) -> Path | None:
        return Path(ref.image) if ref.image else None

    def load_reference_image(self, ref: Reference) -> Image.Image | None:
        path = self.image_path(ref)
        if path is None or not datasource.is_file(path):
            return None
        path = datasource.local(path)  # fetched when it comes from a repository
        from PIL import Image

        try:
            with Image.open(path) as im:
                return im.convert("RGB")
        except OSError:
            return None

    # -- editing (each edit saves the JSON and the image atomically) -------------------------------
    def add_character(self, display_name: str, names: Iterable[str] | None = None) -> Character:
        names = [n.strip() for n in (names or [display_name]) if n and n.strip()]
        if not names:
            raise UserError("a character needs a name.")
        used = {c.char_id for c in self.characters}
        k = 1
        while f"C{k}" in used:
            k += 1
        ch = Character(f"C{k}", display_name.strip() or names[0], names, [])
        self.characters.append(ch)
        if self.path:
            self.save()
        return ch

    def add_reference(self, char_id: str, image: Image.Image, time: float | None = None) -> Reference:
        """Store `image` as a new reference of `char_id` (image file first, then the JSON)."""
        if self.path is None:
            raise UserError("this character memory has no file yet; save it first (save(path)).")
        ch = self.character(char_id)
        used = {r.ref_id for r in ch.references}
        j = 1
        while f"{char_id}:r{j}" in used:
            j += 1
        rel = f"{self.movie_id}/{char_id}_r{j}.jpg"
        buf = io.BytesIO()
        image.convert("RGB").save(buf, format="JPEG", quality=90)
        atomic_write_bytes(self.path.parent / rel, buf.getvalue())
        ref = Reference(f"{char_id}:r{j}", str(self.path.parent / rel), None if time is None else float(time))
        ch.references.append(ref)
        self.save()
        return ref

    def remove_reference(self, ref_id: str) -> None:
        for ch in self.characters:
            for ref in ch.references:
                if ref.ref_id == ref_id:
                    ch.references.remove(ref)
                    if self.path:
                        self.save()
                        path = self.image_path(ref)
                        if path is not None and path.is_file() and path.parent.name == self.movie_id:
                            path.unlink()  # only images this memory owns (its own folder)
                    return
        raise UserError(f"no reference '{ref_id}' in the memory of {self.movie_id}.")

    # -- files -----------------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"movie_id": self.movie_id,
                "characters": [{"char_id": c.char_id, "display_name": c.display_name, "names": list(c.names),
                                "references": [{**asdict(r), "image": self._stored(r.image)} for r in c.references]}
                               for c in self.characters]}

    def _stored(self, image: str) -> str:
        """The image path as written to the JSON: relative to its folder when inside it."""
        if self.path is None:
            return image
        try:
            return Path(image).resolve().relative_to(self.path.parent.resolve()).as_posix()
        except ValueError:
            return image

    def save(self, path: str | Path | None = None) -> Path:
        if path is not None:
            self.path = Path(path)
        if self.path is None:
            raise UserError("no path to save the character memory to.")
        atomic_write_bytes(self.path, (json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n").encode())
        return self.path

    @classmethod
    def load(cls, path: str | Path) -> CharacterMemory:
        path = Path(path)
        data = load_json(datasource.local(path), "character memory file")
        if not isinstance(data, dict):
            raise DataFormatError(f"{path}: the top level must be an object with 'movie_id' and 'characters'.")
        for key in ("movie_id", "characters"):
            if key not in data:
                raise DataFormatError(f"{path}: the top level has no key '{key}'.")
        chars, ids = [], set()
        for i, c in enumerate(data["characters"]):
            where = f"characters[{i}]"
            if not isinstance(c, dict):
                raise DataFormatError(f"{path}: {where} must be an object.")
            for key in ("char_id", "names"):
                if key not in c:
                    raise DataFormatError(f"{path}: {where} has no key '{key}'.")
            if c["char_id"] in ids:
                raise DataFormatError(f"{path}: {where}: duplicate char_id '{c['char_id']}'.")
            ids.add(c["char_id"])
            names = c["names"]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise DataFormatError(f"{path}: {where} key 'names' must be a list of strings.")
            refs = []
            for j, r in enumerate(c.get("references", [])):
                for key in ("ref_id", "image"):
                    if not isinstance(r, dict) or key not in r:
                        raise DataFormatError(f"{path}: {where}.references[{j}] has no key '{key}'.")
                refs.append(Reference(str(r["ref_id"]), str(_resolve_image(path, str(r["image"]))),
                                      None if r.get("time") is None else float(r["time"])))
            chars.append(Character(str(c["char_id"]), str(c.get("display_name") or (names[0] if names else c["char_id"])),
                                   list(names), refs))
        return cls(str(data["movie_id"]), chars, path)

    def __repr__(self) -> str:
        return f"CharacterMemory({self.movie_id!r}, {len(self.characters)} characters)"


def _resolve_image(json_path: Path, stored: str) -> Path:
    p = Path(stored)
    if p.is_absolute():
        return p
    first = json_path.parent / p
    if datasource.exists(first):
        return first
    second = json_path.parent.parent / p  # docs/formats.md's example is written from the data root
    return second if datasource.exists(second) else first


def memory_path(data_dir: str | Path, movie_id: str) -> Path:
    """Where a movie's memory lives: <grounding dir>/memory/<movie_id>.json."""
    return Path(data_dir) / "memory" / f"{movie_id}.json"


def load_or_empty(path: str | Path, movie_id: str) -> CharacterMemory:
    path = Path(path)
    return CharacterMemory.load(path) if datasource.is_file(path) else CharacterMemory(movie_id, [], path)


# ----------------------------------------------------------------------------- construction

# Words that are capitalised at the start of a line or after "Hi"/"Hey" but are not names.
_NOT_NAMES = {
    "hey", "hi", "hello", "yes", "no", "well", "oh", "okay", "ok", "finally", "please", "thanks",
    "thank", "sorry", "look", "listen", "wait", "come", "now", "so", "but", "and", "then", "also",
    "here", "there", "sir", "madam", "mom", "dad", "man", "guys", "everyone", "everybody", "god",
    "what", "why", "how", "who", "where", "when", "good", "great", "right", "sure", "just", "yeah",
    "honey", "darling", "baby", "dear", "boss", "doctor", "officer", "mister", "miss", "son", "kid",
    "the", "a", "i", "you", "we", "they", "he", "she", "it", "this", "that", "stop", "go", "excuse",
    "over", "up", "down", "in", "on", "out", "off", "back", "morning", "afternoon", "evening", "night", "again", "fine", "nothing", "really", "dude", "buddy",
}
_NAME = r"([A-Z][a-z]+(?:\s[A-Z][a-z]+)?)"
# direct address ("Harry, ...", "..., Lloyd.", "Hi Mary!") and introductions ("I'm Lloyd")
_PATTERNS = (
    re.compile(rf"^{_NAME},"),
    re.compile(rf",\s{_NAME}\s?[.!?,]"),
    re.compile(rf"\b(?:Hi|Hey|Hello|Thanks|Bye|Goodbye|Morning),?\s{_NAME}\b"),
    re.compile(rf"\b(?:I'm|I am|[Mm]y name is|[Cc]all me|[Tt]his is|[Mm]eet)\s{_NAME}\b"),
    re.compile(rf"^{_NAME}\shere[.!]"),
)


def name_mentions(cues: Iterable[Cue]) -> dict[str, list[Cue]]:
    """Capitalised names used in direct address or introductions -> the cues that use them
    (each cue counted once per name)."""
    found: dict[str, list] = {}
    for cue in cues:
        names = set()
        for sentence in re.split(r"(?<=[.!?])\s+", cue.text):
            for pat in _PATTERNS:
                for m in pat.finditer(sentence):
                    name = m.group(1)
                    first = name.split()[0]
                    if first.lower() in _NOT_NAMES:
                        continue
                    names.add(name if name.split()[-1].lower() not in _NOT_NAMES else first)
        for name in names:
            found.setdefault(name, []).append(cue)
    return found


def build_names_only(movie_id: str, cues: Iterable[Cue], *, min_count: int = 2,
                     path: str | Path | None = None) -> CharacterMemory:
    """Offline memory (no model): names used in address/introduction at least `min_count` times;
    a one-word name that is the first word of a longer found name joins that character."""
    found = {n: c for n, c in name_mentions(cues).items() if len(c) >= min_count}
    full = sorted((n for n in found if " " in n), key=lambda n: (-len(found[n]), n))
    groups: list[list[str]] = []
    for name in full:
        groups.append([name])
    for name in sorted((n for n in found if " " not in n), key=lambda n: (-len(found[n]), n)):
        for g in groups:
            if g[0].split()[0] == name:
                g.append(name)
                break
        else:
            groups.append([name])
    groups.sort(key=lambda g: (-sum(len(found[n]) for n in g), g[0]))
    chars = [Character(f"C{i}", max(g, key=len), sorted(g, key=len), []) for i, g in enumerate(groups, 1)]
    return CharacterMemory(movie_id, chars, path)


# ----------------------------------------------------------------------------- with a VLM (D.2, reduced)

PICK_PROMPT = (
    "The frames below come from a 30-second clip of a movie, each preceded by its label [F<i>] and its "
    "time. The dialogue of the clip is:\n{dialogue}\n\nIn this dialogue the person called \"{name}\" is "
    "addressed or introduces themself. Link the name to a visible person: pick at most two frames in "
    "which {name} is clearly visible and identifiable. If you cannot tell who {name} is, pick none.\n"
    "Reply with exactly one JSON object: {{\"frames\": [<frame numbers>], \"confidence\": <0 to 1>}}")


def _clip_times(cues: list, *, max_clips: int, min_gap: float) -> list[float]:
    """Centres of reference clips: addressing lines at least `min_gap` seconds apart."""
    chosen: list[float] = []
    for cue in cues:
        t = (cue.start + cue.end) / 2
        if all(abs(t - c) >= min_gap for c in chosen):
            chosen.append(t)
        if len(chosen) >= max_clips:
            break
    return chosen


PICK_PARAMS = GenerationParams(temperature=0.2, max_tokens=128, thinking=False)  # as the verifier (§5)


def _parse_pick(text: str, n_frames: int) -> tuple[list[int], float]:
    parsed = picked_frames(text, n_frames)
    if parsed is None:
        raise Unparsed("no {\"frames\": [...], \"confidence\": ...} object in the reply")
    return parsed


def _ask_clip(movie: Any, backend: VLMBackend, name: str, span: tuple[float, float], *,
              max_frames: int, attempts: int, stop: threading.Event | None) -> tuple[list, Asked | None]:
    """One clip's frames and what came of asking the model which show `name` (None: no frames)."""
    s, e = span
    frames = movie.frames(s, e, fps=1.0, cap=max_frames)
    if not frames:
        return frames, None
    dialogue = "\n".join(f"<{c.start:.1f} s> {c.text}" for c in movie.cues(s, e))
    content: list = [PICK_PROMPT.format(dialogue=dialogue or "(none)", name=name)]
    for i, f in enumerate(frames, 1):
        content += [f"[F{i}] <{f.time:.1f} seconds>", f.image]
    request = GenerationRequest([Message("user", content)], PICK_PARAMS, task="aws.memory",
                                ref=f"{movie.movie_id}:{name}", cancel=stop)
    return frames, ask(backend, request, lambda text: _parse_pick(text, len(frames)), attempts=attempts)


@dataclass
class _ClipRules:
    max_clips: int = 10
    min_gap: float = 45.0
    clip_seconds: float = 30.0
    min_confidence: float = 0.8
    max_frames: int = 30
    attempts: int = 3


def _support(movie: Any, backend: VLMBackend, ch: Character, cues: list[Cue], rules: _ClipRules,
             stats: dict, stop: threading.Event | None,
             progress: Callable[[str, dict], None] | None) -> tuple[int, list[tuple[float, Any]]]:
    """(clips whose confident pick shows the character, the picked (time, image) frames); a set
    `stop` ends the count early."""
    picks: list[tuple[float, Any]] = []
    supporting = 0
    for centre in _clip_times(cues, max_clips=rules.max_clips, min_gap=rules.min_gap):
        if stop is not None and stop.is_set():
            break
        s = max(0.0, centre - rules.clip_seconds / 2)
        span = (s, min(movie.duration, s + rules.clip_seconds))
        try:
            frames, asked = _ask_clip(movie, backend, ch.display_name, span,
                                      max_frames=rules.max_frames, attempts=rules.attempts, stop=stop)
        except GenerationStopped:
            break
        if asked is None:
            continue
        stats["clips"] += 1
        stats["calls"] += asked.attempts
        if asked.value is None:  # unreadable after the retries, or the call failed
            stats["unparsed"] += 1
            continue
        chosen, conf = asked.value
        if chosen and conf >= rules.min_confidence:
            supporting += 1
            picks += [(frames[i - 1].time, frames[i - 1].image) for i in chosen]
        if progress:
            progress(ch.display_name, stats)
    return supporting, picks


def build_with_vlm(movie: Any, backend: VLMBackend, path: str | Path, *, min_count: int = 2,
                   max_clips: int = 10, min_gap: float = 45.0, clip_seconds: float = 30.0,
                   min_confidence: float = 0.8, max_refs: int = 4, max_retries: int = 2,
                   max_frames: int | None = None, stop: threading.Event | None = None,
                   progress: Callable[[str, dict], None] | None = None) -> tuple[CharacterMemory, dict]:
    """Reduced D.2: names from dialogue (address/introductions, as `build_names_only`); for each
    name up to `max_clips` addressing lines >= 45 s apart, each centring a 30 s clip sampled at
    1 fps (at most `max_frames` frames); one model call per clip links the name to a visible
    person and picks <= 2 frames; a pick counts when its confidence >= 0.80; a name is kept with
    support from >= 2 clips, storing up to 4 references. Unparsable replies are retried
    (backends.ask), then counted (never guessed). After a set `stop` no more clips are asked.
    Not done (D.2's later stages): the joint cross-clip comparison and union-find identity merge."""
    names_only = build_names_only(movie.movie_id, movie.all_cues, min_count=min_count)
    mentions = name_mentions(movie.all_cues)
    rules = _ClipRules(max_clips, min_gap, clip_seconds, min_confidence,
                       min(int(clip_seconds), max_frames or int(clip_seconds)), 1 + max(0, max_retries))
    mem = CharacterMemory(movie.movie_id, [], path)
    stats = {"calls": 0, "unparsed": 0, "clips": 0, "kept": 0, "dropped": 0}
    for ch in names_only.characters:
        cues = sorted({id(c): c for n in ch.names for c in mentions.get(n, [])}.values(), key=lambda c: c.start)
        supporting, picks = _support(movie, backend, ch, cues, rules, stats, stop, progress)
        if supporting >= 2:
            stats["kept"] += 1
            kept = mem.add_character(ch.display_name, ch.names)
            for t, image in picks[:max_refs]:
                mem.add_reference(kept.char_id, image, time=t)
        else:
            stats["dropped"] += 1
    mem.save()
    return mem, stats
