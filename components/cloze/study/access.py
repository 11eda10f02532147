"""Who may answer a study, and as whom. An annotator id typed on a public page is no credential (a
stranger who types `ann1` would see and change ann1's answers), so a study opens with:

- an invitation per annotator, made by the researcher (`python -m components.cloze.study invite
  ann1 ann2 ...`): a random token shown once as a link `<page>/?invite=<token>`; only its SHA-256
  is kept, in `<results>/<study>/.access/invites.json` (owner-readable only), or in the secret
  APP_STUDY_INVITES (that file's content, for a Space whose storage is not reachable); or
- Hugging Face sign-in on a Space (`gr.LoginButton`, `hf_oauth: true`): the user name becomes a
  pseudonymous id `hf-<12 hex>` (an HMAC of the name under a key kept beside the invitations), so
  no file or export names the account; `hf_users` may list who is let in; or
- `access: "open"`: a typed id, for a lab machine where the researcher hands out ids in person.

Tokens never reach a log, a record, an export or an error message, nor the browser's storage: what
the page keeps for a reload is `browser_handle`, an HMAC of the invitation's hash under a key the
server never sends (`.access/session.key` or APP_STUDY_SESSION_KEY)."""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
from dataclasses import dataclass
from datetime import datetime, UTC
from pathlib import Path

from components.cloze.human import sanitise_annotator
from components.cloze.study.config import StudyConfig
from components.cloze.study.store import annotators as annotators_with_answers, canonical_annotator
from components.base.errors import UserError
from components.base.io import atomic_write
from components.base.lru import SingleFlightLRU

PRIVATE = 0o600
KEY_ENV = "APP_STUDY_PSEUDONYM_KEY"
NO_INVITE = ("This study opens with your personal invitation link. Open the link the researcher sent "
             "you, or paste its code here and press Start.")
BAD_INVITE = ("That invitation code does not open this study. Open the link the researcher sent you "
              "(copy it whole), or ask them for a new one.")
NO_SIGN_IN = "Sign in with Hugging Face (the button above) to take part."
NOT_LISTED = "Your Hugging Face account is not on this study's list of annotators; ask the researcher."


def access_dir(cfg: StudyConfig) -> Path:
    return cfg.results / cfg.study_id / ".access"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _write_private(path: Path, data: dict) -> None:
    atomic_write(path, lambda fh: fh.write((json.dumps(data, indent=1) + "\n").encode()), mode=PRIVATE)


#: invitation files read, by (path, inode, size, mtime): a changed file is a new entry
_INVITES: SingleFlightLRU[tuple, dict] = SingleFlightLRU(8)
#: the keys' files are made under it (made once, never twice)
_lock = threading.Lock()


def _invites_path(cfg: StudyConfig) -> Path:
    return access_dir(cfg) / "invites.json"


INVITES_ENV = "APP_STUDY_INVITES"


def _env_invites() -> dict[str, dict]:
    """Invitations given as a secret (the content of an invites.json made elsewhere): a Space's
    storage cannot be written from outside, its secrets can."""
    raw = os.environ.get(INVITES_ENV, "").strip()
    if not raw:
        return {}
    try:
        found = json.loads(raw).get("annotators", {})
    except (ValueError, AttributeError):
        raise UserError(f"{INVITES_ENV} is not the content of an invites.json ({{\"annotators\": ...}}); "
                        "paste the file `invite` wrote.") from None
    return found if isinstance(found, dict) else {}


def _read_invites(cfg: StudyConfig) -> dict[str, dict]:
    """annotator -> {"sha256", "created_utc"}: the study's invitation file (re-read only when it
    changes), and APP_STUDY_INVITES."""
    return {**_env_invites(), **_file_invites(cfg)}


def _file_invites(cfg: StudyConfig) -> dict[str, dict]:
    path = _invites_path(cfg)
    try:
        st = path.stat()
    except OSError:
        return {}
    return _INVITES.get((str(path), st.st_ino, st.st_size, st.st_mtime_ns), lambda: _parse_invites(path))


def _parse_invites(path: Path) -> dict[str, dict]:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("annotators", {})
    except (OSError, ValueError, AttributeError):
        raise UserError(f"{path} is not a readable invitation file; make the invitations again "
                        "(python -m components.cloze.study invite --renew ...).") from None


def invite(cfg: StudyConfig, annotators: list[str], *, renew: bool = False) -> dict[str, str]:
    """annotator -> a new token (returned once, never stored). An annotator who already has one
    keeps it unless `renew` (the old link then stops working)."""
    names = [sanitise_annotator(a) for a in annotators]
    if not names:
        raise UserError("Name the annotators to invite, e.g. `invite ann1 ann2`.")
    seen: dict[str, str] = {}
    for name in names:
        first = seen.setdefault(name.lower(), name)
        if first != name:
            raise UserError(f"'{first}' and '{name}' differ only by case: annotator ids compare without "
                            "case, so they are one person; name each annotator once.")
    current = dict(_file_invites(cfg))
    # ids compare without case: `ann1` is the `Ann1` already invited or answering, spelled as then
    spelled = {n.lower(): n for n in [*annotators_with_answers(cfg), *_env_invites(), *current]}
    names = [spelled.get(n.lower(), n) for n in names]
    taken = [n for n in names if (n in current or n in _env_invites()) and not renew]
    if taken:
        raise UserError(f"{', '.join(taken)} already have an invitation (ids compare without case); add "
                        "--renew to replace it (their old link stops working).")
    tokens = {}
    for name in names:
        tokens[name] = secrets.token_urlsafe(24)
        current[name] = {"sha256": _digest(tokens[name]), "created_utc": datetime.now(UTC).isoformat()}
    _write_private(_invites_path(cfg), {"study": cfg.study_id, "annotators": current})
    return tokens


