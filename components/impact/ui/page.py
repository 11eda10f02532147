"""The Impact tab's browser-side pieces: timeline clicks, the "tab is on screen" signal, the
presentation shortcuts, the copy-link step and the tab's CSS (strings handed to gradio)."""
from __future__ import annotations

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
  window.impactStep = (delta) => {
    const range = document.querySelector('#impact-frame input[type="range"]');
    if (!shown(range)) { return false; }
    const now = Math.round(Number(range.value) || 1);
    const next = Math.min(Number(range.max), Math.max(Number(range.min), now + delta));
    range.value = String(next);
    range.dispatchEvent(new Event('input', {bubbles: true}));
    range.dispatchEvent(new Event('change', {bubbles: true}));
    return true;
  };
  window.impactPlay = () => {
    const video = document.querySelector('#impact-video video');
    if (!shown(video)) { return false; }
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
"""

# the clip and frame shown, as the query string of a link to them (Copy link's, made in the page):
# the tab's address box, which the page puts in the address bar (components/common/page.py)
ADDRESS_JS = """
(clip, frame) => {
  const params = new URLSearchParams({tab: 'impact'});
  // the frame the page shows: the clip's change of an answer that sets both can carry the frame
  // box's value from before that answer (a deep link's frame=70 written as frame=1 after it)
  const box = document.querySelector('#impact-frame input[type="number"]');
  const f = Number(box && box.value !== '' ? box.value : frame);
  if (clip) params.set('clip', clip);
  if (clip && Number.isInteger(f) && f >= 1) params.set('frame', String(f));
  params.sort();
  return params.toString();
}
"""

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

# injected into <head> by the hooks component (one style sheet for the tab)
CSS = """
<style id="impact-style">
#impact-steps { flex-wrap: nowrap; gap: 6px; align-items: end; }
#impact-link textarea, #impact-link input { font-size: 12px; }
#impact-hooks { display: none; }
@media (max-width: 640px) {
  #impact-controls { flex-wrap: wrap; }
  #impact-controls > * { min-width: 44% !important; flex: 1 1 44% !important; }
  #impact-controls > .form { min-width: 100% !important; flex-basis: 100% !important; }
  #impact-steps button { min-height: 44px; font-size: 16px; }
  #impact-body3d { height: 340px !important; }
  .impact-timeline-body { font-size: 12px; }
}
</style>
"""
