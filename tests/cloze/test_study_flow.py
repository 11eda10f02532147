"""The configured study as an annotator meets it (handlers, no browser): resume where they were,
deliberate redo, nothing names an option, the clock does no I/O, the researcher view needs the token."""
import json
import os
import re
from pathlib import Path

import pytest

from components.cloze.study import handlers as h
from components.cloze.study.cache import study_set
from components.cloze.study.config import load_config
from components.common.errors import UserError
from components.common.io import read_jsonl
from tests.cloze.test_study_protocol import make_sets

OPTION_NAMES = re.compile(r"\b(GT|Rand[123]|Early|Late|Wide|Reverse|Shuffle|Loop|before|after)\b")


def make_study(cloze_examples: Path, data: Path, **settings) -> Path:
    stems = sorted(p.name for p in (cloze_examples / "choices").iterdir() if p.is_dir())
    make_sets(cloze_examples, data / "cloze", {"set_1": stems[:3]})
    study = {"id": "pilot", "data": "choices_human", "set": "set_1", "display": "video",
             "answer_flow": "immediate", "blind": True, **settings}
    (data / "cloze" / "study.json").write_text(json.dumps(study))
    return data


@pytest.fixture
def study(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.delenv("APP_STUDY", raising=False)
    return h.Study(str(make_study(cloze_examples, tmp_path)))


def values(outputs) -> str:
    """Everything a browser would receive from these outputs, as text (state excluded: server-side)."""
    def flat(v):
        if isinstance(v, dict):
            return " ".join(f"{k} {flat(x)}" for k, x in v.items())
        if isinstance(v, (list, tuple)):
            return " ".join(flat(x) for x in v)
        return str(v)
    return flat([o for o in outputs if not isinstance(o, h.StudySession)])


def test_config_from_the_study_file_and_from_the_environment(study, tmp_path, monkeypatch):
    cfg = study.config
    assert cfg.set_name == "set_1" and cfg.seed == 8800808831473759713 and cfg.blind and cfg.display == "video"
    monkeypatch.setenv("APP_STUDY", json.dumps({"data": str(tmp_path / "cloze" / "choices_human"),
                                                "display": "frames", "answer_flow": "select_then_submit"}))
    cfg2 = load_config(tmp_path)
    assert cfg2.display == "frames" and cfg2.answer_flow == "confirm" and cfg2.set_name == "set_1"
    monkeypatch.setenv("APP_STUDY", json.dumps({"data": "nowhere"}))
    with pytest.raises(UserError):
        load_config(tmp_path)


def test_videos_go_out_under_opaque_names_and_nothing_names_an_option(study):
    out, stored = h.start(study, h.StudySession(), "anon-1")
    assert stored == {"annotator": "anon-1"}
    text = values(out)
    paths = [o["value"] for o in out[2:8]]
    assert all(re.fullmatch(r"[0-9a-f]{24}\.mp4", Path(p).name) for p in paths)
    assert all(Path(p).stat().st_size > 0 for p in paths)
    assert not OPTION_NAMES.search(text.replace(str(study.config.media_cache), "")), text
    out = h.choose(study, out[0], "B")  # blind: saved, not revealed
    assert "saved" in out[-2] and not OPTION_NAMES.search(values(out).replace(str(study.config.media_cache), ""))


def test_reload_resumes_exactly_where_the_annotator_was(study):
    out, _ = h.start(study, h.StudySession(), "anon-2")
    first = out[0].index
    out = h.choose(study, out[0], "A")
    out = h.go(study, out[0], first)          # back to the answered one
    out, _ = h.start(study, h.StudySession(), "anon-2")   # a reload
    assert out[0].index == first and out[0].answered == 1
    assert "You answered **A**" in out[-2]


def test_redo_is_deliberate_and_counted(study):
    out, _ = h.start(study, h.StudySession(), "anon-3")
    i = out[0].index
    out = h.choose(study, out[0], "C")
    out = h.go(study, out[0], i)
    letters = out[9:13]
    assert [b["interactive"] for b in letters] == [False] * 4 and letters[2]["variant"] == "primary"
    assert out[14]["visible"] is True                         # Change my answer
    with pytest.raises(UserError, match="Change my answer"):
        h.choose(study, out[0], "D")
    out = h.change(study, out[0])
    assert all(b["interactive"] for b in out[9:13])
    out = h.choose(study, out[0], "D")
    recs = read_jsonl(Path(study.config.results) / "pilot" / "anon-3.jsonl")
    assert [(r["task_index"], r["answer"], r["redo_count"]) for r in recs] == [(i, "C", 0), (i, "D", 1)]
    assert f"{i + 1} · answered" in out[15]["choices"]
    released = json.loads((Path(study.config.results) / "pilot" / "anon-3" / "set_1.json").read_text())
    assert released["responses"][str(i)]["answer"] == "D" and released["responses"][str(i)]["redo_count"] == 1


def test_the_clock_does_no_io(study, monkeypatch):
    out, _ = h.start(study, h.StudySession(), "anon-4")
    session = out[0]

    def no_io(*a, **k):
        raise AssertionError("the tick touched the disk")
    import builtins
    monkeypatch.setattr(builtins, "open", no_io)
    monkeypatch.setattr(os, "stat", no_io)
    monkeypatch.setattr(os, "scandir", no_io)
    line = h.tick(study, session)
    assert "question" in line and "of 9" in line


def test_the_set_is_cached_until_the_folder_changes(study):
    cfg = study.config
    a = study_set(cfg.set_folder, cfg.set_name, cfg.seed)
    assert study_set(cfg.set_folder, cfg.set_name, cfg.seed) is a
    victim = sorted(cfg.set_folder.iterdir())[0]
    victim.rename(cfg.set_folder / ".hidden-stem")
    b = study_set(cfg.set_folder, cfg.set_name, cfg.seed)
    assert b is not a and len(b.questions) == len(a.questions) - 3


def test_researcher_view_needs_the_token(study, monkeypatch):
    out, _ = h.start(study, h.StudySession(), "anon-5")
    h.choose(study, out[0], "A")
    monkeypatch.delenv("APP_STUDY_RESEARCHER_TOKEN", raising=False)
    with pytest.raises(UserError, match="token"):
        h.researcher(study, "")
    monkeypatch.setenv("APP_STUDY_RESEARCHER_TOKEN", "s3cret")
    with pytest.raises(UserError, match="token"):
        h.researcher(study, "guess")
    summary, table = h.researcher(study, "s3cret")
    assert "Human (paper)" in summary and table["value"][0][:3] == ["anon-5", 1, 9]


def test_frames_display_is_one_edge_view(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.delenv("APP_STUDY", raising=False)
    study = h.Study(str(make_study(cloze_examples, tmp_path, display="frames", answer_flow="confirm")))
    out, _ = h.start(study, h.StudySession(), "anon-6")
    img = out[1]["value"]
    assert out[1]["visible"] and img.size[0] > img.size[1] and all(o["visible"] is False for o in out[2:8])
    assert out[13]["visible"] is True                                       # Submit (confirm flow)
    out = h.choose(study, out[0], "B")
    assert out[0].selected == "B" and out[0].answered == 0
    out = h.submit(study, out[0])
    rec = read_jsonl(Path(study.config.results) / "pilot" / "anon-6.jsonl")[0]
    assert rec["answer"] == "B" and rec["answer_flow"] == "confirm" and rec["display_mode"] == "frames"


def test_the_cloze_tab_clock_does_no_io_and_its_set_is_cached(cloze_examples, tmp_path, monkeypatch):
    import builtins

    from components.cloze.ui import handlers as tab
    from components.cloze.ui.session import ClozeSession

    monkeypatch.setenv("APP_HUMAN_STUDY_DIR", str(tmp_path / "study"))
    st = ClozeSession(data_dir=str(tmp_path))
    out = tab.start(st, "Human study", str(cloze_examples), "all", "S, A, P", 42, "anon-t", "video")
    session = out.session
    assert tab.questions_for(session)[1] is tab.questions_for(session)[1]     # cached
    names = [Path(c["value"]).name for c in out.question.clips if c.get("value") and isinstance(c["value"], str)]
    assert names and all(re.fullmatch(r"[0-9a-f]{24}\.mp4", n) for n in names)  # no GT.mp4 in the tab either

    def no_io(*a, **k):
        raise AssertionError("the tick touched the disk")
    monkeypatch.setattr(builtins, "open", no_io)
    monkeypatch.setattr(os, "stat", no_io)
    assert "Question" in tab.tick(session)


def test_the_tab_leaderboard_shows_study_answers_only_with_the_token(cloze_examples, tmp_path, monkeypatch):
    from components.cloze.ui import handlers as tab
    from components.cloze.ui.session import ClozeSession

    monkeypatch.setenv("APP_HUMAN_STUDY_DIR", str(tmp_path / "study"))
    monkeypatch.setenv("APP_CLOZE_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("APP_STUDY_RESEARCHER_TOKEN", "tok")
    st = ClozeSession(data_dir=str(tmp_path))
    out = tab.start(st, "Human study", str(cloze_examples), "all", "S, A, P", 42, "anon-lb", "frames")
    tab.choose(out.session, "A", "frames", "immediate", True)

    def names(view):
        return [str(row[0]) for row in view.leaderboard["value"]]
    assert not any("this study" in n for n in names(tab.refresh(st, [], [])))
    assert not any("this study" in n for n in names(tab.refresh(st, [], [], "wrong")))
    assert any("this study" in n for n in names(tab.refresh(st, [], [], "tok")))
