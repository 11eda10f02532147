"""Query-guided region selection with the paper's prompt (the HAPACT paper, A.6.3).

One frame + the impact query go to any VLM backend with the prompt of
`assets/prompts/hapact_region_selection.txt`; the answer is parsed onto the 18 labels.
A reply that maps to no label (and is not an explicit "None") is asked again (backends.ask), at
most `max_attempts` times in all; after that it is kept raw and counted as unparsed, never guessed.
A backend failure is not asked again: the answer carries "backend error: ...".
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING


if TYPE_CHECKING:
    pass

PROMPT_FILE = Path(__file__).resolve().parents[3] / "assets" / "prompts" / "hapact_region_selection.txt"
#: The fine-tuning target format printed under the prompt in A.6.3 (the parser strips it).
ANSWER_FORMAT = "The affected body regions are {list of body-region labels}."
DEFAULT_ATTEMPTS = 3


def region_prompt(query: str) -> str:
    """The paper's prompt with the query filled in (replace, so braces in a query are harmless)."""
    template = PROMPT_FILE.read_text(encoding="utf-8").strip()
    return template.replace("{query}", query.strip())
