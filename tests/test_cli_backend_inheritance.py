"""Every `run` command reaches the backend named by the global `--backend` or by `APP_BACKEND`, and
its own `--backend` overrides both (a real OpenAI-compatible server on 127.0.0.1 sees the model)."""
from __future__ import annotations

import pytest

from app import build_parser
from tests.helpers.openai_server import ScriptedOpenAIServer


def _run_commands(grounding: str, cloze: str, impact: str, out) -> dict[str, list[str]]:
    return {
        "grounding": ["run", "grounding", "--annotations", grounding, "--out", str(out / "g.jsonl"),
                      "--method", "rag", "--k", "1", "--limit", "1", "--no-progress"],
        "cloze": ["run", "cloze", "--data", cloze, "--out", str(out / "c.json"), "--limit", "1",
                  "--retry-sleep", "0", "--no-progress"],
        "impact": ["run", "impact", "--annotations", impact, "--out", str(out / "impact"),
                   "--tasks", "temporal", "--no-progress"],
    }


def _models_seen(server: ScriptedOpenAIServer) -> set[str]:
    return {body.get("model") for body in server.requests}


@pytest.fixture()
def commands(grounding_examples, cloze_examples, impact_examples, tmp_path, monkeypatch):
    monkeypatch.setenv("APP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    return _run_commands(str(grounding_examples / "annotations.json"), str(cloze_examples),
                         str(impact_examples / "annotations.json"), tmp_path)


@pytest.mark.parametrize("target", ["grounding", "cloze", "impact"])
@pytest.mark.parametrize("how", ["global-flag", "environment", "own-flag"])
def test_run_commands_use_the_backend_the_user_named(commands, target, how, monkeypatch):
    with ScriptedOpenAIServer(["None"]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        argv = list(commands[target])
        if how == "global-flag":
            argv = ["--backend", "openai:global-model"] + argv
        elif how == "environment":
            monkeypatch.setenv("APP_BACKEND", "openai:env-model")
        else:  # the run command's own flag beats both
            monkeypatch.setenv("APP_BACKEND", "openai:env-model")
            argv = ["--backend", "openai:global-model"] + argv + ["--backend", "openai:own-model"]
        args = build_parser().parse_args(argv)
        args.func(args)
    want = {"global-flag": "global-model", "environment": "env-model", "own-flag": "own-model"}[how]
    assert server.requests, f"run {target} never called the server"
    assert _models_seen(server) == {want}
