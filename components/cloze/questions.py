"""Questions: GT plus three distractors, in the upstream seeded option order.

Evaluation order (released evaluation): random.Random(f"{seed}:{stem}:{dim}").shuffle([GT, d1, d2, d3]).
Mixed order (released mixed evaluation): random.Random(f"{seed}:{stem}").shuffle([GT, S, A, P]), no
dimension in the key.
Human-study order (released study app): options Random(f"{seed}:{stem}:{dim}:options"), task list
shuffled with int(sha256(f"{schedule_seed}:{set_name}").hexdigest()[:16], 16).
"""
from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from components.cloze.data import DIM_CLIPS, ClozeDataset, clip_dim, dim_key
from components.base.errors import UserError

LETTERS = ("A", "B", "C", "D")
DEFAULT_SEED = 42
ORDER_EVAL = "eval"    # Random(f"{seed}:{stem}:{dim}")
ORDER_HUMAN = "human"  # Random(f"{seed}:{stem}:{dim}:options")
MIXED_PICKS = ("S", "A", "P")  # one distractor per dimension, in the order the shuffle starts from


class Lettered:
    """A question's options in letter order (`options`, one of them "GT"): its letter map and the
    letter of the true middle."""

    options: tuple[str, ...]

    @property
    def option_map(self) -> dict[str, str]:
        return dict(zip(LETTERS, self.options))

    @property
    def expected(self) -> str:
        return LETTERS[self.options.index("GT")]


@dataclass(frozen=True)
class Question(Lettered):
    stem: str
    dim: str                  # S | A | C | Mixed
    options: tuple[str, ...]  # clip names in letter order A..D
    seed: int = DEFAULT_SEED
    order_rule: str = ORDER_EVAL

    @property
    def key(self) -> str:
        return f"{self.stem}:{self.dim}"


def mixed_pick(stem: str, mixed: dict, dim: str) -> str:
    """The clip a Mixed item names for `dim` ("S/Rand2.mp4" -> "Rand2"); it must be one of that
    dimension's distractors. The released file names the Progression pick "P" (folder C); the
    released evaluation script reads "C", so that key is accepted too."""
    value = mixed.get(dim, mixed.get("C") if dim == "P" else None)
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"Mixed item for '{stem}' lacks key '{dim}' (e.g. \"{dim}\": \"A/Wide.mp4\").")
    clip = value.strip().rsplit("/", 1)[-1].removesuffix(".mp4")
    want = dim_key(dim)
    if clip_dim(clip) != want:
        raise UserError(f"Mixed item for '{stem}': '{dim}' names {value!r}, which is not one of "
                        f"{', '.join(DIM_CLIPS[want])}.")
    return clip


def candidate_clips(stem: str, dim: str, mixed: dict | None = None) -> list[str]:
    """[GT, d1, d2, d3] in the order the shuffle starts from ([GT, S, A, P] for Mixed)."""
    if dim == "Mixed":
        if not mixed:
            raise UserError(f"Mixed question for '{stem}' needs its S, A and P picks from the set file.")
        return ["GT", *[mixed_pick(stem, mixed, d) for d in MIXED_PICKS]]
    return ["GT", *DIM_CLIPS[dim]]


def order_tag(stem: str, dim: str, seed: int = DEFAULT_SEED, rule: str = ORDER_EVAL) -> str:
    """The string that seeds a question's option shuffle. Mixed under the evaluation rule uses the
    released mixed evaluator's f"{seed}:{stem}" (no dimension); the human-study rule, for which no
    released Mixed study exists, keeps the dimension and ":options" (our choice)."""
    if rule == ORDER_HUMAN:
        return f"{seed}:{stem}:{dim}:options"
    if dim == "Mixed":
        return f"{seed}:{stem}"
    return f"{seed}:{stem}:{dim}"


def shuffled_options(stem: str, dim: str, seed: int = DEFAULT_SEED, rule: str = ORDER_EVAL,
                     mixed: dict | None = None) -> tuple[str, ...]:
    clips = candidate_clips(stem, dim, mixed)
    random.Random(order_tag(stem, dim, seed, rule)).shuffle(clips)
    return tuple(clips)


