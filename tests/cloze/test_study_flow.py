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
from components.base.errors import UserError
from components.base.io import read_jsonl
from tests.cloze.test_study_protocol import make_sets

from components.cloze.ui.session import ClozeTab  # noqa: E402
from components.common.sessions import Resources  # noqa: E402

TAB, RES = ClozeTab(""), Resources()

OPTION_NAMES = re.compile(r"\b(GT|Rand[123]|Early|Late|Wide|Reverse|Shuffle|Loop|before|after)\b")


def make_study(cloze_examples: Path, data: Path, stems: int = 3, **settings) -> Path:
    """A study of set_1 (the first `stems` example stems) with `settings` over these defaults."""
    names = sorted(p.name for p in (cloze_examples / "choices").iterdir() if p.is_dir())
    make_sets(cloze_examples, data / "cloze", {"set_1": names[:stems]})
    study = {"id": "pilot", "data": "choices_human", "set": "set_1", "display": "video",
             "answer_flow": "immediate", "blind": True, "access": "open", "practice": False, **settings}
    (data / "cloze" / "study.json").write_text(json.dumps(study))
    return data


@pytest.fixture
def study(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.delenv("APP_STUDY", raising=False)
    return h.Study(str(make_study(cloze_examples, tmp_path)))


def start(study: h.Study, annotator: str) -> h.QuestionView:
    """Start (open access: the id is the credential) and return the first view."""
    _, view, _ = h.start(study, h.StudySession(), annotator)
    return view


def values(view: h.QuestionView) -> str:
    """Everything a browser would receive from a view, as text (the session stays on the server)."""
    return " ".join(str(getattr(view, f)) for f in ("image", "videos", "progress", "marks", "navigator",
                                                       "feedback"))


def marks(view: h.QuestionView) -> tuple[str, bool]:
    """(marked letter, letters locked) as the page's script reads them from the view."""
    found = re.search(r'data-mark="([A-D]?)" data-locked="([01])"', view.marks)
    return found.group(1), found.group(2) == "1"


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
    _, out, stored = h.start(study, h.StudySession(), "anon-1")
    assert stored == {"credential": "anon-1"}
    text = values(out)
    assert all(re.fullmatch(r"[0-9a-f]{24}\.mp4", Path(p).name) for p in out.videos)
    assert all(Path(p).stat().st_size > 0 for p in out.videos)
    assert not OPTION_NAMES.search(text.replace(str(study.config.media_cache), "")), text
    out = h.choose(study, out.session, "B")  # blind: saved, not revealed
    assert "saved" in out.feedback
    assert not OPTION_NAMES.search(values(out).replace(str(study.config.media_cache), ""))


def test_no_two_served_copies_share_bytes_so_no_url_hash_repeats_the_true_middle(study):
    """gradio files a served copy under a hash of its content; the true middle is in all three
    questions of a stem, so unsalted copies would repeat one hash exactly where the answer is."""
    import hashlib

    out = start(study, "anon-salt")
    digests = []
    for index in range(out.session.total):
        view = h.go(study, out.session, index)
        digests += [hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in view.videos]
    assert len(digests) == 6 * out.session.total and len(set(digests)) == len(digests)


def test_a_reload_resumes_at_the_first_unanswered_question_as_released(study):
    out = start(study, "anon-2")
    assert out.session.index == 0                  # the released app opens at the first unanswered
    out = h.choose(study, out.session, "A")
    out = h.go(study, out.session, 0)              # back to the answered one
    out = start(study, "anon-2")                   # a reload
    assert out.session.index == 1 and out.session.answered == 1


def test_with_resume_last_viewed_a_reload_resumes_where_the_annotator_was(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.delenv("APP_STUDY", raising=False)
    study = h.Study(str(make_study(cloze_examples, tmp_path, resume="last_viewed")))
    out = start(study, "anon-2")
    first = out.session.index
    out = h.choose(study, out.session, "A")
    out = h.go(study, out.session, first)          # back to the answered one
    out = start(study, "anon-2")                   # a reload
    assert out.session.index == first and out.session.answered == 1
    assert "You answered **A**" in out.feedback and marks(out) == ("A", True)


def test_redo_is_deliberate_and_counted(study):
    out = start(study, "anon-3")
    i = out.session.index
    assert marks(out) == ("", False)
    out = h.choose(study, out.session, "C")
    out = h.go(study, out.session, i)
    assert marks(out) == ("C", True)                          # shown, locked: Change my answer shows
    with pytest.raises(UserError, match="Change my answer"):
        h.choose(study, out.session, "D")
    out = h.change(study, out.session)
    assert marks(out) == ("C", False)
    out = h.choose(study, out.session, "D")
    recs = read_jsonl(Path(study.config.results) / "pilot" / "anon-3.jsonl")
    assert [(r["task_index"], r["answer"], r["redo_count"]) for r in recs] == [(i, "C", 0), (i, "D", 1)]
    assert f'data-q="{i}" title="question {i + 1}, answered"' in out.navigator
    assert "correct" not in out.navigator.lower()
    released = json.loads((Path(study.config.results) / "pilot" / "anon-3" / "set_1.json").read_text())
    assert released["responses"][str(i)]["answer"] == "D" and released["responses"][str(i)]["redo_count"] == 1


def test_the_clock_does_no_io(study, monkeypatch):
    out = start(study, "anon-4")
    session = out.session

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
    victim.rename(cfg.set_folder / ".hidden-stem")   # kept, as the released app keeps it, and warned of
    b = study_set(cfg.set_folder, cfg.set_name, cfg.seed)
    assert b is not a and len(b.questions) == len(a.questions)
    assert ".hidden-stem" in b.dataset.instances and any(".hidden-stem" in w for w in b.warnings)


def test_researcher_view_needs_the_token(study, monkeypatch):
    out = start(study, "anon-5")
    h.choose(study, out.session, "A")
    monkeypatch.delenv("APP_STUDY_RESEARCHER_TOKEN", raising=False)
    refused = h.researcher(study, "")
    assert refused.summary == h.WRONG_TOKEN and refused.annotators["value"] == [] \
        and refused.annotators["visible"] is False and refused.coverage["value"] == []   # old results hidden
    monkeypatch.setenv("APP_STUDY_RESEARCHER_TOKEN", "s3cret")
    assert h.researcher(study, "guess").summary == h.WRONG_TOKEN
    shown = h.researcher(study, "s3cret")
    assert "Human (paper)" in shown.summary and shown.annotators["value"][0][:3] == ["anon-5", 1, 9]


def test_frames_display_is_one_edge_view(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.delenv("APP_STUDY", raising=False)
    study = h.Study(str(make_study(cloze_examples, tmp_path, display="frames", answer_flow="confirm")))
    out = start(study, "anon-6")
    from PIL import Image

    img = Image.open(out.image)
    assert img.size[0] > img.size[1] and out.videos == (None,) * 6
    assert re.fullmatch(r"[0-9a-f]{24}\.jpg", Path(out.image).name)          # an opaque name too
    layout = h.layout_for(study.config)
    assert layout.image["visible"] and not layout.video_box["visible"]
    assert layout.submit["visible"] is True                                 # Submit (confirm flow)
    out = h.choose(study, out.session, "B")
    assert out.session.selected == "B" and out.session.answered == 0 and marks(out) == ("B", False)
    out = h.submit(study, out.session)
    rec = read_jsonl(Path(study.config.results) / "pilot" / "anon-6.jsonl")[0]
    assert rec["answer"] == "B" and rec["answer_flow"] == "confirm" and rec["display_mode"] == "frames"


def test_the_cloze_tab_clock_does_no_io_and_its_set_is_cached(cloze_examples, tmp_path, monkeypatch):
    import builtins

    from components.cloze.ui import handlers as tab
    from components.cloze.ui.session import ClozeSession

    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    st = ClozeSession(data_dir=str(cloze_examples.parent))
    out = tab.start(TAB, RES, st, "practice", str(cloze_examples), "all", "S, A, P", 42, "anon-t", "video")
    session = out.session
    assert tab.questions_for(session)[1] is tab.questions_for(session)[1]     # cached
    names = [Path(c["value"]).name for c in out.question.clips if c.get("value") and isinstance(c["value"], str)]
    assert names and all(re.fullmatch(r"[0-9a-f]{24}\.mp4", n) for n in names)  # no GT.mp4 in the tab either

    def no_io(*a, **k):
        raise AssertionError("the tick touched the disk")
    monkeypatch.setattr(builtins, "open", no_io)
    monkeypatch.setattr(os, "stat", no_io)
    assert "Question" in tab.tick(TAB, RES, session).progress


def test_the_tab_leaderboard_shows_study_answers_only_with_the_token(cloze_examples, tmp_path, monkeypatch):
    from components.cloze.ui import handlers as tab
    from components.cloze.ui.session import ClozeSession

    monkeypatch.setenv("APP_PRACTICE_DIR", str(tmp_path / "study"))
    monkeypatch.setenv("APP_HUMAN_STUDY_DIR", str(tmp_path / "study"))   # answers in the study's folder
    monkeypatch.setenv("APP_CLOZE_RUNS_DIR", str(tmp_path / "runs"))
    monkeypatch.setenv("APP_STUDY_RESEARCHER_TOKEN", "tok")
    st = ClozeSession(data_dir=str(cloze_examples.parent))
    out = tab.start(TAB, RES, st, "practice", str(cloze_examples), "all", "S, A, P", 42, "anon-lb", "frames")
    tab.choose(TAB, RES, out.session, "A", "frames", "immediate", True)

    def names(view):
        return [str(row[0]) for row in view.leaderboard["value"]["data"]]
    assert not any("this study" in n for n in names(tab.refresh(TAB, RES, st, [], [])))
    assert not any("this study" in n for n in names(tab.refresh(TAB, RES, st, [], [], "wrong")))
    assert any("this study" in n for n in names(tab.refresh(TAB, RES, st, [], [], "tok")))


def test_the_next_questions_edge_view_is_drawn_before_it_is_asked_for(cloze_examples, tmp_path, monkeypatch):
    import time

    from components.cloze.study import media

    monkeypatch.delenv("APP_STUDY", raising=False)
    study = h.Study(str(make_study(cloze_examples, tmp_path, display="frames")))
    out = start(study, "anon-pre")
    cfg, sset, _ = study.parts("anon-pre")
    q = sset.questions[out.session.index + 1]
    key = media._edge_key(media.question_clips(sset.dataset.instance(q.stem), q))
    deadline = time.monotonic() + 120
    while key not in media.EDGE_VIEWS:
        assert time.monotonic() < deadline, "the next question's edge view was never drawn"
        time.sleep(0.1)
    cached = media.EDGE_VIEWS.peek(key)
    following = h.go(study, out.session, out.session.index + 1)
    assert media.EDGE_VIEWS.peek(key) is cached                             # served, not redrawn
    assert Path(following.image).is_file()


def test_the_older_16_frame_grid_is_offered_and_recorded_as_a_frames_display(cloze_examples, tmp_path, monkeypatch):
    from components.cloze.study import media
    from components.media import endpoint_indices

    monkeypatch.delenv("APP_STUDY", raising=False)
    study = h.Study(str(make_study(cloze_examples, tmp_path, display="frames16")))
    out = start(study, "anon-g16")
    from PIL import Image

    size = Image.open(out.image).size
    assert out.videos == (None,) * 6 and size[1] > size[0] * 0.8   # 3 rows of 4x4 grids
    cfg, sset, _ = study.parts("anon-g16")
    q = sset.questions[out.session.index]
    clip = media.question_clips(sset.dataset.instance(q.stem), q)[0]
    total = media.open_video(clip).num_frames
    assert endpoint_indices(total, 16)[0] == 0 and endpoint_indices(total, 16)[-1] == total - 1
    assert len(media._grid_frames(clip)) == 16
    h.choose(study, out.session, "A")
    rec = read_jsonl(Path(cfg.results) / "pilot" / "anon-g16.jsonl")[0]
    assert rec["display_mode"] == "frames" and rec["frames_view"] == "grid16"


def test_annotators_starting_together_load_the_set_once(study, monkeypatch):
    import threading

    from components.cloze.study import cache

    cache.invalidate()
    calls, real = [], cache.load_set

    def counted(folder):
        calls.append(folder)
        return real(folder)
    monkeypatch.setattr(cache, "load_set", counted)
    cfg = study.config
    got: list = []
    threads = [threading.Thread(target=lambda: got.append(study_set(cfg.set_folder, cfg.set_name, cfg.seed)))
               for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 8 and all(s is got[0] for s in got)


def test_a_position_file_emptied_by_a_power_cut_resumes_at_the_first_unanswered(cloze_examples, tmp_path,
                                                                                monkeypatch):
    from components.cloze.study import store as store_mod

    monkeypatch.delenv("APP_STUDY", raising=False)
    study = h.Study(str(make_study(cloze_examples, tmp_path, resume="last_viewed")))
    view = start(study, "anon-cut")
    view = h.choose(study, view.session, "A")            # answers question 1, moves to question 2
    view = h.go(study, view.session, 2)                   # then looks at question 3
    cfg, sset, store = study.parts("anon-cut")
    assert json.loads(store.position_path.read_text()) == {"index": 2}
    store.position_path.write_text("")                    # written without fsync, lost in a power cut
    store_mod.forget_stores()                             # the server restarted
    again = start(study, "anon-cut")
    assert again.session.index == 1                       # the first unanswered question


def test_the_set_is_loaded_before_the_first_annotator_and_kept_out_of_the_collector(study, monkeypatch):
    import gc

    from components.cloze.study import cache

    cache.invalidate()
    calls, real = [], cache.load_set
    monkeypatch.setattr(cache, "load_set", lambda folder: calls.append(folder) or real(folder))
    try:
        h.warm(study)
        frozen = gc.get_freeze_count()
        h.start(study, h.StudySession(), "anon-1")
    finally:
        gc.unfreeze()
    assert len(calls) == 1          # the start found the set loaded
    assert frozen > 0               # the loaded set is no longer walked by full collections


def test_a_broken_study_file_warms_nothing_and_is_shown_to_the_annotator(study, tmp_path, caplog):
    (tmp_path / "cloze" / "study.json").write_text('{"data": "nowhere"}')
    h.warm(study)
    import gc
    gc.unfreeze()
    assert "could not be loaded ahead" in caplog.text
    with pytest.raises(UserError):
        h.start(study, h.StudySession(), "anon-1")
