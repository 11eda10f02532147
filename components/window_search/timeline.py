"""The Window search timeline as HTML (pure; no gradio): every chunk of the movie as a clickable
block (retrieval rank, verdict, expansion), a time axis, the window / prediction / ground-truth bars
and the playhead. TIMELINE_JS sends clicks and the presentation keys back to the server."""
from __future__ import annotations

from components.window_search.pairs import SearchPair, search_pair
from components.window_search.types import CandidateTrace, SearchTrace

# verdict -> (background, legend label)
VERDICT_STYLE = {
    "accepted": ("#2da44e", "accepted"),
    "selected": ("repeating-linear-gradient(135deg,#d4a72c 0 6px,#f5e0a3 6px 12px)", "selected (fallback)"),
    "chosen": ("#54aeff", "chosen chunk"),           # Movie RAG top-1 / oracle chunk (no verifier)
    "rejected": ("#8c959f", "rejected"),
    "not_inspected": ("#ddf4ff", "ranked, not inspected"),
    "unranked": ("#f3f4f6", "not in the top K"),
}
EXPANDED_BORDER = "2px dashed #0969da"
PLAYHEAD = "#fb8500"
AXIS_STEPS = (10, 30, 60, 120, 300, 600, 900, 1800, 3600)

# Clicks on a chunk and the presentation keys (n / p: next / previous inspected window, space:
# play / pause) go to the server as one "click" event with {rank, start}; attached once per page.
TIMELINE_JS = """
const ranks = () => [...document.querySelectorAll('#ws-timeline [data-inspected]')]
  .map(b => +b.dataset.rank).sort((a, b) => a - b);
element.addEventListener('click', (e) => {
  const block = e.target.closest('[data-start]');
  if (!block) return;
  window.__wsWant = null;
  trigger('click', {rank: block.dataset.rank ? +block.dataset.rank : null, start: +block.dataset.start});
  const stage = document.querySelector('#ws-stage');
  if (stage) stage.scrollIntoView({block: 'nearest'});
});
// a timeline rendered with data-seek moves the player there (once its video can seek)
const seek = () => {
  const tl = element.querySelector('.ws-tl[data-seek]');
  if (!tl) return;
  const t = +tl.dataset.seek;
  let tries = 0;
  const go = () => {
    const v = document.querySelector('#ws-movie video');
    if (v && v.readyState >= 1) { if (Math.abs(v.currentTime - t) > 0.5) v.currentTime = t; return; }
    if (++tries < 100) setTimeout(go, 200);
  };
  go();
};
// n / p: one request at a time; keys pressed meanwhile step from the window last asked for, and
// the newest wish is sent when the answer arrives (gradio may answer two requests out of order)
const ask = (rank) => {
  window.__wsWant = rank;
  if (window.__wsBusy && Date.now() - window.__wsBusy < 5000) return;
  const block = element.querySelector(`.ws-tl [data-rank='${rank}']`);
  window.__wsBusy = Date.now();
  trigger('click', {rank: rank, start: block ? +block.dataset.start : 0});
};
window.__wsAsk = ask;
watch('value', () => {
  const tl = element.querySelector('.ws-tl');
  window.__wsBusy = 0;
  const want = window.__wsWant;
  if (want && tl && +(tl.dataset.selected || 0) !== want) setTimeout(() => ask(want), 100);
  else window.__wsWant = null;
  seek();
});
seek();
if (!window.__wsKeys) {
  window.__wsKeys = true;
  document.addEventListener('keydown', (e) => {
    const tab = document.querySelector('#tab-window-search');
    if (!tab || tab.offsetParent === null || e.ctrlKey || e.metaKey || e.altKey) return;
    const t = e.target;
    if (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    const tl = document.querySelector('#ws-timeline .ws-tl');
    if (e.key === ' ') {
      const v = document.querySelector('#ws-movie video');
      if (!v) return;
      e.preventDefault();
      if (v.paused) v.play(); else v.pause();
    } else if ((e.key === 'n' || e.key === 'p') && tl) {
      const all = ranks();
      if (!all.length) return;
      const cur = window.__wsWant || +(tl.dataset.selected || 0);
      let i = all.indexOf(cur);
      i = i < 0 ? 0 : (e.key === 'n' ? Math.min(all.length - 1, i + 1) : Math.max(0, i - 1));
      // at the first or last window a press asks nothing (an unchanged answer would leave the
      // page waiting and swallow the next presses)
      if (all[i] === cur && +(tl.dataset.selected || 0) === cur) { window.__wsWant = null; return; }
      window.__wsAsk(all[i]);
    }
  });
}
"""


