"""The explicit admin setting: `APP_ADMIN=1` lets a visitor's edits change the shared files on disk
(e.g. the window-search character memory). Unset (the default, and what a public Space should
keep), every edit stays in the visitor's own session."""
from __future__ import annotations

import os

TRUE = ("1", "true", "yes", "on")


def admin_mode() -> bool:
    """APP_ADMIN is set to 1 / true / yes / on."""
    return os.environ.get("APP_ADMIN", "").strip().lower() in TRUE
