"""API keys never reach logs, traces, results, error messages or the terminal, even when the
server echoes the Authorization header back in its error bodies."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

from backends.base import GenerationParams, GenerationRequest, Message
from backends.config import ApiSettings
from backends.registry import resolve
from tests.helpers.openai_server import ScriptedOpenAIServer

KEY = "sk-robust-TEST-0123456789"
ROOT = Path(__file__).resolve().parents[2]


def _echo_script(server_ref: list, plan: list[str]):
    """Each request takes the next plan step; error bodies quote the request's own headers."""
    calls = {"n": 0}

    def script(body: dict):
        step = plan[min(calls["n"], len(plan) - 1)]
        calls["n"] += 1
        headers = server_ref[0].headers_seen[-1]
        auth = headers.get("Authorization") or headers.get("authorization") or ""
        if step == "ok":
            return '{"answer": "A", "reason": "the motion continues"}'
        status = int(step)
        return {"status": status, "body": {"error": {
            "message": f"request refused for Authorization: {auth} (key {auth.split()[-1]})",
            "type": "invalid_request_error", "headers": dict(headers)}}}
    return script


def _all_text(folder: Path) -> str:
    out = []
    for p in folder.rglob("*"):
        if p.is_file():
            out.append(p.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def test_key_never_leaks_from_backend_calls(tmp_path, caplog, capsys):
    caplog.set_level(logging.DEBUG)  # every logger, including openai / httpx / httpcore
    ref: list = []
    trace = tmp_path / "trace.jsonl"
    with ScriptedOpenAIServer(_echo_script(ref, ["ok", "500", "500", "401", "403", "ok"])) as server:
        ref.append(server)
        backend = resolve("openai:test-model", api=ApiSettings(base_url=server.url, api_key=KEY,
                                                                 max_retries=1), record_to=trace)
        assert KEY not in repr(backend) and KEY not in backend.backend_id
        req = lambda i: GenerationRequest(messages=[Message("user", [f"question {i}"])],  # noqa: E731
                                          params=GenerationParams(temperature=0.0, max_tokens=16),
                                          task="robustness", ref=f"r{i}")
        results, errors = [], []
        for i in range(4):
            try:
                results.append(backend.generate(req(i)))
            except Exception as exc:  # noqa: BLE001 - the message is what we check
                errors.append(f"{type(exc).__name__}: {exc}")
        # the server really did see the key, and did echo it
        assert any(KEY in str(h) for h in server.headers_seen)
    assert results[0].ok and results[0].text.startswith('{"answer"')
    failed = [r for r in results if not r.ok]
    assert failed or errors, "the 500/401 answers must surface as errors"
    messages = [r.error or "" for r in results] + errors
    assert any(m for m in messages), messages
    out = capsys.readouterr()
    haystacks = {"errors": "\n".join(messages), "log": caplog.text,
                 "log-args": "\n".join(str(r.args) for r in caplog.records),
                 "stdout": out.out, "stderr": out.err, "trace": _all_text(tmp_path),
                 "repr": repr(ApiSettings(api_key=KEY))}
    for name, text in haystacks.items():
        assert KEY not in text, f"API key leaked into {name}"
        assert "0123456789" not in text, f"part of the API key leaked into {name}"


def test_key_never_leaks_from_a_cloze_cli_run(tmp_path, cloze_examples):
    ref: list = []
    out = tmp_path / "out" / "results.json"
    trace = tmp_path / "out" / "trace.jsonl"
    with ScriptedOpenAIServer(_echo_script(ref, ["ok", "500", "ok", "401"])) as server:
        ref.append(server)
        env = {**os.environ, "OPENAI_API_KEY": KEY, "GRADIO_ANALYTICS_ENABLED": "False",
               "HF_HUB_OFFLINE": "1", "APP_LOG_LEVEL": "DEBUG"}
        proc = subprocess.run(
            [sys.executable, "app.py", "run", "cloze", "--data", str(cloze_examples), "--backend",
             "openai:test-model", "--base-url", server.url, "--out", str(out), "--record", str(trace),
             "--limit", "3", "--retry-sleep", "0", "--no-progress", "--dims", "S"],
            cwd=ROOT, capture_output=True, text=True, timeout=240, env=env)
        seen = list(server.headers_seen)
    assert any(KEY in str(h) for h in seen), "the CLI did not send the key from OPENAI_API_KEY"
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    # 0: all answered; 1: some calls failed (401/500) and are left for a rerun; 2: a user error
    assert proc.returncode in (0, 1, 2), proc.stderr[-3000:]
    produced = _all_text(tmp_path / "out") if (tmp_path / "out").exists() else ""
    assert produced, "nothing was written"
    for name, text in {"stdout": proc.stdout, "stderr": proc.stderr, "files": produced}.items():
        assert KEY not in text and "0123456789" not in text, f"API key leaked into {name}"


def test_session_settings_never_show_the_key():
    from components.settings.session import SessionSettings, badge

    settings = SessionSettings(backend="openai:gpt-4o", base_url="http://127.0.0.1:9/v1", api_key=KEY)
    state = settings.to_state()
    assert KEY not in badge(state) and KEY not in repr(settings)
    assert KEY not in repr(ApiSettings(base_url="http://x/v1", api_key=KEY))