def fmt_t(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def _k(px: float) -> str:
    """A vertical length that presentation mode scales (the page's CSS sets --ws-k)."""
    return f"calc({px:g}px * var(--ws-k, 1))"


def _pct(t: float, duration: float) -> float:
    return max(0.0, min(100.0, 100.0 * t / duration)) if duration > 0 else 0.0


def axis_step(duration: float, most: int = 10) -> int:
    """Seconds between axis ticks: the smallest round step giving at most `most` ticks."""
    for step in AXIS_STEPS:
        if duration / step <= most:
            return step
    return int(-(-duration // most) // 3600 + 1) * 3600


def verdict(cand: CandidateTrace | None) -> str:
    """The timeline's word for a ranked chunk (VERDICT_STYLE keys)."""
    if cand is None:
        return "not_inspected"
    if cand.outcome == "selected":
        return "selected" if cand.steps else "chosen"  # Select's fallback vs RAG / oracle chunk
    return cand.outcome if cand.outcome in VERDICT_STYLE else "not_inspected"


def _expanded(cand: CandidateTrace | None) -> bool:
    if cand is None or cand.final_window is None:
        return False
    c = cand.chunk
    return cand.final_window[0] < c.start - 1e-6 or cand.final_window[1] > c.end + 1e-6


def _chunk_block(i: int, s: float, e: float, duration: float, cand: CandidateTrace | None,
                 rank: int | None, selected: int | None, differs: bool = False) -> str:
    kind = verdict(cand) if rank is not None else "unranked"
    bg = VERDICT_STYLE[kind][0]
    attrs = f" data-chunk='{i}' data-start='{s:.1f}' data-verdict='{kind}'"
    label, title = "", f"chunk {i + 1} · {fmt_t(s)}-{fmt_t(e)} · {VERDICT_STYLE[kind][1]}"
    if rank is not None:
        attrs += f" data-rank='{rank}'"
        label, title = f"#{rank}", f"rank {rank} · " + title
        if differs:  # the two compared models judged this window differently
            attrs += " data-differs='1'"
            label, title = f"#{rank} ≠", title + " · the two models differ here"
        if cand is not None and cand.steps or kind == "chosen":
            attrs += " data-inspected='1'"
    ring = f"box-shadow:0 0 0 3px {PLAYHEAD};z-index:2;" if rank is not None and rank == selected else ""
    return (f"<div class='ws-chunk ws-{kind}'{attrs} title='{title}' style='position:absolute;top:0;"
            f"height:{_k(30)};left:{_pct(s, duration):.3f}%;width:{_pct(e - s, duration):.3f}%;"
            f"background:{bg};border:1px solid #57606a;box-sizing:border-box;cursor:pointer;{ring}"
            f"text-align:center;line-height:{_k(28)};font-weight:bold;color:#111;overflow:hidden'>{label}</div>")


def _expansion_box(cand: CandidateTrace, duration: float) -> str:
    s, e = cand.final_window
    return (f"<div class='ws-expanded' title='rank {cand.rank} expanded to {fmt_t(s)}-{fmt_t(e)}' "
            f"style='position:absolute;top:-3px;height:{_k(36)};left:{_pct(s, duration):.3f}%;"
            f"width:{_pct(e - s, duration):.3f}%;border:{EXPANDED_BORDER};box-sizing:border-box;"
            f"pointer-events:none;z-index:3'></div>")


def _striped(colour: str) -> str:
    """The second model's bars: its colour striped with white."""
    return f"repeating-linear-gradient(90deg,{colour} 0 6px,#ffffff 6px 9px);border:1px solid {colour}"


def _bar(iv: tuple[float, float] | None, top: int, colour: str, name: str, duration: float, *,
         height: int = 9, kind: str = "") -> str:
    if iv is None:
        return ""
    s, e = iv
    kind = kind or name
    return (f"<div class='ws-bar-{kind}' title='{name} {fmt_t(s)}-{fmt_t(e)}' style='position:absolute;"
            f"top:{_k(top)};height:{_k(height)};left:{_pct(s, duration):.3f}%;box-sizing:border-box;"
            f"width:{max(0.4, _pct(e - s, duration)):.3f}%;background:{colour};border-radius:3px'></div>"
            f"<div class='ws-label' style='position:absolute;top:{_k(top - 3)};right:calc(100% + 4px);"
            f"white-space:nowrap;text-align:right;font-size:var(--ws-font, 12px);line-height:1.1;color:#444'>{name}</div>")


def _axis(duration: float, top: int = 84) -> str:
    step = axis_step(duration)
    ticks = []
    for t in range(0, int(duration) + 1, step):
        ticks.append(f"<div class='ws-tick' style='position:absolute;top:0;left:{_pct(t, duration):.3f}%;"
                     f"height:5px;border-left:1px solid #8c959f'></div><div style='position:absolute;top:5px;"
                     f"left:{_pct(t, duration):.3f}%;transform:translateX(-50%);font-size:var(--ws-font, 12px);"
                     f"color:#57606a'>{fmt_t(t)}</div>")
    return (f"<div class='ws-axis' style='position:absolute;top:{_k(top)};left:0;right:0;height:{_k(18)}'>"
            + "".join(ticks) + "</div>")


def _legend(pair: SearchPair | None = None) -> str:
    chips = "".join(f"<span style='background:{bg};padding:0 4px;border:1px solid #d0d7de'>{name}</span> "
                    for bg, name in VERDICT_STYLE.values())
    second = ""
    if pair is not None:
        second = (" · ① the session's model (steers), ② the compared one (striped): "
                  f"{pair.second_backend} · #k ≠: the two differ there")
    return ("<div class='ws-legend' style='font-size:var(--ws-font, 12px);color:#57606a;margin-left:var(--ws-gutter, 50px);"
            f"line-height:1.9'>chunks: {chips}<span style='border:{EXPANDED_BORDER};padding:0 4px'>expanded"
            "</span> · bars: <span style='color:#0969da'>window</span> <span style='color:#bf3989'>"
            f"prediction</span> <span style='color:#1a7f37'>ground truth</span>{second}</div>")


def timeline_html(trace: SearchTrace | None, duration: float, *, n_chunks: int = 0,
                  chunk_seconds: float = 180.0, playhead: float | None = None,
                  selected: int | None = None, seek: bool = False,
                  ground_truth: tuple[float, float] | None = None) -> str:
    """Every chunk as a clickable block (data-start; ranked ones also data-rank), expanded windows
    outlined dashed over their real span, a time axis, the final window, the prediction and the
    ground truth as bars, and the playhead (`seek`: the page moves the player to it). Before any
    run, `ground_truth` (the picked query's) is drawn alone."""
    if duration <= 0:
        return "<div class='ws-tl-empty'>Pick a movie to see its timeline.</div>"
    ranked = {c.index: c for c in (trace.chunks if trace else [])}
    by_rank = {c.rank: c for c in (trace.candidates if trace else [])}
    pair = search_pair(trace) if trace is not None else None
    differs = {p.rank for p in pair.steps if not p.agree} if pair is not None else set()
    extra = 20 if pair is not None else 0  # two more bars: the compared model's window and prediction
    sel = f" data-selected='{selected}'" if selected is not None else ""
    if seek and playhead is not None:
        sel += f" data-seek='{playhead:.1f}'"
    if pair is not None:
        sel += " data-compared='1'"
    parts = [f"<div class='ws-tl'{sel} data-duration='{duration:.1f}' style='position:relative;height:{_k(104 + extra)};"
             "margin:10px 4px 2px var(--ws-gutter, 50px);font-size:var(--ws-chunk-font, 12px)'>"]
    for i in range(n_chunks):
        s, e = i * chunk_seconds, min((i + 1) * chunk_seconds, duration)
        chunk = ranked.get(i)
        rank = chunk.rank if chunk is not None else None
        parts.append(_chunk_block(i, s, e, duration, by_rank.get(rank), rank, selected, rank in differs))
    for cand in by_rank.values():
        if _expanded(cand):
            parts.append(_expansion_box(cand, duration))
    if pair is not None:
        parts += [_bar(trace.window, 38, "#0969da", "window ①", duration, height=8, kind="window"),
                  _bar(pair.second_window, 48, _striped("#0969da"), "window ②", duration, height=8,
                       kind="window-2"),
                  _bar(trace.prediction, 58, "#bf3989", "pred ①", duration, height=8, kind="pred"),
                  _bar(pair.second_prediction, 68, _striped("#bf3989"), "pred ②", duration, height=8,
                       kind="pred-2"),
                  _bar(trace.ground_truth, 78, "#1a7f37", "GT", duration, height=8)]
    elif trace is not None:
        parts += [_bar(trace.window, 38, "#0969da", "window", duration),
                  _bar(trace.prediction, 53, "#bf3989", "pred", duration),
                  _bar(trace.ground_truth, 68, "#1a7f37", "GT", duration)]
    elif ground_truth is not None:
        parts.append(_bar(ground_truth, 68, "#1a7f37", "GT", duration))
    parts.append(_axis(duration, 84 + extra))
    if playhead is not None:
        parts.append(f"<div class='ws-playhead' data-t='{playhead:.1f}' title='playhead {fmt_t(playhead)}' "
                     f"style='position:absolute;top:-6px;height:{_k(90 + extra)};left:{_pct(playhead, duration):.3f}%;"
                     f"width:2px;background:{PLAYHEAD};z-index:4;pointer-events:none'></div>")
    parts.append("</div>")
    parts.append(_legend(pair))
    return "".join(parts)
