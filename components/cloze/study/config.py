"""The researcher's study settings, set once: `<data>/cloze/study.json`, or the environment
(APP_STUDY = a path to such a file, or the JSON itself). Annotators never see or change them.

    {"id": "pilot", "data": "choices_human", "set": "set_1", "display": "frames",
     "answer_flow": "confirm", "blind": true, "time_limit_s": null, "results": "human_eval_results",
     "access": "invite", "resume": "first_unanswered", "judgments_per_question": null,
     "catch_every": null, "practice": true}

Relative paths are read from the study file's folder (from the data folder for inline JSON).
`access`: who may answer: "invite" (an invitation link per annotator, `python -m
components.cloze.study invite`), "hf" (Hugging Face sign-in on a Space, optionally only the
`hf_users` listed), "invite+hf" (either), "open" (a typed id, for a lab machine only: anyone who
types an id answers as that annotator). `resume`: "first_unanswered" (the released app) or
"last_viewed". `judgments_per_question` R turns routing on (routing.py); `catch_every` K adds an
attention check after every K answers (catch.py)."""
from __future__ import annotations

import hmac
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from components import datasource
from components.cloze.spec import SPEC
from components.cloze.study.protocol import set_folders, set_seed
from components.base.errors import UserError
from components.base.io import load_json

DISPLAYS = ("frames", "frames16", "video")  # frames16: the older app's 16-frame grid per clip
FLOWS = ("immediate", "confirm")
ACCESS = ("invite", "hf", "invite+hf", "open")
RESUME = ("first_unanswered", "last_viewed")
LEASE_S = 900.0   # a routed question shown to someone counts as being judged for this long
TOKEN_ENV = "APP_STUDY_RESEARCHER_TOKEN"
ID_RE = re.compile(r"[A-Za-z0-9_.-]{1,64}")


@dataclass(frozen=True)
class StudyConfig:
    study_id: str
    set_folder: Path       # choices_human/set_N (one folder of stem folders)
    set_name: str
    results: Path          # JSONL, set_N.json files and the media cache go here
    display: str = "frames"
    answer_flow: str = "immediate"
    blind: bool = True
    time_limit_s: float | None = None  # per question; shown as a countdown, answers still saved
    access: str = "invite"
    resume: str = "first_unanswered"
    judgments: int | None = None       # routing: R judgments per question, fewest first
    lease_s: float = LEASE_S
    catch_every: int | None = None     # an attention check after every K answers
    practice: bool = True              # the instruction and a practice question before question 1
    hf_users: tuple[str, ...] | None = None

    @property
    def routed(self) -> bool:
        return self.judgments is not None

    @property
    def invites(self) -> bool:
        return self.access in ("invite", "invite+hf")

    @property
    def hf_sign_in(self) -> bool:
        return self.access in ("hf", "invite+hf")

    @property
    def seed(self) -> int:
        return set_seed(self.set_name)

    @property
    def media_cache(self) -> Path:
        return self.results / ".media" / self.study_id


def _read_source(data_dir: Path) -> tuple[dict, Path] | None:
    env = os.environ.get("APP_STUDY", "").strip()
    if env.startswith("{"):
        try:
            return json.loads(env), data_dir
        except json.JSONDecodeError as exc:
            raise UserError(f"APP_STUDY is not valid JSON ({exc}).") from None
    path = Path(env) if env else data_dir / SPEC.data / "study.json"
    if not datasource.is_file(path):
        if env:
            raise UserError(f"APP_STUDY points at {path}, which does not exist.")
        return None
    data = load_json(datasource.local(path), "study file")
    if not isinstance(data, dict):
        raise UserError(f"{path}: a study file is one JSON object (data, set, display, ...).")
    return data, path.parent


def _choice(data: dict, key: str, options: tuple, default: str) -> str:
    value = str(data.get(key, default))
    if value == "select_then_submit":
        value = "confirm"
    if value not in options:
        raise UserError(f"Study setting {key!r} must be one of {', '.join(options)}; got {value!r}.")
    return value


def load_config(data_dir: str | Path) -> StudyConfig | None:
    """The configured study, or None when no study file / APP_STUDY is set. `data_dir` may be a
    dataset repository (`hf://datasets/...`); the results are written in its local mirror."""
    data_dir = datasource.open_data_dir(data_dir)
    found = _read_source(data_dir)
    if found is None:
        return None
    data, base = found
    if "data" not in data:
        raise UserError("The study file needs 'data': the choices_human folder (or one set folder).")
    sets = set_folders(base / data["data"])
    name = str(data.get("set") or next(iter(sets)))
    if name not in sets:
        raise UserError(f"Set {name!r} is not in {base / data['data']}; choose one of {', '.join(sets)}.")
    study_id = str(data.get("id") or name)
    if not ID_RE.fullmatch(study_id):
        raise UserError(f"Study id must be 1-64 of letters, digits, '_', '-', '.'; got {study_id!r}.")
    limit = data.get("time_limit_s")
    users = data.get("hf_users")
    if users is not None and not (isinstance(users, list) and all(isinstance(u, str) for u in users)):
        raise UserError(f"Study setting 'hf_users' must be a list of Hugging Face user names; got {users!r:.80}.")
    return StudyConfig(study_id=study_id, set_folder=sets[name], set_name=name,
                       results=base / str(data.get("results") or "human_eval_results"),
                       display=_choice(data, "display", DISPLAYS, "frames"),
                       answer_flow=_choice(data, "answer_flow", FLOWS, "immediate"),
                       blind=bool(data.get("blind", True)),
                       time_limit_s=float(limit) if limit else None,
                       access=_choice(data, "access", ACCESS, "invite"),
                       resume=_choice(data, "resume", RESUME, "first_unanswered"),
                       judgments=_count(data, "judgments_per_question"),
                       lease_s=float(data.get("lease_s") or LEASE_S),
                       catch_every=_count(data, "catch_every"),
                       practice=bool(data.get("practice", True)),
                       hf_users=tuple(users) if users is not None else None)


def _count(data: dict, key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise UserError(f"Study setting {key!r} must be a whole number of at least 1 (or null); got {value!r}.")
    return value


def researcher_allowed(token: str | None) -> bool:
    """True only when APP_STUDY_RESEARCHER_TOKEN is set and `token` equals it."""
    expected = os.environ.get(TOKEN_ENV, "")
    return bool(expected) and hmac.compare_digest(expected.encode(), (token or "").encode())
