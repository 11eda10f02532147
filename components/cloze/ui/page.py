"""The Cloze tab's keys, for a presenter who has hidden the configuration (`?present=1`): the
right arrow or **n** steps to the next question, the left arrow or **p** to the previous one (the
same as the ◀ ▶ buttons). Keys typed into a text box, and keys with Ctrl / Alt / Cmd, are left
alone. A string of browser code handed to a gr.HTML's js_on_load; installed once per page."""
from __future__ import annotations

KEYS_JS = """
if (!window.__clozeKeys) {
  window.__clozeKeys = true;
  const shown = (el) => !!el && el.offsetParent !== null;
  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey) { return; }
    if (!shown(document.querySelector('#cloze-question'))) { return; }
    const target = event.target instanceof Element ? event.target : null;
    if (target && target.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]')) { return; }
    const next = event.key === 'ArrowRight' || event.key === 'n';
    const back = event.key === 'ArrowLeft' || event.key === 'p';
    if (!next && !back) { return; }
    const button = document.querySelector(next ? '#cloze-next' : '#cloze-prev');
    if (!shown(button)) { return; }
    event.preventDefault();
    button.click();
  });
}
"""
