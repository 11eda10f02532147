"""Catch trials (optional, `catch_every` K in the study file): after every K answers an
attention check whose wrong candidates are obviously wrong: the BEGINNING, END and true middle of
one video, and as the other three candidates the true middles of three other videos (other source
videos where the set has them). Its answers go to `<annotator>.catch.jsonl` and are reported
apart from the score; they never enter `set_N.json` or the Human row.

A check shows its video's true middle, so it is made only from a video whose three questions this
annotator has all answered (in a routed study also one whose remaining questions are no longer
served to them), and those answers cannot be changed after it."""
from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from components.cloze.data import ClozeDataset
from components.cloze.questions import Lettered, Question

OTHER = "other:"


@dataclass(frozen=True)
class CatchQuestion(Lettered):
    number: int                      # the annotator's n-th check, from 1
    stem: str                        # the video whose BEGINNING, END and true middle it shows
    options: tuple[str, ...]         # per letter: "GT" or "other:<stem>" (that video's true middle)

    @property
    def others(self) -> tuple[str, ...]:
        return tuple(o.removeprefix(OTHER) for o in self.options if o != "GT")


def due(answers: int, checks_done: int, every: int | None) -> bool:
    """The (n+1)-th check is due once (n+1) x K questions are answered."""
    return bool(every) and answers >= every * (checks_done + 1)


def source_video(stem: str) -> str:
    """`J1pDNwlCiws.22_0` -> `J1pDNwlCiws` (stems cut from one video share it)."""
    return stem.split(".", 1)[0]


def eligible(questions: tuple[Question, ...], answered: set[int], closed: set[int], used: set[str]) -> list[str]:
    """Stems whose every question is answered by this annotator or closed to them (`closed`: a
    routed study serves them no more), at least one of them answered, not used for a check yet."""
    by_stem: dict[str, list[int]] = {}
    for i, q in enumerate(questions):
        by_stem.setdefault(q.stem, []).append(i)
    return sorted(s for s, idx in by_stem.items()
                  if s not in used and any(i in answered for i in idx)
                  and all(i in answered or i in closed for i in idx))


def make_check(questions: tuple[Question, ...], answered: set[int], closed: set[int], used: set[str],
               annotator: str, seed: int, number: int) -> CatchQuestion | None:
    """The annotator's `number`-th check, or None while no video is eligible."""
    stems = eligible(questions, answered, closed, used)
    if not stems:
        return None
    rng = random.Random(f"{seed}:{annotator}:catch:{number}")
    stem = rng.choice(stems)
    everyone = sorted({q.stem for q in questions} - {stem})
    far = [s for s in everyone if source_video(s) != source_video(stem)]
    pool = far if len(far) >= 3 else everyone
    if len(pool) < 3:
        return None
    options = ["GT", *(OTHER + s for s in rng.sample(pool, 3))]
    rng.shuffle(options)
    return CatchQuestion(number, stem, tuple(options))


def check_clips(ds: ClozeDataset, check: CatchQuestion) -> list[Path]:
    """[before, after, A..D] on disk (never sent to a browser under these names)."""
    inst = ds.instance(check.stem)
    cands = [inst.clip_path("GT") if o == "GT" else ds.instance(o.removeprefix(OTHER)).clip_path("GT")
             for o in check.options]
    return [inst.clip_path("before"), inst.clip_path("after"), *cands]
