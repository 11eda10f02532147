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
    timeout_s: float = 120.0
    max_retries: int = 3
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
            timeout_s=self.timeout_s, max_retries=self.max_retries,
            thinking_control=check_thinking_control(
                self.thinking_control or os.environ.get("APP_THINKING_CONTROL", "")))

    def __repr__(self) -> str:  # never print the key
        return (f"ApiSettings(base_url={self.base_url!r}, api_key={'***' if self.api_key else None}, "
                f"max_images={self.max_images}, timeout_s={self.timeout_s}, max_retries={self.max_retries}, "
                f"thinking_control={self.thinking_control!r})")


def _int_env(name: str) -> int | None:
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() else None
