"""Issue 38, item 13: what the study page's browser keeps of an invitation. gradio's BrowserState
encrypts its value with a key it hands to every visitor in /config, so a stranger holding the
stored copy (a shared computer, a synced profile, a leaked browser profile) decrypts it with what
the server gives anyone. The copy must reveal nothing of the token: here the stranger does exactly
that (the page's AES-CBC with CryptoJS's OpenSSL key derivation, key from /config) and finds a
handle sealed with a key the server never sends, and no route open to a stranger holds that key."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import urllib.request

import pytest

from components.cloze.study import access
from components.cloze.study import handlers as h
from components.cloze.study import store as store_mod
from components.cloze.study.app import STORAGE_KEY, launch_study
from tests.cloze.test_study_flow import make_study
from tests.helpers.live_app import free_port

#: what a stranger can fetch without any credential
OPEN_ROUTES = ("/", "/config", "/gradio_api/info", "/gradio_api/app_id", "/gradio_api/user",
               "/gradio_api/login_check", "/theme.css")


@pytest.fixture(scope="module")
def served(cloze_examples, tmp_path_factory):
    data = make_study(cloze_examples, tmp_path_factory.mktemp("study-copy"), display="frames",
                      access="invite", practice=False)
    os.environ.pop("APP_STUDY", None)
    os.environ.pop("APP_STUDY_SESSION_KEY", None)
    store_mod.forget_stores()
    demo = launch_study(data, port=free_port(), prevent_thread_lock=True)
    try:
        yield demo.local_url.rstrip("/"), data
    finally:
        demo.close()


def fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=30) as reply:
            return reply.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:   # a refusal's body is what the stranger gets
        return exc.read().decode("utf-8", "replace")


def evp_bytes_to_key(passphrase: bytes, salt: bytes, size: int = 48) -> bytes:
    """OpenSSL's EVP_BytesToKey with MD5, one round: CryptoJS's key derivation for a passphrase."""
    out, block = b"", b""
    while len(out) < size:
        block = hashlib.md5(block + passphrase + salt).digest()
        out += block
    return out[:size]


def stranger_decrypts(page, stored: str, secret: str) -> str:
    """The page's BrowserState copy opened with the secret from /config, as gradio's page does it
    (CryptoJS AES, passphrase = hex SHA-256 of the secret; the AES itself run by the browser's
    WebCrypto)."""
    _iv, ciphertext = stored.split(":", 1)
    raw = base64.b64decode(ciphertext)
    assert raw[:8] == b"Salted__"
    derived = evp_bytes_to_key(hashlib.sha256(secret.encode()).hexdigest().encode(), raw[8:16])
    return page.evaluate(
        """async ([key, iv, data]) => {
             const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
             const k = await crypto.subtle.importKey('raw', bytes(key), 'AES-CBC', false, ['decrypt']);
             const plain = await crypto.subtle.decrypt({name: 'AES-CBC', iv: bytes(iv)}, k, bytes(data));
             return new TextDecoder().decode(plain);
           }""",
        [base64.b64encode(derived[:32]).decode(), base64.b64encode(derived[32:]).decode(),
         base64.b64encode(raw[16:]).decode()])


def test_nothing_a_stranger_can_fetch_recovers_the_token_from_the_browsers_copy(browser, served):
    url, data = served
    cfg = h.Study(str(data)).config
    token = access.invite(cfg, ["ann1"])["ann1"]
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = context.new_page()
        page.set_default_timeout(60_000)
        page.goto(access.invite_link(url, token), wait_until="load", timeout=120_000)
        page.wait_for_function("() => (document.querySelector('#study-progress')?.innerText || '')"
                               ".includes('ann1 · question')", timeout=120_000)
        page.wait_for_function(f"() => localStorage.getItem('{STORAGE_KEY}') !== null")
        stored = page.evaluate(f"() => localStorage.getItem('{STORAGE_KEY}')")
        assert token not in stored

        opened = {route: fetch(url + route) for route in OPEN_ROUTES}
        config = json.loads(opened["/config"])
        secret = next(c["props"]["secret"] for c in config["components"] if c.get("type") == "browserstate")
        plain = stranger_decrypts(page, stored, secret)          # the page's encryption hides nothing...
        # ...and what it hides is no token, no hash of one (the invitation file's), nothing to undo
        assert token not in plain and hashlib.sha256(token.encode()).hexdigest() not in plain
        kept = json.loads(plain)
        assert set(kept) == {"session"} and len(kept["session"]) == 64, kept
        server_key = json.loads((access.access_dir(cfg) / "session.key").read_text())["key"]
        for route, body in opened.items():
            assert server_key not in body and token not in body, route
            assert hashlib.sha256(token.encode()).hexdigest() not in body, route

        # the copy still does its job: the annotator comes back without the link
        page.goto(url + "/", wait_until="load")
        page.wait_for_function("() => (document.querySelector('#study-progress')?.innerText || '')"
                               ".includes('ann1 · question')", timeout=120_000)
        # a stranger's browser given that copy, with the invitation renewed: opens nothing
        access.invite(cfg, ["ann1"], renew=True)
        page.goto(url + "/", wait_until="load")
        page.wait_for_function("() => (document.querySelector('#study-progress')?.innerText || '')"
                               ".includes('invitation')", timeout=120_000)
        assert "ann1" not in page.locator("#study-progress").inner_text()
    finally:
        context.close()
