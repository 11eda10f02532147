"""`python app.py eval ... --json | head -c 100`: the reader goes away before the output is
written; the command ends quietly (no BrokenPipeError traceback), exit status 141 (128 + SIGPIPE)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_eval_into_a_closed_pipe_ends_without_a_traceback(tmp_path):
    gt = tmp_path / "g.jsonl"
    gt.write_text("".join(json.dumps({"qid": f"q{i}", "relevant_windows": [[i, i + 1]]}) + "\n"
                          for i in range(50)))
    pred = tmp_path / "p.jsonl"
    pred.write_text("".join(json.dumps({"qid": f"q{i}", "pred_relevant_windows": [[i, i + 1, 1]]}) + "\n"
                            for i in range(50)))
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the command writes: every write fails (EPIPE)
    try:
        done = subprocess.run([sys.executable, "app.py", "eval", "impact-temporal", "--gt", str(gt),
                               "--pred", str(pred), "--json"], cwd=ROOT, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120,
                              env={**os.environ, "HF_HUB_OFFLINE": "1"})
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr
    assert done.stderr == ""
    assert done.returncode == 141

