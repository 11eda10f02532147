"""The timeline and the checklist follow the player while it plays. The page moves the timeline's
playhead itself on every `timeupdate`; it asks the server (the timeline's "click" event with
{played: t}) only when the player leaves the span the checklist shows, at most one request in
flight and one a second. The span travels in the timeline's HTML (`map_html`). Pure; no gradio."""
from __future__ import annotations

import itertools

from components.window_search import view
from components.window_search.types import SearchTrace


def shown_span(trace: SearchTrace | None, playhead: float, selected: int | None, chunk_seconds: float,
               duration: float) -> tuple[float, float]:
    """The stretch of the movie over which the checklist stays right: the shown window's span, or,
    for a chunk without a window, the part of that chunk around the playhead no window covers."""
    cand = view.candidate(trace, selected) if trace is not None and selected is not None else None
    if cand is not None:
        return float(cand.span[0]), float(cand.span[1])
    _, start, end = view.chunk_at(playhead, chunk_seconds, duration)
    for c in (trace.candidates if trace is not None else []):
        a, b = float(c.span[0]), float(c.span[1])
        if b < playhead:
            start = max(start, b)
        elif a > playhead:
            end = min(end, a)
    return float(start), float(end)


_revision = itertools.count(1)


def map_html(span: tuple[float, float]) -> str:
    """A hidden marker inside the timeline telling the page which span the checklist shows. Its
    revision makes every answer a new value, so the page always sees an answer arrive (an
    unchanged timeline would leave it waiting for one)."""
    return (f"<div class='ws-play-map' hidden data-rev='{next(_revision)}' data-shown-start='{span[0]:.2f}' "
            f"data-shown-end='{span[1]:.2f}'></div>")


# Installed once per page (document-level capture listeners: media events do not bubble, and
# gradio may replace the <video> element). A seek the server asked for (data-seek) is waited
# for, so the old time of a player still moving there never sends a request.
PLAYBACK_JS = """
window.__wsPlayTrigger = (data) => trigger('click', data);
if (!window.__wsPlay) {
  const st = window.__wsPlay = {busy: 0, last: 0, timer: null, seekTo: null, sent: 0};
  const tl = () => document.querySelector('#ws-timeline .ws-tl');
  const outside = (t) => {
    const m = document.querySelector('#ws-timeline .ws-play-map');
    return !!m && (t < +m.dataset.shownStart - 0.05 || t > +m.dataset.shownEnd + 0.05);
  };
  const settling = (v) => {
    const s = st.seekTo;
    if (!s) return false;
    if (Math.abs(v.currentTime - s.t) < 1 || Date.now() - s.at > 4000) { st.seekTo = null; return false; }
    return true;
  };
  const mark = (v) => {
    const root = tl(), ph = root && root.querySelector('.ws-playhead'), d = root ? +root.dataset.duration : 0;
    if (!ph || !(d > 0)) return;
    ph.style.left = Math.max(0, Math.min(100, 100 * v.currentTime / d)).toFixed(3) + '%';
    ph.dataset.live = v.currentTime.toFixed(1);
    // the slider follows the player in the page (its value is sent when the player pauses)
    const range = document.querySelector('#ws-scrub input[type=range]');
    if (range && document.activeElement !== range) {
      range.value = v.currentTime;
      range.style.setProperty('--range_progress', (100 * v.currentTime / (+range.max || 1)) + '%');
    }
    const box = document.querySelector('#ws-scrub input[type=number]');
    if (box && document.activeElement !== box) box.value = (Math.round(v.currentTime * 10) / 10).toString();
  };
  const paused = (e) => {
    const v = e.target;
    if (!v || v.tagName !== 'VIDEO' || !v.closest('#ws-movie') || settling(v)) return;
    mark(v);
    st.busy = st.last = Date.now();
    window.__wsPlayTrigger({played: Math.round(v.currentTime * 10) / 10});
  };
  const check = () => {
    st.timer = null;
    const v = document.querySelector('#ws-movie video');
    if (!v || v.seeking || settling(v) || !outside(v.currentTime)) return;
    const now = Date.now();
    const wait = Math.max(st.busy ? st.busy + 5000 - now : 0, st.last + 1000 - now);
    if (wait > 0) { st.timer = setTimeout(check, wait); return; }
    st.busy = st.last = now;
    st.sent += 1;
    window.__wsPlayTrigger({played: Math.round(v.currentTime * 10) / 10});
  };
  const onTime = (e) => {
    const v = e.target;
    if (!v || v.tagName !== 'VIDEO' || !v.closest('#ws-movie')) return;
    if (!settling(v)) mark(v);
    if (!st.timer) check();
  };
  document.addEventListener('timeupdate', onTime, true);
  document.addEventListener('seeked', onTime, true);
  document.addEventListener('pause', paused, true);
}
watch('value', () => {
  const st = window.__wsPlay, root = element.querySelector('.ws-tl[data-seek]');
  st.busy = 0;
  st.seekTo = root ? {t: +root.dataset.seek, at: Date.now()} : null;
});
"""