def make_question(stem: str, dim: str, seed: int = DEFAULT_SEED, rule: str = ORDER_EVAL,
                  mixed: dict | None = None) -> Question:
    dim = dim_key(dim)
    return Question(stem, dim, shuffled_options(stem, dim, seed, rule, mixed), seed, rule)


def question_with_order(q: Question, options: tuple[str, ...]) -> Question:
    return Question(q.stem, q.dim, tuple(options), q.seed, q.order_rule)


def schedule_seed_for(schedule_seed: int, set_name: str) -> int:
    return int(hashlib.sha256(f"{schedule_seed}:{set_name}".encode()).hexdigest()[:16], 16)


@dataclass
class QuestionSet:
    name: str
    questions: list[Question] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # why some questions could not be made


def set_names(ds: ClozeDataset) -> list[str]:
    return ["all", *[n for n in ds.sets if n != "all"]]


def build_set(ds: ClozeDataset, set_name: str = "all", dims=("S", "A", "C"), *,
              seed: int = DEFAULT_SEED, rule: str = ORDER_EVAL, limit: int | None = None,
              shuffle_tasks: bool = False) -> QuestionSet:
    """Questions of a set. A set is a list of stems (asked in each of `dims`) or of Mixed items
    ({"stem", "S", "A", "P"}). Questions whose clips are missing are skipped with a reason."""
    if set_name == "all" or set_name not in ds.sets:
        if set_name != "all":
            raise UserError(f"Unknown set '{set_name}'; choose one of {', '.join(set_names(ds))}.")
        entries: list = sorted(ds.instances)
    else:
        entries = list(ds.sets[set_name])
    if not entries:
        raise UserError(f"Set '{set_name}' is empty; add stems to {ds.root / 'sets.json'}.")
    dims = [dim_key(d) for d in dims]
    qs = QuestionSet(set_name)
    for entry in entries:
        mixed = entry if isinstance(entry, dict) else None
        stem = mixed.get("stem") if mixed else str(entry)
        if stem not in ds.instances:
            qs.skipped.append(f"{stem}: not in {ds.root / 'choices'}")
            continue
        inst = ds.instances[stem]
        for dim in (["Mixed"] if mixed else [d for d in dims if d != "Mixed"]):
            try:
                q = make_question(stem, dim, seed, rule, mixed)
            except UserError as exc:
                qs.skipped.append(str(exc))
                continue
            gone = inst.missing(("before", "after", *q.options))
            if gone:
                qs.skipped.append(f"{stem} {dim}: missing {', '.join(gone)}")
                continue
            qs.questions.append(q)
    if shuffle_tasks:
        random.Random(schedule_seed_for(seed, set_name)).shuffle(qs.questions)
    if limit is not None:
        qs.questions = qs.questions[:limit]
    if not qs.questions:
        if dims == ["Mixed"] and not any(isinstance(e, dict) for e in entries):
            raise UserError(f"Set '{set_name}' lists plain stems; Mixed questions come from a set of "
                            "mixed items ({\"stem\", \"S\", \"A\", \"P\"}), e.g. the set 'mixed'.")
        detail = "; ".join(qs.skipped[:3])
        raise UserError(f"Set '{set_name}' has no playable question" + (f" ({detail})." if detail else "."))
    return qs


def question_files(ds: ClozeDataset, questions: list[Question]) -> list:
    """The clips the questions show or send (before, after and their four options), each once:
    what a batch run fetches ahead from a repository, and nothing more."""
    paths: dict[str, None] = {}
    for q in questions:
        inst = ds.instance(q.stem)
        for clip in ("before", "after", *q.options):
            paths.setdefault(str(inst.clip_path(clip)))
    return list(paths)


def distractor_type(clip: str) -> str:
    """'Wide' -> 'Alignment (Wide)'; 'GT' -> 'true middle'."""
    names = {"S": "Semantic", "A": "Alignment", "C": "Progression"}
    d = clip_dim(clip)
    return "true middle" if d is None else f"{names[d]} ({clip})"
