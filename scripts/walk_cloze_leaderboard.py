"""The Cloze walk (issue 36): one run file in cloze/results to its leaderboard row, traced.

    python scripts/walk_cloze_leaderboard.py [TREE]

Builds the example data in a temp folder, writes one released-format result file into
`cloze/results`, builds the leaderboard (the Compare panel's `refresh`) with every call of a
project function traced (each thread: the page's, the runs loader's, the leaderboard's head
start), and prints each thread's path through the project's files, how many files are visited,
how many times a thread comes back to a file it had left, and how often the reading, validating,
scoring and testing functions ran. TREE: a checkout (default: this one), e.g. an older tree
exported with `git archive`, to compare."""
from __future__ import annotations

import collections
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

WATCH = {"check_results", "_is_results_shape", "compact_results", "read_cloze_run", "compact_row", "prepare",
         "scores", "score_results", "significance", "warm_tests", "row_from_results", "run_rows", "table",
         "acc_difference", "load_runs", "read_run"}


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]).resolve()
    sys.path.insert(0, str(root))
    os.chdir(root)
    tmp = Path(tempfile.mkdtemp(prefix="cloze-walk-"))
    os.environ["APP_CACHE_DIR"] = str(tmp / "cache")
    subprocess.run([sys.executable, "-m", "examples.generate", "--out", str(tmp / "ex")], check=True,
                   capture_output=True)
    from examples.released_runs import write_released_runs
    examples = tmp / "ex" / "cloze"
    data = tmp / "data"
    (data / "cloze").mkdir(parents=True)
    for child in examples.iterdir():
        if child.name not in ("results", "runs"):
            (data / "cloze" / child.name).symlink_to(child)
    stems = sorted(p.name for p in (examples / "choices").iterdir() if p.is_dir())
    [released] = write_released_runs(stems, data / "cloze" / "results", 1, prefix="released-file", quirks=False)

    from components.cloze.ui.handlers import compare_panel, runs_panel
    from components.cloze.ui.session import RESOURCES, ClozeSession, ClozeTab
    runs_panel.forget_loaders()
    session = ClozeSession(data_dir=str(data), root=str(data / "cloze"))
    res = RESOURCES.get("walk")
    seqs: dict[str, list[str]] = collections.defaultdict(list)
    counts: collections.Counter = collections.Counter()
    lock = threading.Lock()
    roots = (str(root / "components"), str(root / "backends"))

    def tracer(frame, event, arg):
        if event != "call" or not frame.f_code.co_filename.startswith(roots):
            return None
        rel = os.path.relpath(frame.f_code.co_filename, root)
        with lock:
            seq = seqs[threading.current_thread().name]
            if not seq or seq[-1] != rel:
                seq.append(rel)
            if frame.f_code.co_name in WATCH:
                counts[f"{Path(rel).name}:{frame.f_code.co_name}"] += 1
        return None

    threading.settrace(tracer)
    sys.settrace(tracer)
    view = compare_panel.refresh(ClozeTab(str(data)), res, session, [], [], "")
    for thread in threading.enumerate():
        if thread.name in ("leaderboard-ahead", "runs-loader"):
            thread.join(60)
    sys.settrace(None)
    threading.settrace(None)
    assert released.stem in [r[0] for r in view.leaderboard["value"]["data"]]
    files = list(dict.fromkeys(f for seq in seqs.values() for f in seq))
    returns = 0
    for name, seq in seqs.items():
        print(f"{name}: " + " -> ".join(x.removeprefix("components/") for x in seq))
        left: set[str] = set()
        for prev, here in zip([None, *seq], seq):
            returns += here in left
            if prev is not None:
                left.add(prev)
    print(f"files visited: {len(files)}")
    print(f"returns to a file left before: {returns}")
    for name, n in sorted(counts.items()):
        print(f"  {name}: {n}")


if __name__ == "__main__":
    main()
