"""What every page of the explorer shares: the one-line header (name, tabs, model badge,
presentation switch), opening the tab a link names, the address that follows the view,
presentation mode, and a tab holding its clicks until its first view has answered.

The address is the view: each tab writes the query string of what it shows (the same link its
"Copy link" makes) into a hidden box of its own, from the server's answer to the event that
changed the view (components/common/ui.py, TabEvents' `address`); the page puts the shown tab's
one into the address bar with `history.replaceState` (no reload, no new history entry), and again
when the visitor switches tab. A reload or a copied address so opens what was on screen. Each
page keeps its own: nothing of it is shared between visitors.

Presentation mode is a class on <body> (its CSS: theme.py for what every tab shares, each tab's
ui/style.css for its own): large media and type, the configuration hidden. A screen under 640 px
wide (a phone) keeps the normal layout, with one line at the top saying why. `?present=1` turns it on from a link (`present=0` off); the switch turns it
on and off by hand; either is remembered by the browser (localStorage), so it stays on across the
tabs and a reload. The mode lives in the page only: the server never knows it.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import gradio as gr

PRESENT_KEY = "vbe-present"

#: what every page's launch() is given. gradio's run history (6.x) keeps each event's inputs and
#: outputs in the visitor's localStorage, up to 100 runs, and re-reads, re-parses and rewrites all
#: of it several times per event: on these pages that was ~70 ms of every click and grew with use.
#: It would also keep a study's questions in the annotator's browser and offer them at
#: /gradio_api/runs, so no page of this app records one.
LAUNCH_OPTIONS = {"run_history": False}
# The head script may run before or after DOMContentLoaded (gradio inserts it when its app
# starts), so it acts at once and again when the body exists.
HEAD = """
<script>
(() => {
  const KEY = 'PRESENT_KEY';
  const fromLink = () => {
    const p = new URLSearchParams(window.location.search).get('present');
    if (p === null) return null;
    return ['1', 'true', 'yes', 'on'].includes(p.toLowerCase());
  };
  window.__presentWanted = () => {
    const link = fromLink();
    if (link !== null) { try { localStorage.setItem(KEY, link ? '1' : '0'); } catch (e) {} return link; }
    try { return localStorage.getItem(KEY) === '1'; } catch (e) { return false; }
  };
  // a screen narrower than NARROW px keeps the normal layout: presentation's large clips and type
  // do not fit a phone; one line at the top of the page says so (the wish is kept: the switch,
  // the address and a wider window present)
  const NARROW = 640;
  let wanted = false;
  const apply = () => {
    if (!document.body) return;
    const narrow = wanted && window.innerWidth < NARROW;
    document.body.classList.toggle('present', wanted && !narrow);
    let note = document.getElementById('present-fallback');
    if (narrow && !note) {
      note = document.createElement('div');
      note.id = 'present-fallback';
      note.setAttribute('role', 'status');
      document.body.prepend(note);
    }
    if (note) {
      note.hidden = !narrow;
      note.textContent = narrow ? 'Presentation mode needs a screen at least ' + NARROW + ' px wide (this one is '
        + window.innerWidth + ' px): the normal layout is shown.' : '';
    }
  };
  window.addEventListener('resize', apply);
  window.__setPresent = (on) => {
    on = !!on;
    wanted = on;
    try { localStorage.setItem(KEY, on ? '1' : '0'); } catch (e) {}
    apply();
    if (!document.body) document.addEventListener('DOMContentLoaded', apply, {once: true});
    const params = new URLSearchParams(window.location.search);
    if ((params.get('present') === '1') !== on) {
      if (on) params.set('present', '1'); else params.delete('present');
      put(params);
    }
    return on;
  };
  // the address bar: the query string of each tab's view, the shown tab's one in the bar
  const views = {};
  const put = (params) => {
    params.sort();
    const search = params.toString();
    const url = window.location.pathname + (search ? '?' + search : '') + window.location.hash;
    if (url !== window.location.pathname + window.location.search + window.location.hash) {
      try { history.replaceState(history.state, '', url); } catch (e) {}
    }
  };
  const shown = (slug) => {
    const el = document.getElementById('tab-' + slug);
    return !!el && el.offsetParent !== null;
  };
  let last = 0, timer = null, queued = null;
  const write = (query) => {   // at most one write per 200 ms (a playing clip moves its frame)
    queued = query;
    if (timer) return;
    timer = setTimeout(() => {
      timer = null; last = Date.now();
      const params = new URLSearchParams(queued);
      for (const [k, v] of new URLSearchParams(window.location.search)) {
        if (k.startsWith('__')) params.set(k, v);   // gradio's own (__theme)
      }
      if (wanted) params.set('present', '1');   // kept on a phone too (the layout fell back)
      put(params);
    }, Math.max(0, last + 200 - Date.now()));
  };
  // (slug, query): the tab's view changed; (slug): the visitor switched to the tab
  window.__viewAddress = (slug, query) => {
    if (query) views[slug] = query;
    if (views[slug] && (query === undefined || shown(slug))) write(views[slug]);
  };
  window.__setPresent(window.__presentWanted());
  // a dropdown's value cut with "…" (theme.py) shows whole as the box's tooltip
  document.addEventListener('pointerover', (e) => {
    const box = e.target;
    if (box instanceof HTMLInputElement && box.getAttribute('role') === 'combobox') box.title = box.value;
  }, true);
})();
</script>
""".replace("PRESENT_KEY", PRESENT_KEY)


# The tab a link shows is the one gradio mounts as the page starts: this head script, run before
# gradio builds the page from its configuration (window.gradio_config, embedded in the page),
# selects it in the Tabs' configuration. gradio mounts only the selected tab's components, so a
# link to Cloze or Impact never builds the window-search tab first. The rule: the `tab` parameter,
# else the first tab whose own parameters the link carries (the last value of a repeated
# parameter, as the server reads it). A link naming no tab of the app leaves the first tab, and one
# line at the top of the page says why. The page sends no request for any of it.
LINK_TAB_JS = """
<script>
(() => {
  const KEYS = OWN_KEYS;
  const params = new URLSearchParams(window.location.search);
  const value = (k) => { const all = params.getAll(k); return all.length ? all[all.length - 1] : ''; };
  const asked = value('tab').trim().toLowerCase();
  const slug = asked ? (Object.hasOwn(KEYS, asked) ? asked : null)
                     : Object.keys(KEYS).find(s => KEYS[s].some(k => value(k))) || null;
  if (asked && !slug) {
    const say = () => {
      const note = document.createElement('div');
      note.id = 'link-note';
      note.setAttribute('role', 'status');
      note.textContent = "⚠ The link's tab “" + asked + "” is not one of "
        + Object.keys(KEYS).join(', ') + '; showing the first tab.';
      document.body.prepend(note);
    };
    if (document.body) say(); else document.addEventListener('DOMContentLoaded', say, {once: true});
  }
  const cfg = window.gradio_config;
  const tabs = cfg && (cfg.components || []).find(c => c.type === 'tabs' && c.props && c.props.elem_id === 'app-tabs');
  if (tabs && slug) tabs.props.selected = slug;
})();
</script>
"""


def link_tab_head(own_keys: Mapping[str, Sequence[str]]) -> str:
    """The page head's script that mounts the tab a link shows first (the tabs `own_keys` names,
    slug -> its link parameters, in order). launch() adds it to HEAD."""
    return LINK_TAB_JS.replace("OWN_KEYS", json.dumps({slug: list(keys) for slug, keys in own_keys.items()}))


def presentation_toggle() -> gr.Checkbox:
    """The header's switch. On page load it shows what the link or the browser remembers."""
    box = gr.Checkbox(False, label="Present", container=False, elem_id="app-present",
                      elem_classes=["header-toggle"])
    box.input(None, [box], None, js="(on) => { window.__setPresent(on); }")
    return box


