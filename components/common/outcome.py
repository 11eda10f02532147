"""A model call that brought no answer, in the words every tab uses: "not reached: <reason>" when
the backend never returned a reply (a transport failure: no server at the address, a refused
connection, a timeout, an HTTP error), apart from "unparsed" (a reply came back and could not be
read) and "truncated" (a reply cut at max_tokens). backends/ask.py records a failure as
"<backend> failed: <the backend's message>"; a reply that could not be read as "unparsed ...".
Pure: no gradio."""
from __future__ import annotations

import re

NOT_REACHED = "not reached"
#: an error text that says a reply came back (or that the failure was the data's, not the model's)
_REPLIED = ("unparsed", "truncated", "media", "stopped")


def is_not_reached(error: str | None, *, answered: bool = False, truncated: bool = False) -> bool:
    """Whether a call's recorded `error` is a transport failure: an error, no answer, not a cut
    reply, and not one of the errors a reply (or a broken clip, or a Stop) gives."""
    text = str(error or "").strip()
    if not text or answered or truncated:
        return False
    return not text.lower().startswith(_REPLIED)


def reason(error: str | None) -> str:
    """The backend's own message, once: "openai:m failed: openai:m failed after 3 attempt(s):
    connection failed (...)." -> "openai:m failed after 3 attempt(s): connection failed (...)"."""
    text = " ".join(str(error or "").split()).rstrip(".")
    return re.sub(r"^(\S+) failed: (?=\1\b)", "", text) or "no reply"


def not_reached(error: str | None) -> str:
    """'not reached: <reason>' for a transport failure's recorded error."""
    return f"{NOT_REACHED}: {reason(error)}"


#: a search step's transport failure as the window-search and Impact solvers raise it:
#: "<backend> failed on <task>: <the backend's message>" (a refused image count is no such failure)
_FAILED_ON = re.compile(r"(?:^|: )(\S+) failed on (\S+): ")


def transport_errors(errors: list[str] | tuple[str, ...]) -> list[str]:
    """The errors of a run's list that are transport failures (in their order)."""
    return [e for e in errors if _FAILED_ON.search(str(e)) and "refused the request's images" not in str(e)]


def step_reason(error: str) -> str:
    """A step's transport failure, its backend named once: "openai:m failed on aws.decompose:
    openai:m failed after 3 attempt(s): connection failed (...)" -> "aws.decompose: openai:m
    failed after 3 attempt(s): connection failed (...)"."""
    text = " ".join(str(error).split()).rstrip(".")
    return re.sub(r"^(?:localize: )?(\S+) failed on (\S+): (?=\1\b)", r"\2: ", text)


def step_not_reached(error: str) -> str:
    """'not reached: <task>: <reason>' for a search step's transport failure."""
    return f"{NOT_REACHED}: {step_reason(error)}"
