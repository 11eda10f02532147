"""Where an OpenAI-compatible server lives, and how to talk to it (config only: imports nothing heavy)."""
from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True)
class ApiSettings:
    """Where an OpenAI-compatible server lives. Falls back to OPENAI_BASE_URL / OPENAI_API_KEY."""

    base_url: str | None = None
    api_key: str | None = None
    max_images: int | None = None
    timeout_s: float = 120.0
    max_retries: int = 3

    def resolved(self) -> ApiSettings:
        return ApiSettings(
            base_url=self.base_url or os.environ.get("OPENAI_BASE_URL") or None,
            api_key=self.api_key or os.environ.get("OPENAI_API_KEY") or None,
            max_images=self.max_images if self.max_images is not None
            else _int_env("APP_MAX_IMAGES_PER_REQUEST"),
            timeout_s=self.timeout_s, max_retries=self.max_retries)

    def __repr__(self) -> str:  # never print the key
        return (f"ApiSettings(base_url={self.base_url!r}, api_key={'***' if self.api_key else None}, "
                f"max_images={self.max_images}, timeout_s={self.timeout_s}, max_retries={self.max_retries})")


def _int_env(name: str) -> int | None:
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() else None