def sync_presentation(demo: gr.Blocks, box: gr.Checkbox) -> None:
    demo.load(None, None, [box], js="() => window.__setPresent(window.__presentWanted())")


def address_box(slug: str) -> gr.Textbox:
    """A tab's hidden address box: the query string of the view it shows, kept in the page (in
    the DOM, so that its change reaches the page's script even while the tab is not shown)."""
    return gr.Textbox("", visible="hidden", elem_id=f"address-{slug}", container=False,
                      elem_classes=["view-address"])


def follow_view(slug: str, tab: gr.Tab, box: gr.Textbox) -> None:
    """The address bar shows the tab's view whenever its box changes while the tab is shown, and
    when the visitor switches to the tab (both in the page alone: no request)."""
    box.change(None, [box], None, js=f"(q) => {{ window.__viewAddress('{slug}', q); }}", queue=False)
    tab.select(None, None, None, js=f"() => {{ window.__viewAddress('{slug}'); }}", queue=False)


# -- a tab takes no click before its first view ------------------------------------------------------
# A click sent before the tab's first view has answered races it, and the view, answering last,
# overwrites what the click did (on a slow server a Cloze mode picked at once came back as
# Practice). So until then the tab takes no click (its children let the pointer through), shows
# the busy cursor and, past 0.4 s (a slow server, never a normal load), dims.
VIEW_WAIT_CSS = """
html:not([data-drawn~="{id}"]) #{id} {{cursor: progress}}
html:not([data-drawn~="{id}"]) #{id} * {{pointer-events: none}}
html:not([data-drawn~="{id}"]) #{id} > * {{animation: vbe-view-wait 0s .4s forwards}}
"""
VIEW_WAIT_KEYFRAMES = "@keyframes vbe-view-wait {to {opacity: .55}}"


def view_wait_css(elem_ids: Sequence[str]) -> str:
    """The page's CSS holding each tab (by its element id) until `view_drawn_js` marks it drawn."""
    if not elem_ids:
        return ""
    return "\n".join([VIEW_WAIT_KEYFRAMES, *(VIEW_WAIT_CSS.format(id=i) for i in elem_ids)])


def view_drawn_js(elem_id: str) -> str:
    """Marks the page once the tab `elem_id`'s first view has answered (`<html data-drawn>`, a
    space-separated list: the mark stays when gradio draws the tab's element again)."""
    return ("() => { const d = document.documentElement.dataset; "
            "const drawn = new Set((d.drawn || '').split(' ').filter(Boolean)); "
            f"drawn.add({json.dumps(elem_id)}); d.drawn = [...drawn].join(' '); }}")


def view_held_js(elem_id: str) -> str:
    """A browser expression, true while the tab `elem_id` is on the page and its first view has not
    answered (`view_drawn_js` not yet run): for a tab's keys, which click in script past the CSS.
    A page without the tab (the tab on a page of its own) is never held."""
    return (f"(!!document.getElementById({json.dumps(elem_id)}) && "
            f"!(document.documentElement.dataset.drawn || '').split(' ').includes({json.dumps(elem_id)}))")
