"""Configurable limits on what visitors may upload (sizes are enforced by gradio's max_file_size)."""
from __future__ import annotations

import os
from pathlib import Path

from components.base.errors import UserError

DEFAULT_MAX_VIDEO_SECONDS = 4 * 3600.0


def max_video_seconds() -> float:
    """APP_MAX_VIDEO_SECONDS (default four hours: any feature film)."""
    raw = os.environ.get("APP_MAX_VIDEO_SECONDS", "").strip()
    try:
        return float(raw) if raw else DEFAULT_MAX_VIDEO_SECONDS
    except ValueError:
        return DEFAULT_MAX_VIDEO_SECONDS


def check_video_duration(path: str | Path, duration: float) -> None:
    """Refuse an uploaded video longer than the configured limit, with the limit in the message."""
    limit = max_video_seconds()
    if duration > limit:
        raise UserError(f"{Path(path).name} is {duration / 60:.1f} min long; uploads are limited to "
                        f"{limit / 60:.0f} min on this server (APP_MAX_VIDEO_SECONDS).")
