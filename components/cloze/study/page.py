"""The study page's style and its small scripts: the clock, which runs in the browser (no request
per second); the letters' state, applied from the marks the server sends (so an answer sends
values only, never component properties, which gradio would rebuild per request); the timing
stamp (when the question's media are all shown, and when it is answered: timing.py); and, on a
phone, the frames image (and the practice question's) shown as its six strips one under another
at twice the size, so the labels drawn in it (media.py) stay 12 px and more on the screen."""
from __future__ import annotations

CSS = """
#study-root {max-width: 1400px; margin: 0 auto; gap: 6px;}
#study-frames img {max-height: 56vh; width: 100%; object-fit: contain;}
#study-videos video {max-height: 23vh;}
/* a clip's name (BEGINNING, END, A-D) on a chip over its video: gradio's label is small grey text
   with no background, lost over the picture */
#study-videos [data-testid="block-label"] {z-index: 5; background: #ffffff !important; color: #1f2533 !important;
  font-size: 16px !important; font-weight: 700; border: 1px solid #d3d8e3 !important; border-radius: 4px;
  padding: 1px 8px !important;}
#study-videos [data-testid="block-label"] svg, #study-videos [data-testid="block-label"] > span:has(svg) {display: none;}
#study-letters button {min-height: 46px; font-size: 1.25em; font-weight: 600;}
#study-letters button.study-marked {outline: 3px solid var(--color-accent); outline-offset: -3px;
  background: var(--button-primary-background-fill); color: var(--button-primary-text-color);}
#study-letters button:disabled {opacity: 0.55; cursor: not-allowed;}
#study-letters.study-locked #study-change {display: inline-flex !important;}
#study-change {display: none !important;}
#study-progress, #study-feedback {min-height: 1.4em;}
#study-progress .study-message {font-weight: 600;}
#study-practice-frames img {max-height: 40vh; width: 100%; object-fit: contain;}
#study-practice-letters button {min-height: 42px; font-size: 1.15em; font-weight: 600;}
#study-progress p {margin: 0;}
/* the one message line (app.py): red, held at the top of the screen while it says something */
#study-message {position: sticky; top: 0; z-index: 30; background: var(--background-fill-primary);}
#study-message p {color: #b42318; font-weight: 600; margin: 0; font-size: 1.05em;}
#study-message:not(:has(p)), #study-message:has(p:empty) {display: none !important;}
.study-nav-grid {display: flex; flex-wrap: wrap; gap: 3px; max-height: 5.2em; overflow-y: auto;}
.study-q {min-width: 2.2em; height: 1.9em; box-sizing: border-box; display: inline-flex; align-items: center;
  justify-content: center; line-height: 1; padding: 0 4px; border: 1px solid var(--border-color-primary);
  border-radius: 4px; background: var(--background-fill-primary); cursor: pointer; font-size: max(12px, 0.85em);}
.study-q.answered {background: var(--neutral-300); color: var(--neutral-900);}
.study-q[aria-current="true"] {outline: 2px solid var(--color-accent);}
.study-nav-legend {font-size: max(12px, 0.8em); margin: 2px 0 0 0;}
.study-nav-legend .study-q {display: inline-block; min-width: 1.2em; height: 0.9em; cursor: default;}
footer {display: none !important;}
.study-split {display: none;}
@media (max-width: 600px) {
  #study-frames img {max-height: 44vh;}
  #study-frames:has(> .study-split[data-src]) .image-container,
  #study-practice-frames:has(> .study-split[data-src]) .image-container {display: none !important;}
  .study-split[data-src] {display: grid; gap: 3px; width: 100%;}
  .study-piece {width: 100%; background-size: 200% 300%; background-repeat: no-repeat;}
  #study-videos video {max-height: 22vh;}
  /* the four candidates two by two: four in a row left each ~70 px wide */
  #study-videos > .row:has(#study-cand-A) {flex-wrap: wrap !important;}
  #study-videos > .row:has(#study-cand-A) > * {flex: 1 1 calc(50% - 8px) !important; min-width: 0 !important;}
  #study-videos [data-testid="block-label"] {font-size: 14px !important; padding: 0 6px !important;}
  #study-letters button {min-height: 54px; min-width: 56px !important;}
}
"""

