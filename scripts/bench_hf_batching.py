"""Benchmark: `hf:` calls generated together vs one at a time, on CPU, for the tiny families
(issue 35).

Each family of tests/helpers/tiny_families.py (random weights, the family's real classes; built
once under the bench cache folder) answers `--items` requests (2 images of 64x48 and a question
of varying length, greedy, `--max-tokens` new tokens) from `--concurrency` threads, as `run
<task> --concurrency N` sends them: once with `hf:<folder>?batch=1` (one call at a time, as
before issue 35) and once with batching (up to N calls in one left-padded `generate`). Printed
per family: items/s of each, the ratio, CPU s per item, the batch sizes seen, and whether every
answer is the same. Both runs are in the same process, each after a warm-up call.

    python scripts/bench_hf_batching.py [--items 32] [--concurrency 8] [--max-tokens 16]
        [--families qwen2_5_vl,gemma3,...]
"""
from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import Row, cache_dir, loadavg, print_rows  # noqa: E402


def requests(items: int, max_tokens: int) -> list:
    from PIL import Image

    from backends.base import GenerationParams, GenerationRequest, Message

    out = []
    for i in range(items):
        pictures = [Image.new("RGB", (64, 48), ((37 * i + 50 * k) % 255, 90, 160)) for k in range(2)]
        out.append(GenerationRequest([Message("user", [*pictures, "Which one? " + "more words " * (i % 7)])],
                                     GenerationParams(max_tokens=max_tokens, temperature=0.0)))
    return out


def timed(backend, reqs: list, concurrency: int) -> tuple[float, float, list]:
    """(wall s, process CPU s, results) of every request sent from `concurrency` threads."""
    backend.generate(reqs[0])  # warm-up: weights loaded, first-call costs paid
    backend.batch_sizes.clear()
    t0, c0 = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        results = list(pool.map(backend.generate, reqs))
    return time.perf_counter() - t0, time.process_time() - c0, results


def run(items: int, concurrency: int, max_tokens: int, families: list[str]) -> list[Row]:
    import torch

    from backends.hf_local import HFBackend, LoadOptions
    from tests.helpers.tiny_families import build_tiny_family

    torch.set_num_threads(max(1, torch.get_num_threads()))
    rows = []
    reqs = requests(items, max_tokens)
    print(f"{items} requests (2 images, greedy, {max_tokens} new tokens) from {concurrency} threads, CPU")
    print(f"{'family':18s}{'alone it/s':>12s}{'batched it/s':>14s}{'ratio':>8s}{'CPU ms/it alone':>17s}"
          f"{'batched':>9s}  batches  same answers")
    for family in families:
        path = build_tiny_family(family, cache_dir() / "tiny-families" / family)
        alone = HFBackend(f"{path}/", options=LoadOptions(batch=1))
        together = HFBackend(f"{path}//")
        wall_a, cpu_a, res_a = timed(alone, reqs, concurrency)
        wall_b, cpu_b, res_b = timed(together, reqs, concurrency)
        same = all(a.ok and b.ok and a.text == b.text and a.usage == b.usage for a, b in zip(res_a, res_b))
        rate_a, rate_b = items / wall_a, items / wall_b
        sizes = together.batch_sizes
        print(f"{family:18s}{rate_a:12.1f}{rate_b:14.1f}{rate_b / rate_a:8.2f}{1000 * cpu_a / items:17.0f}"
              f"{1000 * cpu_b / items:9.0f}  {len(sizes)} (mean {sum(sizes) / max(1, len(sizes)):.1f})  {same}")
        rows.append(Row("hf batching", f"{family}: items/s batched / one at a time (c={concurrency}, CPU)",
                        f"{rate_b / rate_a:.2f}x ({rate_b:.1f} / {rate_a:.1f} it/s; answers equal: {same})",
                        "", None, loadavg()))
    return rows


def main(argv: list[str] | None = None) -> int:
    from tests.helpers.tiny_families import FAMILIES

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=32)
    ap.add_argument("--concurrency", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=16)
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated (default: all six)")
    args = ap.parse_args(argv)
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    print_rows(run(args.items, args.concurrency, args.max_tokens, families))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
