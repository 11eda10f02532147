"""The study page's data from a dataset repository: the released `choices_human/set_N/` layout
and `study.json` read from the repository, answers written in its local mirror, each answer and
the set's result file naming the commit, and a question's view fetching exactly its six clips."""
from __future__ import annotations

import json
import shutil

from components.cloze.data import clip_relpath
from components.cloze.study.cache import study_set
from components.cloze.study.config import load_config
from components.cloze.study.media import frames_view, question_clips
from components.cloze.study.store import AnnotatorStore


def test_a_study_served_from_a_repository(hub, cloze_examples, tmp_path):
    repo = tmp_path / "study-repo"
    shutil.copytree(cloze_examples / "choices", repo / "cloze" / "choices_human" / "set_1")
    (repo / "cloze" / "study.json").write_text(json.dumps({"id": "pilot", "data": "choices_human",
                                                           "set": "set_1", "display": "frames"}))
    hub.add_repo("test/study", repo)
    commit = hub.repo_commits("test/study")["main"]
    config = load_config("hf://datasets/test/study")
    assert config is not None and config.set_name == "set_1"
    assert not any(p.endswith(".mp4") for p in hub.downloads())   # opening fetched no clip
    sset = study_set(config.set_folder, config.set_name, config.seed)
    q = sset.questions[0]
    hub.reset_log()
    view = frames_view(question_clips(sset.dataset.instance(q.stem), q), "frames")
    assert view.size[0] > 0
    assert sorted(hub.downloads()) == sorted(f"cloze/choices_human/set_1/{q.stem}/{clip_relpath(n)}"
                                             for n in ("before", "after", *q.options))
    store = AnnotatorStore(config, "ann-1", sset.questions)
    rec = store.answer(0, "A", display="frames", flow="immediate", timing=2.0, session="s1")
    assert rec["data_revision"] == f"hf://datasets/test/study@{commit}"
    assert json.loads(store.path.read_text().splitlines()[0])["data_revision"] == rec["data_revision"]
    header = json.loads(store.result_path.read_text())
    assert header["data_revision"] == rec["data_revision"] and "0" in header["responses"]
    assert str(store.path).startswith(str(tmp_path / "client" / "mirrors"))   # written in the mirror
