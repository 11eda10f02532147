"""`app.py eval cloze` and `app.py run cloze` through the real parser."""
import json

import pytest

from app import build_parser
from components.base.errors import UserError
from tests.helpers.openai_server import ScriptedOpenAIServer


def _run(argv):
    args = build_parser().parse_args(argv)
    return args.func(args)


def test_eval_prints_the_documented_json(cloze_examples, capsys):
    assert _run(["eval", "cloze", "--results", str(cloze_examples / "results" / "edge1.json"), "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    for key in ("S", "A", "P", "acc", "3/3", "2/3", "1/3", "0/3", ">=1", ">=2", "stems",
                "invalid_entries_skipped", "error_source", "strict", "parse_rate"):
        assert key in m
    assert set(m["error_source"]) == {"A", "P"}
    assert set(m["error_source"]["A"]) == {"Early", "Late", "Wide"}
    assert m["stems"] == 6 and m["invalid_entries_skipped"] == 0
    # every score with its 95 % interval over stems (the paper's unit), fixed seed, resamples stated
    cis = m["intervals"]
    assert {"S", "A", "P", "acc", "3/3", "2/3", "1/3", "0/3", ">=1", ">=2", "strict acc", "parse_rate"} <= set(cis)
    for key in ("S", "A", "P", "acc", ">=1", "3/3"):
        ci = cis[key]
        assert (ci["unit"], ci["units"], ci["resamples"], ci["seed"], ci["level"]) == ("stems", 6, 2000, 0, 0.95)
        assert ci["value"] == round(m[key], 2) and ci["low"] <= ci["value"] <= ci["high"]
    assert _run(["eval", "cloze", "--results", str(cloze_examples / "results" / "edge1.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["intervals"] == cis  # same file, same interval


def test_eval_table_and_errors(tmp_path, capsys, cloze_examples):
    assert _run(["eval", "cloze", "--results", str(cloze_examples / "results" / "edge1.json")]) == 0
    table = capsys.readouterr().out
    assert "error source A" in table and "95 % intervals over 6 stems" in table and "seed 0" in table
    with pytest.raises(UserError, match="missing.json"):
        _run(["eval", "cloze", "--results", str(tmp_path / "missing.json")])
    (tmp_path / "bad.json").write_text("{oops")
    with pytest.raises(UserError, match="bad.json"):
        _run(["eval", "cloze", "--results", str(tmp_path / "bad.json")])


def test_eval_human_files(tmp_path, capsys):
    om = {"A": "GT", "B": "Early", "C": "Late", "D": "Wide"}
    for who, ans in (("a1", "A"), ("a2", "D")):
        (tmp_path / f"{who}.jsonl").write_text(json.dumps(
            {"stem": "s", "dim": "A", "answer": ans, "option_map": om}) + "\n")
    assert _run(["eval", "cloze", "--human", "--json", "--results",
                 str(tmp_path / "a1.jsonl"), str(tmp_path / "a2.jsonl")]) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["A"] == 0.0 and m["error_source"]["A"]["Wide"] == 100.0


def test_run_baseline_resumes(cloze_examples, tmp_path, capsys):
    out = tmp_path / "r.json"
    base = ["run", "cloze", "--data", str(cloze_examples), "--backend", "baseline", "--out", str(out),
            "--no-progress"]
    assert _run(base + ["--limit", "2", "--dims", "S,P"]) == 0
    first = json.loads(out.read_text())
    assert sum(len(v) for v in first.values()) == 2
    assert _run(base + ["--dims", "S,P"]) == 0
    assert "2 already done" in capsys.readouterr().out
    results = json.loads(out.read_text())
    assert sum(len(v) for v in results.values()) == 12
    assert all(set(v) == {"S", "C"} for v in results.values())
    ref = json.loads((cloze_examples / "results" / "edge1.json").read_text())
    for stem, dims in results.items():
        for dim, entry in dims.items():
            assert entry["answer"] == ref[stem][dim]["answer"]   # same baseline, same answers


def test_run_with_an_api_model(cloze_examples, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "api.json"
    with ScriptedOpenAIServer(['{"answer": "B", "reason": "r"}']) as server:
        assert _run(["run", "cloze", "--data", str(cloze_examples), "--backend", "openai:test-model",
                     "--base-url", server.url, "--out", str(out), "--limit", "2", "--dims", "A",
                     "--retry-sleep", "0", "--concurrency", "2", "--no-progress"]) == 0
        assert len(server.requests) == 2
    res = json.loads(out.read_text())
    entries = [d["A"] for d in res.values()]
    assert len(entries) == 2 and all(e["answer"] == "B" and e["backend"] == "openai:test-model" for e in entries)


def test_run_sends_the_released_max_tokens_and_takes_max_tokens_and_prompt_style(cloze_examples, tmp_path,
                                                                                monkeypatch):
    from components.cloze.prompts import eval_prompt

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    def tokens(body):
        return body.get("max_tokens", body.get("max_completion_tokens"))

    base = ["run", "cloze", "--data", str(cloze_examples), "--backend", "openai:test-model",
            "--limit", "1", "--dims", "A", "--retry-sleep", "0", "--no-progress"]
    with ScriptedOpenAIServer(['{"answer": "B", "reason": "r"}']) as server:
        assert _run(base + ["--base-url", server.url, "--out", str(tmp_path / "a.json")]) == 0
        assert _run(base + ["--base-url", server.url, "--out", str(tmp_path / "b.json"),
                            "--max-tokens", "1000", "--prompt-style", "open"]) == 0
        first, second = server.requests
    assert tokens(first) == 8192 and first["messages"][0]["content"][0]["text"] == eval_prompt("api")
    assert tokens(second) == 1000 and second["messages"][0]["content"][0]["text"] == eval_prompt("open")
    with pytest.raises(SystemExit):
        _run(base + ["--out", str(tmp_path / "c.json"), "--prompt-style", "bold"])


def test_run_records_truncated_replies_and_eval_counts_them(cloze_examples, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "t.json"
    with ScriptedOpenAIServer([{"content": '{"answer": "B", "rea', "finish_reason": "length"}]) as server:
        assert _run(["run", "cloze", "--data", str(cloze_examples), "--backend", "openai:test-model",
                     "--base-url", server.url, "--out", str(out), "--limit", "2", "--dims", "A",
                     "--retry-sleep", "0", "--no-progress"]) == 0
    entries = [d["A"] for d in json.loads(out.read_text()).values()]
    assert len(entries) == 2 and all(e["truncated"] and e["answer"] is None for e in entries)
    capsys.readouterr()
    assert _run(["eval", "cloze", "--results", str(out), "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["invalid_kinds"]["truncated"] == 2 and m["A"] == 0.0 and "A" in m["nothing_valid"]


def test_the_interval_does_not_depend_on_the_order_of_the_shards(tmp_path, capsys):
    import random

    from components.common import stats
    from components.cloze.metrics import unit_scores

    rng = random.Random(3)
    om = {"A": "GT", "B": "Rand1", "C": "Rand2", "D": "Rand3"}
    results = {f"s{i:02d}": {d: {"answer": rng.choice("AB"), "expected": "A", "option_map": om}
                             for d in ("S", "A", "C")} for i in range(40)}
    stems = sorted(results)
    # the stems' order matters to a bootstrap that is not told to sort them: the test can fail
    forward = stats.estimates(unit_scores(results, stems))["acc"]
    backward = stats.estimates(unit_scores(results, stems[::-1]))["acc"]
    assert (forward.low, forward.high) != (backward.low, backward.high)
    (tmp_path / "one.json").write_text(json.dumps({s: results[s] for s in stems[:20]}))
    (tmp_path / "two.json").write_text(json.dumps({s: results[s] for s in reversed(stems[20:])}))
    cis = []
    for order in (["one.json", "two.json"], ["two.json", "one.json"]):
        assert _run(["eval", "cloze", "--json", "--results", *(str(tmp_path / f) for f in order)]) == 0
        cis.append(json.loads(capsys.readouterr().out)["intervals"])
    assert cis[0] == cis[1] and cis[0]["acc"]["low"] == round(forward.low, 2)


# -- issue 28: run outputs -------------------------------------------------------------------------

ANSWER = '{"answer": "B", "reason": "r"}'


def _api_run(cloze_examples, url, out, *extra):
    from app import main

    return main(["run", "cloze", "--data", str(cloze_examples), "--backend", "openai:model-a",
                 "--base-url", url, "--out", str(out), "--retry-sleep", "0", "--no-progress", *extra])


def test_a_resume_with_another_model_is_refused_naming_both(cloze_examples, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "c.json"
    with ScriptedOpenAIServer([ANSWER]) as server:
        assert _api_run(cloze_examples, server.url, out, "--limit", "2", "--dims", "S") == 0
        capsys.readouterr()
        rc = _api_run(cloze_examples, server.url, out, "--dims", "S", "--backend", "openai:model-b")
        err = capsys.readouterr().err
        assert rc == 2 and len(server.requests) == 2              # nothing asked of model B
        assert "openai:model-a" in err and "openai:model-b" in err and "c.json" in err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
        rc = _api_run(cloze_examples, server.url, out, "--dims", "S", "--prompt-style", "open")
        err = capsys.readouterr().err
        assert rc == 2 and "prompt_style api" in err and "prompt_style open" in err
        rc = _api_run(cloze_examples, server.url, out, "--dims", "S", "--max-tokens", "100")
        err = capsys.readouterr().err
        assert rc == 2 and "max_tokens 8192" in err and "max_tokens 100" in err
        assert _api_run(cloze_examples, server.url, out, "--dims", "S", "--limit", "3") == 0  # same: resumes
    entries = [d["S"] for d in json.loads(out.read_text()).values()]
    assert len(entries) == 3 and {e["backend"] for e in entries} == {"openai:model-a"}
    side = [json.loads(line) for line in (tmp_path / "c.json.progress.jsonl").read_text().splitlines()]
    assert all(r["backend"] == "openai:model-a" and r["prompt_style"] == "api" for r in side)


HOLD_THE_RUN = """
import sys
from app import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_second_run_on_the_same_output_is_refused_naming_the_first(cloze_examples, tmp_path, monkeypatch,
                                                                       capsys):
    import os
    import subprocess
    import sys
    import time

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = tmp_path / "c.json"
    env = {**os.environ, "OPENAI_API_KEY": "sk-test"}
    with ScriptedOpenAIServer([{"content": ANSWER, "delay": 0.5}]) as server:
        first = subprocess.Popen(
            [sys.executable, "-c", HOLD_THE_RUN, "run", "cloze", "--data", str(cloze_examples),
             "--backend", "openai:model-a", "--base-url", server.url, "--out", str(out), "--dims", "S",
             "--limit", "4", "--retry-sleep", "0", "--no-progress"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=os.getcwd())
        try:
            deadline = time.monotonic() + 120
            while not server.requests and first.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)   # the first run holds the output once it asks its first question
            assert first.poll() is None, first.communicate()
            rc = _api_run(cloze_examples, server.url, out, "--dims", "S", "--limit", "4")
            err = capsys.readouterr().err
        finally:
            first.communicate(timeout=120)
    assert rc == 2 and f"process {first.pid}" in err and "c.json" in err and "Traceback" not in err
    assert first.returncode == 0
    side = (tmp_path / "c.json.progress.jsonl").read_text().splitlines()
    assert len(side) == 4 and len(json.loads(out.read_text())) == 4


def test_a_persistent_http_500_is_sent_9_times_as_released(cloze_examples, tmp_path, monkeypatch, capsys):
    # released eval.py: 3 attempts, each through the openai client's 1 try + 2 retries
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with ScriptedOpenAIServer([{"status": 500, "headers": {"Retry-After": "0"}}]) as server:
        rc = _api_run(cloze_examples, server.url, tmp_path / "c.json", "--dims", "S", "--limit", "1")
    assert rc == 1 and len(server.requests) == 9
    assert "3 attempt(s)" in capsys.readouterr().err


def test_a_hung_server_times_out_as_asked_and_stops_the_run(cloze_examples, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("APP_API_TIMEOUT_S", "0.2")     # the variable, overridden by the flag below
    out = tmp_path / "c.json"
    with ScriptedOpenAIServer([{"content": ANSWER, "delay": 3}]) as server:
        rc = _api_run(cloze_examples, server.url, out, "--dims", "S", "--limit", "6",
                      "--stop-after-failures", "1")
        err = capsys.readouterr().err
        # one question: two requests timed out in a row, the server is taken as hung (issue 38:
        # before, 9 requests of 3 tries x 3 attempts)
        assert len(server.requests) == 2
    assert rc == 1 and "timed out" in err and "did not answer within 0.2 s" in err
    assert "stopped: 1 cloze questions in a row failed" in err and "5 more were not asked" in err
    assert "rerun the same command" in err
    with ScriptedOpenAIServer([{"content": ANSWER, "delay": 0.6}]) as server:
        assert _api_run(cloze_examples, server.url, out, "--dims", "S", "--limit", "1",
                        "--timeout", "5") == 0                    # the flag wins over the variable
    monkeypatch.setenv("APP_API_TIMEOUT_S", "soon")
    from app import main
    assert main(["run", "cloze", "--data", str(cloze_examples), "--backend", "openai:model-a",
                 "--out", str(tmp_path / "d.json"), "--no-progress"]) == 2
    assert "APP_API_TIMEOUT_S must be a number of seconds" in capsys.readouterr().err
