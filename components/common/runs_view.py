"""What every tab's runs panel draws alike (pure HTML): the files not loaded, and the panel's
one-line note while there is nothing else to draw ("reading the run files…")."""
from __future__ import annotations

from collections.abc import Sequence
from html import escape


def refused_html(lines: Sequence[str], css_class: str = "") -> str:
    """The run files not loaded, one line each, folded ("" when there are none)."""
    if not lines:
        return ""
    items = "".join(f"<li>{escape(line)}</li>" for line in lines)
    cls = f" class='{css_class}'" if css_class else ""
    return f"<details{cls}><summary>{len(lines)} run file(s) not loaded</summary><ul>{items}</ul></details>"


def note_html(box: str, text: str, state: str, *, title: str = "") -> str:
    """The panel (class `box`, `data-state`) holding one note; with `title`, the note follows it in
    the panel's summary line (`<box>-summary`, the note in `<box>-note`)."""
    if not title:
        return f"<div class='{box}' data-state='{state}'><p>{escape(text)}</p></div>"
    return (f"<div class='{box}' data-state='{state}'><p class='{box}-summary'><strong>{escape(title)}</strong> "
            f"<span class='{box}-note'>{escape(text)}</span></p></div>")
