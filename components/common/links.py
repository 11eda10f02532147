"""Links into the app (pure; no gradio): `?tab=<slug>&...` opens a tab, each tab reads its own
parameters (components/<tab>/ links), `present=1` turns presentation mode on."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from urllib.parse import urlencode


def view_link(**params: object) -> str:
    """The query string of a link to a view: keys sorted, values URL-encoded, empty ones left out."""
    kept = {k: _text(v) for k, v in params.items() if v is not None and _text(v) != ""}
    return urlencode(sorted(kept.items()))


def _text(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.0f}" if value.is_integer() else f"{value:.1f}"
    return str(value)


def tab_in_link(params: Mapping[str, str], slugs: Sequence[str],
                own_keys: Mapping[str, Sequence[str]] = {}) -> tuple[str | None, str]:
    """(the tab a link opens, a readable line when its `tab` is not one of `slugs`). Without `tab`,
    the tab whose own parameters the link carries (e.g. `clip` for impact), else none."""
    tab = (params.get("tab") or "").strip().lower()
    if tab:
        if tab in slugs:
            return tab, ""
        return None, f"The link's tab `{tab}` is not one of {', '.join(slugs)}; showing the first tab."
    for slug, keys in own_keys.items():
        if any(params.get(k) for k in keys):
            return slug, ""
    return None, ""
