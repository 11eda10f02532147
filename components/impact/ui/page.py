"""The Impact tab's browser-side pieces: timeline clicks, the "tab is on screen" signal, the
presentation shortcuts and the copy-link step (strings handed to gradio); the tab's CSS is
ui/style.css."""
from __future__ import annotations

from components.common.page import view_held_js

SHORTCUTS = ("Presentation keys (when no text box has the focus): **.** / **,** next / previous "
             "frame, **space** play / pause the clip.")

# a click on a timeline block, label or tick sends its first frame to Python (gr.EventData.frame)
SEEK_JS = """
element.addEventListener('click', (event) => {
  const el = event.target.closest('[data-frame]');
  if (el) { trigger('click', {frame: parseInt(el.dataset.frame)}); }
});
"""

# Runs when the tab's components are mounted (gradio mounts a tab when it is first opened):
# installs the shortcuts once.
HOOKS_JS = """
if (!window.__impactKeys) {
  window.__impactKeys = true;
  const shown = (el) => !!el && el.offsetParent !== null;
  // until the tab's first view has answered, a step would race it (the view sets the link's frame)
  // as a click would: the explorer's page holds the tab till then (common/page.py, view_held_js)
  const held = () => VIEW_HELD;
  window.impactStep = (delta) => {
    const range = document.querySelector('#impact-frame input[type="range"]');
    if (!shown(range) || held()) { return false; }
    const now = Math.round(Number(range.value) || 1);
    const next = Math.min(Number(range.max), Math.max(Number(range.min), now + delta));
    range.value = String(next);
    range.dispatchEvent(new Event('input', {bubbles: true}));
    range.dispatchEvent(new Event('change', {bubbles: true}));
    return true;
  };
  window.impactPlay = () => {
    const video = document.querySelector('#impact-video video');
    if (!shown(video) || held()) { return false; }
    if (video.paused) { video.play().catch(() => {}); } else { video.pause(); }
    return true;
  };
  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    const target = event.target instanceof Element ? event.target : null;
    const typing = target && target.closest(
      'textarea, select, [contenteditable=""], [contenteditable="true"], input:not([type="range"])');
    if (typing) { return; }
    let done = false;
    if (event.key === '.') { done = window.impactStep(1); }
    else if (event.key === ',') { done = window.impactStep(-1); }
    else if (event.key === ' ' && !(target && target.closest('button, a, [role="tab"]'))) {
      done = window.impactPlay();
    }
    if (done) { event.preventDefault(); }
  });
}
""".replace("VIEW_HELD", view_held_js("tab-impact"))

# after Python built the link's query string: prefix this page's address, copy it, show it
COPY_JS = """
(query) => {
  if (!query || query.startsWith('http')) return query;
  const url = window.location.origin + window.location.pathname + '?' + query;
  try { navigator.clipboard.writeText(url).catch(() => {}); } catch (error) { /* not a secure page */ }
  return url;
}
"""

# the page-load view has arrived (the tab may still be closed): a mark for tests and scripts, set
# once the page shows it (the clip box holds its clip: the tab, built before the view arrives on
# its own links, draws the values a frame or more after the event ends; at most ~2 s of frames)
READY_JS = """() => { let n = 0; const mark = () => { const box = document.querySelector('#impact-clip input');
  if ((box && box.value) || ++n > 120) document.documentElement.dataset.impactReady = '1';
  else requestAnimationFrame(mark); }; requestAnimationFrame(mark); }"""

STEP_BACK_JS = "() => { window.impactStep && window.impactStep(-1); }"
STEP_ON_JS = "() => { window.impactStep && window.impactStep(1); }"

