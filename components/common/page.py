"""What every page of the explorer shares: opening the tab a link names, and presentation mode
(`?present=1` or the toggle: large type, large media, the Model panel folded away; its CSS
is in theme.py)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import gradio as gr

from components.common.links import tab_in_link


HEAD = """
<script>
window.__setPresent = (on) => {
  document.body.classList.toggle('present', !!on);
  const box = document.querySelector('#app-present input[type=checkbox]');
  if (box && box.checked !== !!on) box.checked = !!on;
};
document.addEventListener('DOMContentLoaded', () => {
  const p = new URLSearchParams(window.location.search).get('present');
  if (p && ['1', 'true', 'yes', 'on'].includes(p.toLowerCase())) window.__setPresent(true);
});
</script>
"""


def presentation_toggle() -> gr.Checkbox:
    """The switch for presentation mode; the mode lives in the page only (a class on <body>)."""
    box = gr.Checkbox(False, label="Presentation mode (large type; also ?present=1)", container=False,
                      elem_id="app-present")
    box.input(None, [box], None, js="(on) => { window.__setPresent(on); }")
    return box


def open_from_link(demo: gr.Blocks, tabs: gr.Tabs, note: gr.Markdown,
                   own_keys: Mapping[str, Sequence[str]]) -> None:
    """On load, select the tab a link names (`?tab=impact`, or a tab's own parameters) and say so
    when the link names no tab of this app. Each tab reads its own parameters itself."""
    slugs = tuple(own_keys)

    def on_load(request: gr.Request):
        params = dict(getattr(request, "query_params", {}) or {})
        tab, problem = tab_in_link(params, slugs, own_keys)
        return gr.Tabs(selected=tab) if tab else gr.skip(), problem

    demo.load(on_load, None, [tabs, note], api_name="open_from_link", show_progress="hidden")
