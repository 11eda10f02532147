"""The Cloze tab's keys (when no text box has the focus): the right arrow or **n** steps to the
next question, the left arrow or **p** to the previous one (the same as the ◀ ▶ buttons); a letter
key, **a**-**d** or **1**-**4**, presses that letter's button (it answers the question on screen,
or selects the letter when the answer flow is "Select, then Submit") and the page says which key
did what on the line under the letters, so a presenter who has hidden the configuration
(`?present=1`) plays with the keys alone. Keys typed into a text box, and keys with Ctrl / Alt /
Cmd / Shift, are left alone. Until the tab's first view has answered, these keys only say, on that
line, that the question is still on its way. A string of browser code handed to a gr.HTML's
js_on_load; installed once per page."""
from __future__ import annotations

from components.common.page import view_held_js

KEYS_JS = """
if (!window.__clozeKeys) {
  window.__clozeKeys = true;
  const shown = (el) => !!el && el.offsetParent !== null;
  const LETTERS = {a: 'A', b: 'B', c: 'C', d: 'D', 1: 'A', 2: 'B', 3: 'C', 4: 'D'};
  // the line that says what a key did, under the answer row (made once, kept by the page)
  const say = (text) => {
    let note = document.getElementById('cloze-key-note');
    const row = document.getElementById('cloze-answer');
    if (!note && row) {
      note = document.createElement('div');
      note.id = 'cloze-key-note';
      note.setAttribute('role', 'status');
      row.insertAdjacentElement('afterend', note);
    }
    if (note) { note.textContent = text; }
  };
  // a tap or click on the answer row (a person's, not the keys' own) makes the key's line stale
  document.addEventListener('click', (event) => {
    if (event.isTrusted && event.target instanceof Element && event.target.closest('#cloze-answer')) { say(''); }
  }, true);
  // until the tab's first view has answered, a key would race it, as a click would (the explorer's
  // page holds the tab's clicks till then: components/common/page.py, VIEW_WAIT_CSS)
  const held = () => VIEW_HELD;
  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey) { return; }
    if (!shown(document.querySelector('#cloze-question'))) { return; }
    const target = event.target instanceof Element ? event.target : null;
    if (target && target.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]')) { return; }
    const key = (event.key || '').toLowerCase();
    const letter = LETTERS[key];
    if ((letter || ['arrowright', 'arrowleft', 'n', 'p'].includes(key)) && held()) {
      event.preventDefault();
      say('Key ' + event.key.toUpperCase() + ': the question is still on its way; press it again in a moment.');
      return;
    }
    if (letter) {
      const choice = document.querySelector('#cloze-choice-' + letter);
      if (!shown(choice)) { return; }
      event.preventDefault();
      choice.click();
      const confirm = document.querySelector('#cloze-flow input[value="confirm"]');
      say('Key ' + event.key.toUpperCase() + ': ' + (confirm && confirm.checked
        ? letter + ' selected; press Submit.' : 'answered ' + letter + '.'));
      return;
    }
    const next = key === 'arrowright' || key === 'n';
    const back = key === 'arrowleft' || key === 'p';
    if (!next && !back) { return; }
    const button = document.querySelector(next ? '#cloze-next' : '#cloze-prev');
    if (!shown(button)) { return; }
    event.preventDefault();
    say('');
    button.click();
  });
}
""".replace("VIEW_HELD", view_held_js("tab-cloze"))