def revoke(cfg: StudyConfig, annotators: list[str]) -> list[str]:
    """Remove invitations; returns the ones that existed. Their answers are kept."""
    current = dict(_file_invites(cfg))
    spelled = {n.lower(): n for n in current}
    gone = [a for a in dict.fromkeys(spelled.get(x.lower(), x) for x in annotators)
            if current.pop(a, None) is not None]
    _write_private(_invites_path(cfg), {"study": cfg.study_id, "annotators": current})
    return gone


def invited(cfg: StudyConfig) -> dict[str, str]:
    """annotator -> when the invitation was made (the tokens are not kept)."""
    return {a: str(v.get("created_utc", "")) for a, v in sorted(_read_invites(cfg).items())}


def annotator_for_token(cfg: StudyConfig, token: str | None) -> str | None:
    token = (token or "").strip()
    if not token:
        return None
    digest = _digest(token)
    found = None
    for name, entry in _read_invites(cfg).items():   # every entry compared, in constant time each
        if hmac.compare_digest(str(entry.get("sha256", "")), digest):
            found = name
    return found


SESSION_KEY_ENV = "APP_STUDY_SESSION_KEY"


def _session_key(cfg: StudyConfig) -> bytes:
    """The server's own key for the browser's place-holder (`browser_handle`): APP_STUDY_SESSION_KEY,
    else `.access/session.key` (made once, owner-readable only). Never sent to a browser."""
    return _private_key(cfg, SESSION_KEY_ENV, "session.key")


def _private_key(cfg: StudyConfig, env_name: str, file_name: str) -> bytes:
    """The environment's `env_name`, else `.access/<file_name>` (made once, owner-readable only)."""
    env = os.environ.get(env_name, "")
    if env:
        return env.encode()
    path = access_dir(cfg) / file_name
    with _lock:
        if not path.exists():
            _write_private(path, {"key": secrets.token_hex(32)})
    return json.loads(path.read_text()).get("key", "").encode()


def _handle(key: bytes, study_id: str, digest: str) -> str:
    return hmac.new(key, f"cloze-study-browser:v1:{study_id}:{digest}".encode(), hashlib.sha256).hexdigest()


def browser_handle(cfg: StudyConfig, annotator: str) -> str | None:
    """What the annotator's browser keeps to come back without the link: an HMAC, under the
    server's own key, of their invitation's hash. It reveals nothing of the token (the page's
    BrowserState encryption is no protection: its key is in the page's /config, for anyone), it
    opens only this study, and it stops opening anything when the invitation is renewed or
    revoked. None when the annotator has no invitation."""
    entry = _read_invites(cfg).get(annotator)
    if not isinstance(entry, dict) or not entry.get("sha256"):
        return None
    return _handle(_session_key(cfg), cfg.study_id, str(entry["sha256"]))


def annotator_for_handle(cfg: StudyConfig, handle: str | None) -> str | None:
    handle = (handle or "").strip()
    if not handle:
        return None
    key, found = _session_key(cfg), None
    for name, entry in _read_invites(cfg).items():   # every entry compared, in constant time each
        mine = _handle(key, cfg.study_id, str(entry.get("sha256", ""))) if isinstance(entry, dict) else ""
        if hmac.compare_digest(mine, handle):
            found = name
    return found


def invite_link(base_url: str, token: str) -> str:
    return f"{base_url.rstrip('/')}/?invite={token}"


def _pseudonym_key(cfg: StudyConfig) -> bytes:
    return _private_key(cfg, KEY_ENV, "pseudonym.key")


def hf_annotator(cfg: StudyConfig, username: str) -> str:
    """The pseudonymous id of a Hugging Face account in this study."""
    mac = hmac.new(_pseudonym_key(cfg), username.strip().lower().encode(), hashlib.sha256).hexdigest()
    return f"hf-{mac[:12]}"


@dataclass(frozen=True)
class Who:
    """The annotator a credential opens, or why it opens nothing (`annotator` None)."""

    annotator: str | None
    how: str = ""
    refusal: str = ""


def identify(cfg: StudyConfig, credential: str | None, hf_username: str | None = None,
             handle: str | None = None) -> Who:
    """The annotator for what the page sent: an invitation code, the place-holder the browser kept
    from an earlier visit (`handle`, `browser_handle`), a signed-in Hugging Face user or (open
    access only) a typed id."""
    credential = (credential or "").strip()
    if cfg.access == "open":   # ids compare without case: `ann1` answers as the `Ann1` who came first
        return Who(canonical_annotator(cfg, credential), "open")
    if cfg.invites and credential:
        name = annotator_for_token(cfg, credential)
        return Who(name, "invite") if name else Who(None, refusal=BAD_INVITE)
    if cfg.invites and handle and not hf_username:
        name = annotator_for_handle(cfg, handle)
        return Who(name, "invite") if name else Who(None, refusal=NO_INVITE)
    if cfg.hf_sign_in and hf_username:
        listed = cfg.hf_users is None or hf_username.lower() in {u.lower() for u in cfg.hf_users}
        return Who(hf_annotator(cfg, hf_username), "hf") if listed else Who(None, refusal=NOT_LISTED)
    return Who(None, refusal=NO_INVITE if cfg.invites else NO_SIGN_IN)
