"""The example generators write the same bytes whatever number of CPUs the process may use (x264
picks its thread count, and with it its output, from the CPUs it sees unless told one thread)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.example_pieces import file_bytes

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow


def _write_pieces(out_dir: Path, cpus: set[int] | None) -> dict[str, bytes]:
    """Run the piece writer in a fresh interpreter, pinned to `cpus` from its start (as
    `taskset -c N` does) when given."""
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    subprocess.run([sys.executable, "-m", "tests.helpers.example_pieces", str(out_dir)], cwd=ROOT,
                   check=True, timeout=300, preexec_fn=pin, env={**os.environ, "PYOPENGL_PLATFORM": "osmesa"})
    return file_bytes(out_dir)


def test_generators_write_the_same_bytes_on_one_cpu_and_on_all(tmp_path):
    one_cpu = _write_pieces(tmp_path / "one-cpu", {min(os.sched_getaffinity(0))})
    every_cpu = _write_pieces(tmp_path / "every-cpu", None)
    assert len(one_cpu) >= 15 and set(one_cpu) == set(every_cpu)
    differing = sorted(name for name in one_cpu if one_cpu[name] != every_cpu[name])
    assert not differing, f"bytes depend on the CPU count: {differing}"
