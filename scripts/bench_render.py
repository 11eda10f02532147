"""Benchmark: a 36-frame 512x512 turntable of the body against 36 x one frame, and what the page's
3D view loads (the mesh once, then a few KB per painting) against a GLB of each painting.

The turntable (one scene, one renderer, MP4 written) is compared with
  - 36 x one frame: `render_views` of a single angle, a new scene + renderer each time (the
    reference) -> the goal, <= 1.2x;
  - 36 x one warm frame: the GL cost alone (same scene, pose changed): informational, it shows
    what the turntable adds beyond drawing (scene set-up, mesh upload, MP4 encode).
Wall and CPU time are both printed: on a shared machine the CPU time is the steadier one.

    python scripts/bench_render.py [--frames 36] [--size 512]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import Row, print_rows  # noqa: E402

GOAL = 1.2


def _timed(fn) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process, all threads) of fn(). On a loaded machine
    the CPU time is the steadier number: OSMesa renders on the CPU."""
    w, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w, time.process_time() - c


def run(quick: bool = False, frames: int = 36, size: int = 512, repeats: int = 2) -> list[Row]:
    import numpy as np

    from components.impact.body import load_body
    import trimesh

    from components.impact.body_mesh import mesh_bytes, painting_payload
    from components.impact.painting import rotation_y, vertex_colors
    from components.impact.render import BodyScene, ensure_gl_platform, render_turntable, render_views
    from components.media import write_frames

    t0 = time.perf_counter()
    body = load_body()
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    platform = ensure_gl_platform()
    probe_s = time.perf_counter() - t0
    mask = np.zeros(body.num_vertices, dtype=bool)
    mask[: body.num_vertices // 10] = True
    colors = vertex_colors(body, mask)
    angles = [360.0 * i / frames for i in range(frames)]

    def warm_frames():
        with BodyScene(body.vertices, body.faces, colors, size, size) as scene:
            scene.render()  # first draw uploads the mesh: not part of "one frame"
            w, c = time.perf_counter(), time.process_time()
            for a in angles:
                scene.render(rotation_y(np.radians(a)))
            return time.perf_counter() - w, time.process_time() - c

    with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
        out = Path(tmp) / "turntable.mp4"
        turn, warm = [], []
        for _ in range(repeats):  # interleaved, best of: the machine is shared
            turn.append(_timed(lambda: render_turntable(body, colors, out, frames=frames, size=size)))
            warm.append(warm_frames())
        cold = _timed(lambda: [render_views(body, colors, [a], size) for a in angles])
        mp4_kb = out.stat().st_size / 1024
        enc = _timed(lambda: write_frames(render_views(body, colors, angles[:1], size) * frames,
                                          Path(tmp) / "enc.mp4", 12.0))
    t0 = time.perf_counter()
    painting_kb = len(json.dumps(painting_payload(colors))) / 1024
    painting_ms = 1000 * (time.perf_counter() - t0)
    mesh_kb = len(mesh_bytes(body.vertices, body.faces)) / 1024
    # the reference: what gr.Model3D was sent for each painting (a GLB with vertex colours)
    glb_kb = len(trimesh.Trimesh(vertices=body.vertices, faces=body.faces, vertex_colors=colors,
                                 process=False).export(file_type="glb")) / 1024
    tw, tc = min(x[0] for x in turn), min(x[1] for x in turn)
    ww, wc = min(x[0] for x in warm), min(x[1] for x in warm)
    print(f"body {body.kind}: {body.num_vertices} vertices, {len(body.faces)} faces, loaded in "
          f"{load_s:.2f} s; GL platform {platform} (probe {probe_s:.2f} s, once per process)")
    print(f"turntable {frames} x {size}x{size} -> MP4 ({mp4_kb:.0f} KB): wall {tw:.2f} s, CPU {tc:.2f} s "
          f"(best of {repeats}: {', '.join(f'{x[0]:.2f}' for x in turn)} s wall)")
    print(f"{frames} x one warm frame (same scene): wall {ww:.2f} s ({1000 * ww / frames:.0f} ms/frame), "
          f"CPU {wc:.2f} s -> ratio wall {tw / ww:.2f}x, CPU {tc / wc:.2f}x (goal <= {GOAL}x)")
    print(f"{frames} x one cold frame (new scene + renderer each): wall {cold[0]:.2f} s, CPU "
          f"{cold[1]:.2f} s -> turntable ratio wall {tw / cold[0]:.2f}x, CPU {tc / cold[1]:.2f}x")
    print(f"(one single-frame render + MP4 encode of {frames} frames: wall {enc[0]:.2f} s, CPU {enc[1]:.2f} s)")
    print(f"3D view: mesh {mesh_kb:.0f} KB once, then {painting_kb:.1f} KB per painting (made in "
          f"{painting_ms:.0f} ms) vs a {glb_kb:.0f} KB GLB per painting: {glb_kb / painting_kb:.0f}x less")
    return [Row("render", f"turntable {frames}x{size}px / {frames} x one-frame render (wall)",
                f"{tw / cold[0]:.2f}x ({tw:.2f} s / {cold[0]:.2f} s)", f"<= {GOAL}x", tw / cold[0] <= GOAL),
            Row("render", "same, CPU time", f"{tc / cold[1]:.2f}x ({tc:.2f} s / {cold[1]:.2f} s)",
                f"<= {GOAL}x", tc / cold[1] <= GOAL),
            Row("render", f"turntable / {frames} warm frames, same scene (wall)",
                f"{tw / ww:.2f}x ({ww:.2f} s)"),
            Row("render", f"turntable / {frames} warm frames, same scene (CPU)",
                f"{tc / wc:.2f}x ({wc:.2f} s)"),
            Row("render", "GL platform probe (first render in a process)", f"{probe_s:.2f} s ({platform})"),
            Row("render", "3D view: KB per painting vs a GLB per painting",
                f"{painting_kb:.1f} KB vs {glb_kb:.0f} KB ({glb_kb / painting_kb:.0f}x less; mesh "
                f"{mesh_kb:.0f} KB once, {body.kind}, {body.num_vertices} v)")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=36)
    ap.add_argument("--size", type=int, default=512)
    args = ap.parse_args(argv)
    print_rows(run(frames=args.frames, size=args.size))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
