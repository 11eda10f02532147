"""Who may answer: per-annotator invitations (only a hash kept), Hugging Face sign-in mapped to a
pseudonymous id, open ids only when the study says so; over HTTP, a wrong or missing token opens
nothing and changes nothing, and nothing of another annotator's answers comes back."""
from __future__ import annotations

import html
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from components.cloze.study import access
from components.cloze.study import handlers as h
from components.cloze.study import media
from components.cloze.study import store as store_mod
from components.cloze.study.app import launch_study
from components.base.errors import UserError
from components.base.io import read_jsonl
from tests.cloze.test_study_flow import make_study
from tests.helpers.live_app import free_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def data(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.delenv("APP_STUDY", raising=False)
    monkeypatch.delenv(access.KEY_ENV, raising=False)
    store_mod.forget_stores()
    return make_study(cloze_examples, tmp_path, display="frames", access="invite", practice=False)


def snapshot(folder: Path) -> list[tuple[str, int, int]]:
    return sorted((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns)
                  for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_invitations_keep_only_a_hash_and_open_only_their_annotator(data):
    cfg = h.Study(str(data)).config
    tokens = access.invite(cfg, ["ann1", "ann2"])
    path = access.access_dir(cfg) / "invites.json"
    stored = path.read_text()
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert all(t not in stored for t in tokens.values()) and len(tokens["ann1"]) >= 32
    assert access.annotator_for_token(cfg, tokens["ann1"]) == "ann1"
    assert access.annotator_for_token(cfg, tokens["ann2"]) == "ann2"
    assert access.annotator_for_token(cfg, "ann1") is None and access.annotator_for_token(cfg, "") is None
    with pytest.raises(UserError, match="already have an invitation"):
        access.invite(cfg, ["ann1"])
    renewed = access.invite(cfg, ["ann1"], renew=True)
    assert access.annotator_for_token(cfg, tokens["ann1"]) is None                 # the old link is dead
    assert access.annotator_for_token(cfg, renewed["ann1"]) == "ann1"
    assert access.revoke(cfg, ["ann2"]) == ["ann2"] and access.annotator_for_token(cfg, tokens["ann2"]) is None
    assert list(access.invited(cfg)) == ["ann1"]


def test_identify_by_access_mode(data):
    from dataclasses import replace

    cfg = h.Study(str(data)).config
    token = access.invite(cfg, ["ann1"])["ann1"]
    assert access.identify(cfg, "") == access.Who(None, refusal=access.NO_INVITE)
    assert access.identify(cfg, "ann1").refusal == access.BAD_INVITE       # an id is not a credential
    assert access.identify(cfg, token) == access.Who("ann1", "invite")
    assert access.identify(cfg, "", "someone").refusal == access.NO_INVITE  # sign-in not allowed here
    hf = replace(cfg, access="hf")
    first = access.identify(hf, "", "Alice-HF")
    assert first.how == "hf" and first.annotator.startswith("hf-") and "alice" not in first.annotator.lower()
    assert access.identify(hf, "", "alice-hf") == first                     # one account, one id
    assert access.identify(hf, "", "bob").annotator != first.annotator
    assert access.identify(hf, token).refusal == access.NO_SIGN_IN          # invitations are off there
    listed = replace(hf, hf_users=("bob",))
    assert access.identify(listed, "", "alice-hf").refusal == access.NOT_LISTED
    assert access.identify(listed, "", "Bob").annotator == access.identify(hf, "", "bob").annotator
    both = replace(cfg, access="invite+hf")
    assert access.identify(both, token).annotator == "ann1" and access.identify(both, "", "bob").how == "hf"
    assert access.identify(replace(cfg, access="open"), "ann9") == access.Who("ann9", "open")


def test_a_refused_start_reads_and_writes_nothing(data):
    study = h.Study(str(data))
    results = study.config.results
    before = snapshot(results)
    for credential in ("", "ann1", "not-a-token"):
        layout, view, stored = h.start(study, h.StudySession(), credential)
        assert view.session.annotator == "" and stored is None and "invitation" in view.progress
        assert layout.question_box["visible"] is False and layout.intro["visible"] is False
    assert snapshot(results) == before
    with pytest.raises(UserError, match="invitation"):
        h.choose(study, h.StudySession(), "A")
    with pytest.raises(UserError, match="invitation"):
        h.go(study, h.StudySession(), 3)
    assert snapshot(results) == before


def test_the_invite_command_prints_links_once_and_lists_no_tokens(data):
    env = {k: v for k, v in os.environ.items() if k != "APP_STUDY"}
    out = subprocess.run([sys.executable, "-m", "components.cloze.study", "invite", "--data-dir", str(data),
                          "ann1", "ann2", "--url", "https://study.example"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    links = dict(line.split("\t") for line in out.stdout.splitlines() if not line.startswith("#"))
    assert set(links) == {"ann1", "ann2"} and links["ann1"].startswith("https://study.example/?invite=")
    cfg = h.Study(str(data)).config
    assert access.annotator_for_token(cfg, links["ann2"].split("invite=", 1)[1]) == "ann2"
    listed = subprocess.run([sys.executable, "-m", "components.cloze.study", "invites", "--data-dir", str(data)],
                            cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert "ann1\tinvited" in listed.stdout and links["ann1"].split("=", 1)[1] not in listed.stdout
    again = subprocess.run([sys.executable, "-m", "components.cloze.study", "invite", "--data-dir", str(data),
                            "ann1"], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert again.returncode == 2 and again.stderr.startswith("error: ann1 already have an invitation")
    assert "Traceback" not in again.stderr


@pytest.mark.slow  # a live app (tests/test_slow_marks.py)
def test_over_http_a_stranger_can_neither_read_nor_change_an_annotators_answers(data):
    from gradio_client import Client

    study = h.Study(str(data))
    cfg = study.config
    token = access.invite(cfg, ["ann1"])["ann1"]
    _, view, _ = h.start(study, h.StudySession(), token)
    view = h.choose(study, view.session, "B")
    h.choose(study, view.session, "C")                       # ann1 has answered two questions
    store_mod.forget_stores()
    demo = launch_study(data, port=free_port(), prevent_thread_lock=True)
    try:
        media._prefetcher.submit(lambda: None).result(120)   # ann1's next question, drawn ahead, is written
        before = snapshot(cfg.results)
        stranger = Client(demo.local_url, verbose=False, download_files=False)
        for credential in ("", "ann1", token[:-1] + ("x" if token[-1] != "x" else "y")):
            shown = json.dumps(stranger.predict(credential, api_name="/study_start"), default=str)
            assert "does not open this study" in shown or "invitation link" in shown
            assert "ann1" not in shown and "answered" not in shown and ".jpg" not in shown
        for api, args in (("/study_choice_1", [""]), ("/study_submit", [""]), ("/study_next", []),
                          ("/study_prev", []), ("/study_change", []), ("/study_begin", []),
                          ("/study_practice_0", []), ("/study_jump", [])):
            shown = stranger.predict(*args, api_name=api)
            line = shown[-1] if isinstance(shown, (list, tuple)) else shown   # the page's message line
            assert line.startswith("⚠") and ("invitation link" in line or "Select A, B, C or D" in line
                                              or "Click a question number" in line), (api, shown)
            assert "ann1" not in json.dumps(shown, default=str), (api, shown)
        assert snapshot(cfg.results) == before                # nothing read back, nothing written
        assert len(read_jsonl(cfg.results / cfg.study_id / "ann1.jsonl")) == 2
        annotator = Client(demo.local_url, verbose=False, download_files=False)
        shown = json.dumps(annotator.predict(token, api_name="/study_start"), default=str)
        assert "Welcome back, ann1: 2 answered" in shown
        for path in cfg.results.rglob("*"):                    # the token is in no file of the study
            assert not path.is_file() or token.encode() not in path.read_bytes(), path
    finally:
        demo.close()


def test_the_studys_hub_push_copies_answers_and_never_the_access_folder(data, monkeypatch):
    from huggingface_hub.utils import filter_repo_objects

    cfg = h.Study(str(data)).config
    monkeypatch.delenv("APP_HUMAN_STUDY_REPO", raising=False)
    assert store_mod.hub_push(cfg) is None
    monkeypatch.setenv("APP_HUMAN_STUDY_REPO", "someone/study")
    push = store_mod.hub_push(cfg)
    assert push.folder == cfg.results / cfg.study_id and not push.started
    kwargs = push.scheduler_kwargs()
    names = ["ann1.jsonl", "ann1.catch.jsonl", "ann1/set_1.json", ".access/invites.json",
             ".access/pseudonym.key", "ann1.position.json", ".ann1.jsonl.x1.tmp", "ann1/.set_1.json.y.tmp"]
    kept = list(filter_repo_objects(names, allow_patterns=kwargs["allow_patterns"],
                                    ignore_patterns=kwargs["ignore_patterns"]))
    assert kept == ["ann1.jsonl", "ann1.catch.jsonl", "ann1/set_1.json"], kept


def test_invitations_made_elsewhere_can_be_given_as_a_secret(data, tmp_path, monkeypatch):
    """A Space's storage cannot be written from outside: APP_STUDY_INVITES holds invites.json."""
    from dataclasses import replace

    cfg = h.Study(str(data)).config
    elsewhere = replace(cfg, results=tmp_path / "laptop")
    token = access.invite(elsewhere, ["ann3"])["ann3"]
    assert access.annotator_for_token(cfg, token) is None
    monkeypatch.setenv(access.INVITES_ENV, (access.access_dir(elsewhere) / "invites.json").read_text())
    assert access.annotator_for_token(cfg, token) == "ann3"
    monkeypatch.setenv(access.INVITES_ENV, "not json")
    with pytest.raises(UserError, match="APP_STUDY_INVITES is not the content of an invites.json"):
        access.annotator_for_token(cfg, token)


def test_a_signed_in_account_answers_under_its_pseudonym_and_sign_in_needs_a_space(cloze_examples, tmp_path,
                                                                                     monkeypatch, caplog):
    from components.cloze.study import app as study_app

    monkeypatch.delenv("APP_STUDY", raising=False)
    monkeypatch.delenv(access.KEY_ENV, raising=False)
    store_mod.forget_stores()
    study = h.Study(str(make_study(cloze_examples, tmp_path, display="frames", access="hf", practice=False,
                                   hf_users=["Alice"])))
    _, view, stored = h.start(study, h.StudySession(), "", "alice")
    who = view.session.annotator
    assert who.startswith("hf-") and stored == {} and view.session.stage == "question"
    h.choose(study, view.session, "A")
    cfg = study.config
    files = [p.name for p in (cfg.results / cfg.study_id).rglob("*") if p.is_file()]
    assert f"{who}.jsonl" in files and not any("alice" in f.lower() for f in files)
    assert "alice" not in (cfg.results / cfg.study_id / f"{who}.jsonl").read_text().lower()
    _, refused, _ = h.start(study, h.StudySession(), "", "mallory")
    assert refused.session.annotator == "" and html.escape(access.NOT_LISTED) in refused.progress
    monkeypatch.delenv("SPACE_ID", raising=False)
    assert study_app._sign_in_ready(cfg) is False                    # not on a Space: no LoginButton
    monkeypatch.setenv("SPACE_ID", "someone/study")
    monkeypatch.setenv("OAUTH_CLIENT_ID", "x")
    import importlib.util
    if importlib.util.find_spec("authlib") is None:                  # this machine has no gradio[oauth]
        assert study_app._sign_in_ready(cfg) is False and "gradio[oauth]" in caplog.text


def test_ids_that_differ_only_by_case_are_one_annotator_at_invite(data):
    cfg = h.Study(str(data)).config
    tokens = access.invite(cfg, ["Ann1"])
    with pytest.raises(UserError, match="Ann1 already have an invitation"):
        access.invite(cfg, ["ann1"])                                 # not a second person
    with pytest.raises(UserError, match="'Ann2' and 'ann2' differ only by case"):
        access.invite(cfg, ["Ann2", "ann2"])
    renewed = access.invite(cfg, ["ANN1"], renew=True)
    assert list(renewed) == ["Ann1"] and list(access.invited(cfg)) == ["Ann1"]   # the first spelling kept
    assert access.annotator_for_token(cfg, renewed["Ann1"]) == "Ann1"
    assert access.annotator_for_token(cfg, tokens["Ann1"]) is None
    assert access.revoke(cfg, ["ann1"]) == ["Ann1"] and access.invited(cfg) == {}


def test_ids_that_differ_only_by_case_are_one_annotator_on_the_open_page(cloze_examples, tmp_path, monkeypatch,
                                                                         capsys):
    from app import main

    monkeypatch.delenv("APP_STUDY", raising=False)
    store_mod.forget_stores()
    study = h.Study(str(make_study(cloze_examples, tmp_path, display="frames", access="open")))
    _, view, _ = h.start(study, h.StudySession(), "Ann1")
    view = h.choose(study, view.session, "A")
    _, view, _ = h.start(study, h.StudySession(), "ann1")           # the same person, typed otherwise
    assert view.session.annotator == "Ann1" and "Welcome back, Ann1: 1 answered" in view.feedback
    h.choose(study, view.session, "B")
    store_mod.forget_stores()                                         # a restarted server: read from the files
    _, view, _ = h.start(study, h.StudySession(), "ANN1")
    assert view.session.annotator == "Ann1" and "Ann1: 2 answered" in view.feedback
    folder = study.config.results / study.config.study_id
    assert sorted(p.name for p in folder.glob("*.jsonl")) == ["Ann1.jsonl"]
    assert main(["eval", "cloze", "--human", "--json", "--results", *map(str, folder.glob("*.jsonl"))]) == 0
    assert json.loads(capsys.readouterr().out)["entries"] == 2


def test_the_browser_keeps_a_sealed_handle_never_the_token(data, monkeypatch):
    import hashlib

    study = h.Study(str(data))
    cfg = study.config
    token = access.invite(cfg, ["ann1"])["ann1"]
    _, view, stored = h.start(study, h.StudySession(), token)
    kept = json.dumps(stored)
    assert view.session.annotator == "ann1" and set(stored) == {"session"}
    assert token not in kept and hashlib.sha256(token.encode()).hexdigest() not in kept
    # what the browser kept brings the annotator back without the link, and only them
    _, view, again = h.start(study, h.StudySession(), "", handle=stored["session"])
    assert view.session.annotator == "ann1" and again == stored
    _, view, _ = h.start(study, h.StudySession(), "", handle=stored["session"][:-1] + "0")
    assert view.session.annotator == "" and "invitation link" in view.progress
    key = (access.access_dir(cfg) / "session.key")
    assert oct(key.stat().st_mode & 0o777) == "0o600"
    # another server key (APP_STUDY_SESSION_KEY), or a renewed invitation: the kept handle opens nothing
    monkeypatch.setenv(access.SESSION_KEY_ENV, "another-key")
    assert h.start(study, h.StudySession(), "", handle=stored["session"])[1].session.annotator == ""
    monkeypatch.delenv(access.SESSION_KEY_ENV)
    access.invite(cfg, ["ann1"], renew=True)
    _, view, forget = h.start(study, h.StudySession(), "", handle=stored["session"])
    assert view.session.annotator == "" and forget == {}               # the dead handle is dropped


def _post(url: str, body: bytes, content_type: str) -> tuple[int | None, bytes]:
    """A stranger's POST (no cookie, no token): the status and body, or None when the server closed
    the connection without answering."""
    import httpx

    try:
        reply = httpx.post(url, content=body, headers={"content-type": content_type}, timeout=120)
        return reply.status_code, reply.content
    except httpx.TransportError:
        return None, b""


def _multipart(payload: bytes) -> tuple[bytes, str]:
    boundary = "strangerprobe0123456789"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"files\"; filename=\"probe.bin\"\r\n"
            "Content-Type: application/octet-stream\r\n\r\n").encode() + payload + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


@pytest.mark.slow  # a live app (tests/test_slow_marks.py)
def test_a_stranger_uploads_nothing_to_the_study_server_whatever_the_size(data, tmp_path, monkeypatch):
    temp = tmp_path / "gradio-temp"                     # where gradio writes what is uploaded
    monkeypatch.setenv("GRADIO_TEMP_DIR", str(temp))
    demo = launch_study(data, port=free_port(), prevent_thread_lock=True)
    try:
        url = demo.local_url.rstrip("/")
        assert Path(demo.server_app.uploaded_file_dir) == temp
        for size in (6, 30 * 1024 * 1024):
            payload = (b"probe!" * (size // 6 + 1))[:size]
            body, kind = _multipart(payload)
            for route in ("/gradio_api/upload", "/gradio_api/upload/", "/gradio_api/upload?upload_id=x1",
                          "/gradio_api/process_recording", "/gradio_api/component_server"):
                status, answer = _post(url + route, body, kind)
                assert status == 403, (route, size, status, answer[:200])
                assert b"probe" not in answer and str(temp).encode() not in answer
            # no other route takes a large body either
            status, _ = _post(url + "/gradio_api/queue/join", b'{"data": ["' + payload + b'"]}', "application/json")
            assert size < 64 * 1024 or status == 413, (size, status)
        stored = [p for p in temp.rglob("*") if p.is_file() and b"probe!" in p.read_bytes()] if temp.exists() else []
        assert stored == []
        assert demo.max_file_size is not None and demo.max_file_size <= 64 * 1024
        # the page itself still works for an annotator
        from gradio_client import Client
        cfg = h.Study(str(data)).config
        token = access.invite(cfg, ["ann7"])["ann7"]
        shown = json.dumps(Client(demo.local_url, verbose=False, download_files=False)
                           .predict(token, api_name="/study_start"), default=str)
        assert "Welcome, ann7" in shown
    finally:
        demo.close()


def test_answers_an_older_version_split_by_case_count_as_one_annotator_for_the_researcher(cloze_examples,
                                                                                          tmp_path, monkeypatch):
    monkeypatch.delenv("APP_STUDY", raising=False)
    store_mod.forget_stores()
    study = h.Study(str(make_study(cloze_examples, tmp_path, display="frames", access="open")))
    _, view, _ = h.start(study, h.StudySession(), "Ann1")
    h.choose(study, view.session, "A")
    cfg = study.config
    folder = cfg.results / cfg.study_id
    older = read_jsonl(folder / "Ann1.jsonl")[0]               # as an older version wrote it: its own file
    (folder / "ann1.jsonl").write_text(json.dumps({**older, "annotator": "ann1", "answer": "B",
                                                   "answered_at_utc": "2999-01-01T00:00:00+00:00"}) + "\n")
    records = store_mod.all_records(cfg)
    assert [(r["annotator"], r["answer"]) for r in records] == [("Ann1", "B")]   # one person, newest answer
