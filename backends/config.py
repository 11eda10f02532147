"""Where an OpenAI-compatible server lives, and how to talk to it (config only: imports nothing heavy)."""
from __future__ import annotations

import os
from dataclasses import dataclass

from backends.errors import BackendError

#: how `GenerationParams.thinking` goes on the wire (docs/decisions.md, "Backends"):
#: "auto" picks by base URL and model name; "chat_template_kwargs" (vLLM, SGLang):
#: `{"chat_template_kwargs": {"enable_thinking": bool}}`; "reasoning_effort" (OpenAI reasoning
#: models, Gemini's OpenAI-compatible endpoint); "none": never send a thinking switch
THINKING_CONTROLS = ("auto", "chat_template_kwargs", "reasoning_effort", "none")


def check_thinking_control(value: str) -> str:
    """`value` normalised, or a BackendError naming the choices."""
    control = (value or "auto").strip().lower()
    if control not in THINKING_CONTROLS:
        raise BackendError(f"Unknown thinking control '{value}'; choose one of "
                           f"{', '.join(THINKING_CONTROLS)} (APP_THINKING_CONTROL).")
    return control


@dataclass(frozen=True)
class ApiSettings:
    """Where an OpenAI-compatible server lives. Falls back to OPENAI_BASE_URL / OPENAI_API_KEY."""

    base_url: str | None = None
    api_key: str | None = None
    max_images: int | None = None
    #: seconds one HTTP request may take; None: $APP_API_TIMEOUT_S, else DEFAULT_TIMEOUT_S
    timeout_s: float | None = None
    #: transport retries after the first try, as the openai client the released eval.py uses
    #: (its default 2: a persistent 5xx is sent 3 times per call)
    max_retries: int = 2
    #: one of THINKING_CONTROLS; None: $APP_THINKING_CONTROL, else "auto"
    thinking_control: str | None = None

    def resolved(self) -> ApiSettings:
        """Missing values from the environment (raises BackendError for an unknown thinking
        control)."""
        return ApiSettings(
            base_url=self.base_url or os.environ.get("OPENAI_BASE_URL") or None,
            api_key=self.api_key or os.environ.get("OPENAI_API_KEY") or None,
            max_images=self.max_images if self.max_images is not None
            else _int_env("APP_MAX_IMAGES_PER_REQUEST"),
            timeout_s=check_timeout(self.timeout_s, "the request timeout (--timeout)")
            if self.timeout_s is not None else timeout_from_env(),
            max_retries=self.max_retries,
            thinking_control=check_thinking_control(
                self.thinking_control or os.environ.get("APP_THINKING_CONTROL", "")))

    def __repr__(self) -> str:  # never print the key
        return (f"ApiSettings(base_url={self.base_url!r}, api_key={'***' if self.api_key else None}, "
                f"max_images={self.max_images}, timeout_s={self.timeout_s}, max_retries={self.max_retries}, "
                f"thinking_control={self.thinking_control!r})")


#: seconds one request may take when neither --timeout nor APP_API_TIMEOUT_S says otherwise
DEFAULT_TIMEOUT_S = 120.0
TIMEOUT_ENV = "APP_API_TIMEOUT_S"
#: requests to one server timed out in a row (no answer of any kind between them) after which it is
#: taken as hung: no more requests for a while, every call fails at once with one line naming the
#: server and the timeout. With the defaults a hung server stops a run within 5 minutes
#: (backends/openai_api.py `hung_worst_case_s`; tests/backends/test_hung_server.py)
HUNG_AFTER_TIMEOUTS = 2
#: seconds a hung server is left alone (at least; the request timeout when that is longer)
HUNG_PAUSE_S = 60.0


def check_timeout(value: float, where: str) -> float:
    """`value` if it is a usable request timeout, else a BackendError naming `where`."""
    if not (value > 0) or value == float("inf"):
        raise BackendError(f"{where} must be a number of seconds above 0 (got {value}).")
    return float(value)


def timeout_from_env() -> float:
    """$APP_API_TIMEOUT_S (a BackendError naming it when it is not a positive number), else
    DEFAULT_TIMEOUT_S."""
    text = os.environ.get(TIMEOUT_ENV, "").strip()
    if not text:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        raise BackendError(f"{TIMEOUT_ENV} must be a number of seconds above 0 (got {text!r}).") from None
    return check_timeout(value, TIMEOUT_ENV)


def _int_env(name: str) -> int | None:
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() else None
