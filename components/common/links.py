"""Links into the app (pure; no gradio): `?tab=<slug>&...` opens a tab, each tab reads its own
parameters (components/<tab>/ links), `present=1` turns presentation mode on."""
from __future__ import annotations

from urllib.parse import urlencode


def view_link(**params: object) -> str:
    """The query string of a link to a view: keys sorted, values URL-encoded, empty ones left out."""
    kept = {k: _text(v) for k, v in params.items() if v is not None and _text(v) != ""}
    return urlencode(sorted(kept.items()))


def _text(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.0f}" if value.is_integer() else f"{value:.1f}"
    return str(value)
