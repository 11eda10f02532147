"""No test asserts a duration (docs/benchmarks.md): timings live in scripts/bench_*.py, which print
them against a reference measured in the same run. This scans every test module's syntax tree for
an assertion that bounds a measured time from above (a slow machine can fail it):

  - a comparison whose smaller side holds a clock reading (`time.perf_counter()`, `monotonic()`,
    `time()`, `process_time()`), a name assigned from one in the same function, or a name that says
    it is a duration (`elapsed`, `took`, `latency`);
  - a comparison with a time budget (`BUDGET_S`, `..._LIMIT_S`, `LOAD_RATIO`), either way round.

Allowed, by their form: a wait loop's bound, `assert time.monotonic() < deadline` (the test waits
for an answer and names what never came), and a lower bound (`took >= N`) that sleeps the test
scripted make true on any machine.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent
CLOCKS = {"perf_counter", "monotonic", "time", "process_time", "perf_counter_ns", "monotonic_ns",
          "time_ns", "thread_time"}
DURATION_NAME = re.compile(r"elapsed|took|latency", re.IGNORECASE)
BUDGET_NAME = re.compile(r"BUDGET|LIMIT_S\b|LOAD_RATIO")
UPPER_BOUNDED = {ast.Lt: "left", ast.LtE: "left", ast.Gt: "right", ast.GtE: "right"}


def _is_clock(node: ast.AST) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in CLOCKS and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "time")


def _names(node: ast.AST) -> list[str]:
    out = []
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            out.append(sub.id)
        elif isinstance(sub, ast.Attribute):
            out.append(sub.attr)
    return out


def _reads_clock(node: ast.AST, tainted: set[str]) -> bool:
    """Whether a clock reading (or a name holding one) makes up `node`; the time module's other
    calls (`time.strftime(..., time.gmtime(time.time()))`: a date, not a duration) end the trail."""
    if _is_clock(node):
        return True
    if isinstance(node, ast.Name):
        return node.id in tainted
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "time"):
        return False
    return any(_reads_clock(child, tainted) for child in ast.iter_child_nodes(node))


def _clock_names(function: ast.AST) -> set[str]:
    """Names holding clock readings in `function` (start, t0, deadline, a list of send times, the
    gaps between them, ...), followed through assignments, loops and `.append`."""
    tainted: set[str] = set()
    while True:
        before = len(tainted)
        for node in ast.walk(function):
            pairs = []
            if isinstance(node, ast.Assign):
                pairs = [(target, node.value) for target in node.targets]
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and node.value is not None:
                pairs = [(node.target, node.value)]
            elif isinstance(node, (ast.For, ast.comprehension)):
                pairs = [(node.target, node.iter)]
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr in ("append", "extend") and isinstance(node.func.value, ast.Name)):
                pairs = [(node.func.value, arg) for arg in node.args]
            for target, value in pairs:
                if _reads_clock(value, tainted):
                    tainted.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        if len(tainted) == before:
            return tainted


def _timed(node: ast.AST, tainted: set[str]) -> bool:
    return (any(_is_clock(sub) for sub in ast.walk(node))
            or any(name in tainted or DURATION_NAME.search(name) for name in _names(node)))


def _is_wait_bound(left: ast.AST, op: ast.cmpop, right: ast.AST) -> bool:
    """`time.monotonic() < deadline`: a loop's bound on how long it waits for an answer."""
    return (_is_clock(left) and isinstance(op, (ast.Lt, ast.LtE)) and isinstance(right, ast.Name)
            and "deadline" in right.id.lower())


def timed_asserts(source: str) -> list[tuple[int, str]]:
    """(line, text) of every assertion in `source` that bounds a measured time from above."""
    tree = ast.parse(source)
    lines = source.splitlines()
    found = []
    scopes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    seen: set[int] = set()
    for scope in reversed(scopes):   # innermost functions first: their own assignments count
        tainted = _clock_names(scope)
        for node in ast.walk(scope):
            if not isinstance(node, ast.Assert) or id(node) in seen:
                continue
            seen.add(id(node))
            for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
                sides = [compare.left, *compare.comparators]
                for left, op, right in zip(sides, compare.ops, sides[1:]):
                    if type(op) not in UPPER_BOUNDED or _is_wait_bound(left, op, right):
                        continue
                    smaller = left if UPPER_BOUNDED[type(op)] == "left" else right
                    budget = any(BUDGET_NAME.search(n) for n in _names(left) + _names(right))
                    if budget or _timed(smaller, tainted):
                        found.append((node.lineno, lines[node.lineno - 1].strip()))
                        break
                else:
                    continue
                break
    for compare in (n for n in ast.walk(tree) if isinstance(n, ast.Compare)):   # `if took > BUDGET_S:`
        operands = [compare.left, *compare.comparators]
        if any(BUDGET_NAME.search(name) for side in operands for name in _names(side)):
            found.append((compare.lineno, lines[compare.lineno - 1].strip()))
    return sorted(set(found))


def test_no_test_asserts_a_duration():
    found = []
    for path in sorted(TESTS.rglob("*.py")):
        if ".cache" in path.parts:
            continue
        found += [f"{path.relative_to(TESTS.parent)}:{line}: {text}"
                  for line, text in timed_asserts(path.read_text(encoding="utf-8"))]
    assert not found, "timed assertions (move the timing to a scripts/bench_*.py):\n" + "\n".join(found)


def test_the_scan_finds_the_timed_forms_and_leaves_the_waits():
    timed = [
        "def f():\n    start = time.monotonic()\n    g()\n    assert time.monotonic() - start < 3\n",
        "def f():\n    t = time.perf_counter()\n    g()\n    took = time.perf_counter() - t\n    assert took < 5\n",
        "def f(elapsed):\n    assert elapsed < 1.4\n",
        "def f(seconds):\n    assert seconds < CALL_LIMIT_S, seconds\n",
        "def f(times):\n    times.append(time.monotonic())\n    assert 0.95 <= times[1] - times[0] < 2.0\n",
        "def f():\n    sent = [time.monotonic() for _ in g()]\n    gaps = [b - a for a, b in zip(sent, sent[1:])]\n"
        "    assert max(gaps) < 2\n",
        "def f(took):\n    assert not took > BUDGET_S\n",
        "def f(a, b):\n    assert a <= LOAD_RATIO * b\n",
        "def f(took, slow):\n    if took >= BUDGET_S:\n        slow.append(took)\n    assert not slow\n",
        "def f():\n    t0 = time.process_time()\n    g()\n    assert 0.1 > time.process_time() - t0\n",
    ]
    for source in timed:
        assert timed_asserts(source), source
    allowed = [
        "def f():\n    deadline = time.monotonic() + 120\n    while g():\n"
        "        assert time.monotonic() < deadline, 'never drawn'\n",
        "def f(box):\n    assert box['took'] >= 6 * 1.0\n",
        "def f(gaps):\n    assert all(gap >= 0.95 for gap in gaps)\n",
        "def f(result):\n    assert result.latency_s > 0\n",
        "def f():\n    future = time.strftime('%a', time.gmtime(time.time() + 10))\n    assert 8 <= g(future) <= 10\n",
        "def f(seconds):\n    assert 5 <= int(seconds) and len(seconds) < 3\n",
    ]
    for source in allowed:
        assert not timed_asserts(source), source
