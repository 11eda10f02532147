"""What every `eval` says about its prediction lines beyond the scores, in one form (docs/decisions.md
"Eval inputs"): a file none of whose lines is for an item scored is refused (another split or set);
lines that are ignored, or scored as written though odd, are counted with where the first one was,
in a note. Each tab's eval_inputs.py says which lines those are."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NoReturn

from components.base.errors import UserError


@dataclass
class Tally:
    """How many lines of one kind, and where the first one was ("file line n, key ...")."""
    n: int = 0
    first: str | None = None

    def add(self, where: str) -> None:
        self.n += 1
        if self.first is None:
            self.first = where


def refuse_wrong_split(name: str, lines: int, example: str, against: str) -> NoReturn:
    raise UserError(f"{name}: none of its {lines} prediction line(s) is for {against} (e.g. "
                    f"{example}): a file of another split or set? Pass the matching files.")


def ignored_note(count: int, what: str, key: str, first: str) -> str:
    return f"{count} prediction line(s) for {what} were ignored ({key}; first: {first})."


def unknown_qid_notes(unknown: Sequence[str], lines: int, where: Mapping[str, str], pred_name: str, *,
                      against: str, what: str) -> list[str]:
    """The note on the prediction lines whose qid is not scored (`ignored_unknown_items`; none:
    []); a file all of whose `lines` are such is refused, `against` saying what they should be for."""
    if not unknown:
        return []
    first = f"{where.get(unknown[0], '?')}, qid '{unknown[0]}'"
    if len(unknown) == lines:
        refuse_wrong_split(pred_name, lines, first, against)
    return [ignored_note(len(unknown), what, "ignored_unknown_items", first)]