HEAD = """
<script>
(() => {
  const pad = (n) => String(n).padStart(2, '0');
  const mmss = (s) => pad(Math.floor(Math.max(0, s) / 60)) + ':' + pad(Math.floor(Math.max(0, s) % 60));
  let clockKey = null, shownAt = 0, marksKey = null;
  function tickClock() {
    const el = document.querySelector('#study-progress .study-clock');
    if (!el) return;
    if (el.dataset.key !== clockKey) {
      clockKey = el.dataset.key;
      shownAt = performance.now() / 1000 - parseFloat(el.dataset.elapsed || '0');
    }
    const elapsed = performance.now() / 1000 - shownAt, limit = parseFloat(el.dataset.limit || '0');
    const text = !limit ? mmss(elapsed)
      : (limit - elapsed > 0 ? mmss(limit - elapsed) + ' left' : 'time is up - please answer now');
    // written only when it changes: the observer below sees this write, and an unconditional one
    // would wake it again forever
    if (el.textContent !== text) el.textContent = text;
  }
  function applyMarks() {
    const m = document.querySelector('#study-marks .study-marks');
    if (!m || m.dataset.key === marksKey) return;
    marksKey = m.dataset.key;
    const locked = m.dataset.locked === '1';
    for (const x of ['A', 'B', 'C', 'D']) {
      const b = document.querySelector('#study-choice-' + x);
      if (!b) continue;
      b.classList.toggle('study-marked', x === m.dataset.mark);
      b.setAttribute('aria-pressed', x === m.dataset.mark ? 'true' : 'false');
      b.disabled = locked;
    }
    const submit = document.querySelector('#study-submit');
    if (submit) submit.disabled = locked;
    document.querySelector('#study-letters')?.classList.toggle('study-locked', locked);
  }
  // The frames image is two columns of three strips (BEGINNING | END, A | B, C | D, media.py). On a
  // phone its six strips are shown one under another, each the full width: the same image,
  // cropped by CSS, so nothing more is fetched.
  function splitFrames() { for (const id of ['#study-frames', '#study-practice-frames']) splitOne(id); }
  function splitOne(id) {
    const host = document.querySelector(id), img = host?.querySelector('img');
    if (!img) return;
    let split = host.querySelector(':scope > .study-split');
    if (!split) {
      split = document.createElement('div');
      split.className = 'study-split';
      for (let k = 0; k < 6; k++) {
        const piece = document.createElement('div');
        piece.className = 'study-piece';
        piece.setAttribute('role', 'img');
        piece.setAttribute('aria-label', ['BEGINNING', 'END', 'A', 'B', 'C', 'D'][k]);
        split.appendChild(piece);
      }
      host.appendChild(split);   // beside gradio's image container, which it hides
    }
    if (split.dataset.src === img.src) return;
    const apply = () => {
      if (!img.naturalWidth) return;
      const ratio = (img.naturalWidth / 2) / (img.naturalHeight / 3);
      [...split.children].forEach((piece, k) => {
        piece.style.backgroundImage = 'url("' + img.src + '")';
        piece.style.backgroundPosition = (k % 2) * 100 + '% ' + Math.floor(k / 2) * 50 + '%';
        piece.style.aspectRatio = String(ratio);
      });
      split.dataset.src = img.src;
    };
    if (img.complete) apply(); else img.addEventListener('load', apply, {once: true});
  }
  // Fair timing: a question's clock starts when its media (named in the marks) are all shown:
  // the frames image decoded, or every player's first frame ready. Loading is measured apart.
  let qKey = null, arrived = 0, shown = null, names = [], poll = null;
  function mediaShown() {
    const els = [...document.querySelectorAll('#study-root img, #study-root video')];
    return names.every((n) => els.some((e) => {
      if (!(e.currentSrc || e.src || '').includes(n)) return false;
      return e.tagName === 'IMG' ? (e.complete && e.naturalWidth > 0) : e.readyState >= 2;
    }));
  }
  function trackQuestion() {
    const m = document.querySelector('#study-marks .study-marks');
    if (!m) return;
    if (m.dataset.q !== qKey) {
      qKey = m.dataset.q; arrived = performance.now(); shown = null;
      names = (m.dataset.media || '').split(',').filter(Boolean);
    }
    if (shown === null && mediaShown()) shown = performance.now();
    if (shown === null && poll === null) poll = setInterval(trackQuestion, 50);
    if (shown !== null && poll !== null) { clearInterval(poll); poll = null; }
  }
  window.studyStamp = () => {
    trackQuestion();
    const now = performance.now();
    return JSON.stringify({key: qKey, load_ms: shown === null ? null : shown - arrived,
                           think_ms: shown === null ? null : now - shown});
  };
  for (const kind of ['load', 'loadeddata', 'canplay']) document.addEventListener(kind, trackQuestion, true);
  setInterval(tickClock, 1000);
  new MutationObserver(() => { applyMarks(); tickClock(); splitFrames(); trackQuestion(); })
    .observe(document.documentElement, {childList: true, subtree: true});
})();
</script>
"""

# the event's inputs as given, the last one replaced by the page's timing stamp
STAMP = "({args}) => [{keep}, window.studyStamp ? window.studyStamp() : '']"
# the invitation's token is kept (encrypted) in the browser once the page has started: take it out
# of the address bar, so a screenshot or a copied address does not carry it
STRIP_INVITE = ("() => { const u = new URL(location.href); if (u.searchParams.has('invite')) { "
                "u.searchParams.delete('invite'); history.replaceState(null, '', u.pathname + u.search + u.hash); } }")
# the next question from its top: the page's own top, or, inside a Space's frame (which grows to
# its content, so the outer page scrolls), the study itself brought into the outer page's view
TOP = ("() => { window.scrollTo({top: 0, behavior: 'instant'}); "
       "if (window.top !== window) document.querySelector('#study-root')?.scrollIntoView(); }")
PLAY_ALL = ("() => { const vs = [...document.querySelectorAll('#study-videos video')]; "
            "vs.forEach(v => { v.currentTime = 0; }); vs.forEach(v => v.play()); }")
# a click on a question number sends its index to Python (gr.EventData .q)
NAVIGATOR_JS = """
element.addEventListener('click', (event) => {
  const el = event.target.closest('[data-q]');
  if (el && el.closest('.study-nav-grid')) { trigger('click', {q: parseInt(el.dataset.q)}); }
});
"""
