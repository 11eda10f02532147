"""What a practice answer reveals beside its verdict (never in a blind playthrough): what the
runs chose on the question just answered, and where the player's running score stands among the
runs on the same questions. Pure: the runs table is components/cloze/runs.py's `ClozeRuns`; the
player's answers are the playthrough's latest records (components/cloze/human.py)."""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping

from components.cloze.data import clip_dim
from components.cloze.metrics import PAPER_KEYS
from components.cloze.runs import ClozeRuns, QuestionRuns

DIM_NAMES = {"S": "Semantic", "A": "Alignment", "C": "Progression"}


def clip_words(clip: str | None) -> str:
    """'Rand2' -> 'Semantic · Rand2'; 'GT' -> 'the true middle'."""
    if not clip:
        return ""
    dim = clip_dim(clip)
    return "the true middle" if dim is None else f"{DIM_NAMES[dim]} · {clip}"


def runs_chose(qr: QuestionRuns, option_map: Mapping[str, str]) -> str:
    """What the runs chose on one question, on the letters the player saw (`option_map`: letter
    -> clip): '2 of 5 runs chose A; 3 chose B (Semantic · Rand2)', the true middle's letter first,
    then the other letters picked, most picked first; runs without a valid answer are counted
    apart. '' when no run holds the question."""
    if not qr.answers:
        return ""
    expected = next((letter for letter, clip in option_map.items() if clip == "GT"), None)
    picked = Counter(a.letter for a in qr.answers if a.correct is not None and a.letter)
    answered = sum(picked.values())
    invalid = len(qr.answers) - answered
    if not answered:
        return f"None of {len(qr.answers)} runs gave a valid answer here."
    parts = [f"{picked.get(expected, 0)} of {answered} runs chose {expected}"]
    for letter, n in sorted(picked.items(), key=lambda item: (-item[1], item[0])):
        if letter != expected:
            parts.append(f"{n} chose {letter} ({clip_words(option_map.get(letter))})")
    line = "; ".join(parts)
    if invalid:
        line += f"; {invalid} gave no valid answer"
    return line + "."


def standing(table: ClozeRuns, answered: Mapping[tuple[str, str], Mapping]) -> str:
    """The player's running score placed among the runs on the same questions: '9 of 12: above
    21 of 30 runs on these questions' (a run's score there: the questions it chose the true
    middle on; an invalid or missing answer is not right). `answered`: (stem, folder dim) -> the
    player's latest record. '' when no run holds any of these questions."""
    right = sum(1 for rec in answered.values() if rec.get("correct"))
    run_right: Counter[str] = Counter()
    for stem, dim in answered:
        for a in table.question(stem, PAPER_KEYS.get(dim, dim)).answers:
            run_right[a.run] += bool(a.correct)
    if not run_right:
        return ""
    above = sum(1 for n in run_right.values() if n < right)
    level = sum(1 for n in run_right.values() if n == right)
    line = f"{right} of {len(answered)}: above {above} of {len(run_right)} runs on these questions"
    return line + (f", level with {level}" if level else "") + "."
