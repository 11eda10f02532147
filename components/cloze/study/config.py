"""The researcher's study settings, set once: `<data>/cloze/study.json`, or the environment
(APP_STUDY = a path to such a file, or the JSON itself). Annotators never see or change them.

    {"id": "pilot", "data": "choices_human", "set": "set_1", "display": "frames",
     "answer_flow": "confirm", "blind": true, "time_limit_s": null, "results": "human_eval_results"}

Relative paths are read from the study file's folder (from the data folder for inline JSON)."""
from __future__ import annotations

import hmac
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from components import datasource
from components.cloze.study.protocol import set_folders, set_seed
from components.common.errors import UserError
from components.common.io import load_json

DISPLAYS = ("frames", "frames16", "video")  # frames16: the older app's 16-frame grid per clip
FLOWS = ("immediate", "confirm")
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
    path = Path(env) if env else data_dir / "cloze" / "study.json"
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
    return StudyConfig(study_id=study_id, set_folder=sets[name], set_name=name,
                       results=base / str(data.get("results") or "human_eval_results"),
                       display=_choice(data, "display", DISPLAYS, "frames"),
                       answer_flow=_choice(data, "answer_flow", FLOWS, "immediate"),
                       blind=bool(data.get("blind", True)),
                       time_limit_s=float(limit) if limit else None)


def researcher_allowed(token: str | None) -> bool:
    """True only when APP_STUDY_RESEARCHER_TOKEN is set and `token` equals it."""
    expected = os.environ.get(TOKEN_ENV, "")
    return bool(expected) and hmac.compare_digest(expected.encode(), (token or "").encode())
