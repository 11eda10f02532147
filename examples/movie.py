"""A synthetic 'movie' for the window-search tab (deterministic; same bytes every run).

    generate(out_dir, seed=0) writes
      out_dir/movies/m01.mp4    14:40 of drawn scenes, 320x180 at 8 fps, H.264 (keyframe every 2 s)
      out_dir/movies/m01.srt    dialogue in which the characters address each other by name
      out_dir/annotations.json  7 confusable query pairs (docs/formats.md); every interval is a
                                scene boundary of the script below, so it is exact by construction
      out_dir/memory/m01.json   character memory with two reference frames per character
                                (frames of the movie, taken from scenes that no query asks about)

Three characters who look different: Lloyd (tall, blue rectangle body, brown hair), Harry (short,
orange body, yellow hair) and Mary (green triangle dress, red hair). Four settings: a snowy street at
night with falling flakes, a desert road with cacti and sun, a kitchen, an office. Actions repeat
across settings (walk, sit, wave, jump, stand), so paired queries share characters and action and
differ in one detail. Several queried scenes straddle a 180 s chunk edge (165-228, 320-385,
705-745), so a window must be expanded to cover them.

The writer uses PyAV directly (generator code, not app runtime) to pin the encoder settings:
libx264, one thread, fixed GOP and CRF, no scene-cut keyframes: deterministic output.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from collections.abc import Callable
from pathlib import Path
from components.base.io import atomic_temp_path, commit_temp
from examples.example_runs import write_grounding_runs

WIDTH, HEIGHT, FPS = 320, 180, 8
GROUND_Y = 162  # feet line
MOVIE_ID = "m01"


@dataclass(frozen=True)
class Scene:
    start: float
    end: float
    setting: str                 # snow | desert | kitchen | office
    cast: tuple[str, ...]        # who is on screen
    action: str                  # stand | walk | sit | wave | jump | empty
    lines: tuple[tuple[float, float, str], ...] = field(default=())  # (start, end, text), absolute


SCRIPT: tuple[Scene, ...] = (
    Scene(0, 24, "office", ("Lloyd",), "stand", (
        (2, 6, "Good morning. I'm Lloyd."), (10, 14, "Harry, are you coming in today?"),
        (18, 22, "Another day at the office."))),
    Scene(24, 70, "office", ("Lloyd",), "jump", (
        (28, 33, "Harry, look at me! I got the promotion!"), (40, 45, "Up and down, up and down!"),
        (55, 60, "Lloyd, stop jumping around."))),
    Scene(70, 96, "kitchen", ("Mary",), "stand", (
        (72, 77, "Hello there, I'm Mary."), (84, 90, "The kettle is on."))),
    Scene(96, 150, "kitchen", ("Mary",), "wave", (
        (100, 105, "Lloyd! Over here, Lloyd!"), (115, 120, "Hi! Can you see me?"),
        (135, 140, "Mary, we see you."))),
    Scene(150, 165, "snow", (), "empty", ((152, 158, "It's getting dark and cold."),)),
    Scene(165, 228, "snow", ("Lloyd", "Harry"), "walk", (
        (168, 173, "Harry, it's freezing out here."), (185, 191, "Keep walking, Lloyd. Almost there."),
        (205, 211, "My toes are numb."), (218, 224, "Look at all that snow."))),
    Scene(228, 250, "snow", ("Harry",), "stand", ((232, 238, "Hey, I'm Harry. Wait for me!"),)),
    Scene(250, 290, "snow", ("Mary",), "jump", (
        (254, 259, "Mary, careful, it's slippery!"), (268, 273, "Whee! I love the snow!"))),
    Scene(290, 320, "office", ("Harry",), "stand", (
        (294, 300, "Harry, the boss wants you."), (306, 312, "On my way."))),
    Scene(320, 385, "office", ("Harry",), "walk", (
        (324, 330, "Excuse me, coming through."), (345, 351, "Where is that meeting room?"),
        (370, 376, "Harry, you passed it."))),
    Scene(385, 440, "kitchen", ("Harry", "Mary"), "sit", (
        (389, 395, "Mary, pass the sugar please."), (410, 416, "Here you go, Harry."),
        (428, 434, "Nice to sit down for a while."))),
    Scene(440, 460, "desert", (), "empty", ((443, 449, "Nothing but sand for miles."),)),
    Scene(460, 530, "desert", ("Lloyd", "Harry"), "walk", (
        (464, 470, "Lloyd, how far is the next town?"), (490, 496, "Just keep walking, Harry."),
        (515, 521, "This road never ends."))),
    Scene(530, 575, "desert", ("Lloyd", "Harry"), "wave", (
        (534, 540, "Harry, a truck! Wave at it!"), (555, 561, "Hey! Over here! Stop!"))),
    Scene(575, 600, "desert", ("Mary",), "stand", ((578, 584, "Mary here. I found the road."),)),
    Scene(600, 640, "desert", ("Mary",), "jump", (
        (604, 610, "Yes! I made it!"), (622, 628, "The sand is so hot!"))),
    Scene(640, 665, "kitchen", ("Lloyd",), "stand", ((644, 650, "Mary, are you home?"),)),
    Scene(665, 705, "kitchen", ("Lloyd", "Mary"), "sit", (
        (669, 675, "Lloyd, sit down, dinner is ready."), (688, 694, "Thank you, Mary."))),
    Scene(705, 745, "kitchen", ("Harry",), "wave", (
        (709, 715, "Hi Mary! Hi Lloyd!"), (728, 734, "I'm back!"))),
    Scene(745, 790, "office", ("Lloyd",), "sit", (
        (749, 755, "Finally, my own desk."), (770, 776, "Harry, don't touch my chair."))),
    Scene(790, 815, "office", ("Harry", "Lloyd"), "stand", ((794, 800, "Lloyd, meet the new manager."),)),
    Scene(815, 860, "office", ("Mary",), "walk", (
        (819, 825, "Good morning, everyone."), (840, 846, "Harry, where's my desk?"))),
    Scene(860, 880, "snow", (), "empty", ((864, 870, "The end."),)),
)
DURATION = SCRIPT[-1].end

# (pair_id, contrast attribute, (target scene start, query), (confusable scene start, query))
PAIRS = (
    ("p0001", "setting", (165, "Lloyd and Harry walk together on a snowy street at night."),
     (460, "Lloyd and Harry walk together along a desert road.")),
    ("p0002", "subject", (96, "Mary waves in the kitchen."), (705, "Harry waves in the kitchen.")),
    ("p0003", "core action", (24, "Lloyd jumps up and down in the office."),
     (745, "Lloyd sits at a desk in the office.")),
    ("p0004", "setting", (250, "Mary jumps on a snowy street at night."),
     (600, "Mary jumps on a desert road under the sun.")),
    ("p0005", "subject", (385, "Harry and Mary sit together in the kitchen."),
     (665, "Lloyd and Mary sit together in the kitchen.")),
    ("p0006", "subject", (320, "Harry walks across the office."), (815, "Mary walks across the office.")),
    ("p0007", "core action", (460, "Lloyd and Harry walk along a desert road in the sun."),
     (530, "Lloyd and Harry wave their arms on a desert road.")),
)

# Reference frames for the character memory come from scenes no query asks about.
REFERENCES = {"Lloyd": (12.0, 652.0), "Harry": (240.0, 300.0), "Mary": (80.0, 590.0)}
CHARACTERS = (("C1", "Lloyd"), ("C2", "Harry"), ("C3", "Mary"))


# ----------------------------------------------------------------------------- drawing

@dataclass(frozen=True)
class Look:
    body: tuple[int, int, int]
    hair: tuple[int, int, int]
    body_w: int
    body_h: int
    leg_h: int
    head_r: int
    dress: bool = False


LOOKS = {
    "Lloyd": Look(body=(40, 90, 220), hair=(110, 70, 30), body_w=16, body_h=40, leg_h=28, head_r=9),
    "Harry": Look(body=(245, 140, 30), hair=(250, 220, 60), body_w=20, body_h=24, leg_h=15, head_r=8),
    "Mary": Look(body=(40, 170, 70), hair=(200, 40, 40), body_w=30, body_h=36, leg_h=16, head_r=8,
                 dress=True),
}
SKIN = (235, 200, 160)


def _snowy_street(rng):
    """A snowy street at night."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (WIDTH, HEIGHT), (12, 16, 48))  # snowy street at night
    d = ImageDraw.Draw(img)
    for _ in range(30):
        x, y = int(rng.integers(0, WIDTH)), int(rng.integers(0, 60))
        d.point((x, y), fill=(230, 230, 255))
    for x in range(0, WIDTH, 64):
        top = 55 + int(rng.integers(0, 25))
        d.rectangle((x + 2, top, x + 58, 135), fill=(40, 36, 60))
        d.polygon([(x, top), (x + 30, top - 18), (x + 60, top)], fill=(235, 240, 250))
        for wy in range(top + 10, 125, 18):
            for wx in (x + 10, x + 36):
                lit = rng.random() < 0.6
                d.rectangle((wx, wy, wx + 10, wy + 8), fill=(250, 210, 90) if lit else (25, 25, 40))
    d.rectangle((0, 135, WIDTH, HEIGHT), fill=(225, 230, 240))
    for x in (40, 200):
        d.rectangle((x, 70, x + 3, 140), fill=(60, 60, 70))
        d.ellipse((x - 5, 62, x + 8, 74), fill=(255, 230, 120))
    return img


def _desert_road(rng):
    """A desert road."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (WIDTH, HEIGHT), (120, 190, 240))  # desert road
    d = ImageDraw.Draw(img)
    d.ellipse((250, 12, 290, 52), fill=(255, 220, 40))
    d.polygon([(0, 110), (60, 80), (120, 110), (190, 75), (260, 110), (320, 90), (320, 112), (0, 112)],
              fill=(190, 130, 90))
    d.rectangle((0, 110, WIDTH, HEIGHT), fill=(232, 200, 140))
    d.rectangle((0, 150, WIDTH, 172), fill=(110, 110, 115))
    for x in range(0, WIDTH, 30):
        d.rectangle((x, 160, x + 14, 162), fill=(250, 230, 60))
    for x in (20, 95, 230, 300):
        h = 30 + int(rng.integers(0, 15))
        d.rectangle((x, 145 - h, x + 7, 145), fill=(40, 140, 60))
        d.rectangle((x - 8, 145 - h + 10, x - 2, 145 - h + 14), fill=(40, 140, 60))
        d.rectangle((x - 8, 145 - h, x - 5, 145 - h + 14), fill=(40, 140, 60))
        d.rectangle((x + 9, 145 - h + 16, x + 15, 145 - h + 20), fill=(40, 140, 60))
        d.rectangle((x + 12, 145 - h + 6, x + 15, 145 - h + 20), fill=(40, 140, 60))
    return img


def _kitchen(rng):
    """A kitchen."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (WIDTH, HEIGHT), (245, 230, 200))  # kitchen
    d = ImageDraw.Draw(img)
    d.rectangle((0, 20, 110, 50), fill=(170, 110, 60))
    d.rectangle((0, 85, 150, 125), fill=(150, 95, 50))
    d.rectangle((0, 80, 150, 86), fill=(220, 220, 215))
    d.rectangle((160, 30, 205, 125), fill=(250, 250, 250), outline=(150, 150, 150))
    d.rectangle((200, 60, 203, 80), fill=(150, 150, 150))
    d.rectangle((220, 85, 270, 125), fill=(80, 80, 85))
    for cx in (232, 257):
        d.ellipse((cx - 7, 80, cx + 7, 88), fill=(20, 20, 20))
    d.rectangle((280, 25, 315, 60), fill=(170, 220, 250), outline=(120, 90, 60), width=3)
    for y in range(125, HEIGHT, 14):
        for x in range(0, WIDTH, 14):
            dark = ((x // 14) + (y - 125) // 14) % 2 == 0
            d.rectangle((x, y, x + 13, y + 13), fill=(60, 60, 60) if dark else (235, 235, 235))
    return img


def _office(rng):
    """An office."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (WIDTH, HEIGHT), (200, 210, 225))  # office
    d = ImageDraw.Draw(img)
    d.rectangle((110, 15, 210, 75), fill=(150, 200, 240), outline=(90, 90, 100), width=3)
    for x, h in ((120, 30), (140, 45), (165, 25), (185, 40)):
        d.rectangle((x, 75 - h, x + 15, 74), fill=(110, 120, 140))
    d.rectangle((0, 128, WIDTH, HEIGHT), fill=(90, 100, 130))
    for x in (15, 230):
        d.rectangle((x, 100, x + 75, 106), fill=(140, 95, 55))
        d.rectangle((x + 5, 106, x + 9, 130), fill=(100, 70, 40))
        d.rectangle((x + 66, 106, x + 70, 130), fill=(100, 70, 40))
        d.rectangle((x + 25, 78, x + 50, 98), fill=(30, 30, 35))
        d.rectangle((x + 28, 81, x + 47, 95), fill=(80, 160, 220))
        d.rectangle((x + 35, 98, x + 40, 100), fill=(30, 30, 35))
    d.rectangle((280, 20, 300, 60), fill=(60, 140, 70))  # plant
    d.rectangle((284, 60, 296, 75), fill=(150, 90, 50))
    return img


def _backgrounds(seed: int):
    """One pre-drawn background per setting (PIL images) and the snow flakes' parameters."""
    import numpy as np

    rng = np.random.default_rng(seed)
    bgs = {"snow": _snowy_street(rng), "desert": _desert_road(rng), "kitchen": _kitchen(rng),
           "office": _office(rng)}  # drawn in this order: the generator's bytes depend on it
    flakes = np.stack([rng.uniform(0, WIDTH, 140), rng.uniform(0, HEIGHT, 140),
                       rng.uniform(8, 20, 140), rng.uniform(0, 2 * math.pi, 140)], axis=1)
    return bgs, flakes


def _draw_person(d, name: str, cx: float, t: float, action: str) -> None:
    look = LOOKS[name]
    lift = 0.0
    if action == "jump":
        lift = abs(math.sin(math.pi * t)) * 24
    feet = GROUND_Y - lift
    sitting = action == "sit"
    leg_h = look.leg_h
    if sitting:  # a chair, seat at knee height
        seat = GROUND_Y - leg_h * 0.6
        d.rectangle((cx - 14, seat, cx + 14, seat + 4), fill=(120, 75, 40))
        d.rectangle((cx + 10, seat - 26, cx + 14, seat), fill=(120, 75, 40))
        d.rectangle((cx - 13, seat + 4, cx - 10, GROUND_Y), fill=(90, 55, 30))
        d.rectangle((cx + 10, seat + 4, cx + 13, GROUND_Y), fill=(90, 55, 30))
        hip = seat
        d.line((cx, hip, cx - 14, hip), fill=(40, 40, 40), width=4)
        d.line((cx - 14, hip, cx - 14, GROUND_Y), fill=(40, 40, 40), width=4)
    else:
        hip = feet - leg_h
        swing = 5 * math.sin(2 * math.pi * 2 * t) if action == "walk" else 0.0
        d.line((cx - 3, hip, cx - 3 + swing, feet), fill=(40, 40, 40), width=4)
        d.line((cx + 3, hip, cx + 3 - swing, feet), fill=(40, 40, 40), width=4)
    top = hip - look.body_h
    w = look.body_w
    if look.dress:
        d.polygon([(cx, top), (cx - w / 2, hip + 2), (cx + w / 2, hip + 2)], fill=look.body)
    else:
        d.rectangle((cx - w / 2, top, cx + w / 2, hip), fill=look.body)
    shoulder = top + 5
    arm = look.body_h * 0.7 + 6
    d.line((cx - w / 2 + 2, shoulder, cx - w / 2 - 5, shoulder + arm), fill=SKIN, width=3)
    if action == "wave":
        ang = math.radians(-60 + 30 * math.sin(2 * math.pi * 1.5 * t))
        hx, hy = cx + w / 2 + arm * math.cos(ang), shoulder + arm * math.sin(ang)
        d.line((cx + w / 2 - 2, shoulder, hx, hy), fill=SKIN, width=3)
        d.ellipse((hx - 3, hy - 3, hx + 3, hy + 3), fill=SKIN)
    else:
        d.line((cx + w / 2 - 2, shoulder, cx + w / 2 + 5, shoulder + arm), fill=SKIN, width=3)
    r = look.head_r
    hy = top - r - 1
    d.ellipse((cx - r, hy - r, cx + r, hy + r), fill=SKIN)
    d.chord((cx - r, hy - r - 1, cx + r, hy + r), 180, 360, fill=look.hair)
    d.point((cx - 3, hy + 1), fill=(20, 20, 20))
    d.point((cx + 3, hy + 1), fill=(20, 20, 20))


def _positions(scene: Scene, t: float) -> list[tuple[str, float]]:
    n = len(scene.cast)
    if scene.action == "walk":
        frac = (t - scene.start) / (scene.end - scene.start)
        base = 30 + frac * 240
        return [(name, base + 36 * i) for i, name in enumerate(scene.cast)]
    slots = {1: (160,), 2: (130, 190)}[n] if n else ()
    return list(zip(scene.cast, slots))


def render_frame(scene: Scene, t: float, bgs, flakes):
    """The frame at movie time t (a PIL image)."""
    import numpy as np
    from PIL import ImageDraw

    img = bgs[scene.setting].copy()
    d = ImageDraw.Draw(img)
    for name, x in _positions(scene, t):
        _draw_person(d, name, x, t, scene.action)
    if scene.setting == "snow":
        arr = np.asarray(img).copy()
        xs = (flakes[:, 0] + 4 * np.sin(t + flakes[:, 3])) % WIDTH
        ys = (flakes[:, 1] + flakes[:, 2] * t) % HEIGHT
        xi, yi = xs.astype(int), ys.astype(int)
        for dx in (0, 1):
            for dy in (0, 1):
                arr[np.clip(yi + dy, 0, HEIGHT - 1), np.clip(xi + dx, 0, WIDTH - 1)] = 250
        return arr
    return np.asarray(img)


def scene_at(t: float) -> Scene:
    for scene in SCRIPT:
        if scene.start <= t < scene.end:
            return scene
    return SCRIPT[-1]


# ----------------------------------------------------------------------------- writers

def _write_video(path: Path, seed: int, seconds: float = DURATION,
                 progress: Callable[[float], None] | None = None) -> None:
    """The movie's first `seconds` (all of it by default) as H.264, encoder pinned to one thread;
    `progress(fraction of the frames)` as it goes."""
    import av
    import numpy as np

    bgs, flakes = _backgrounds(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = atomic_temp_path(path)
    with av.open(str(tmp), "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height, stream.pix_fmt = WIDTH, HEIGHT, "yuv420p"
        stream.codec_context.thread_count = 1
        stream.options = {"crf": "28", "preset": "veryfast", "g": str(2 * FPS),
                          "keyint_min": str(2 * FPS), "sc_threshold": "0",
                          "x264-params": "threads=1:lookahead-threads=1:sliced-threads=0"}
        total = int(seconds * FPS)
        for i in range(total):
            if progress and i % FPS == 0:
                progress(i / total)
            t = i / FPS
            frame = av.VideoFrame.from_ndarray(np.ascontiguousarray(render_frame(scene_at(t), t, bgs, flakes)),
                                               format="rgb24")
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    commit_temp(tmp, path)


def _srt_time(s: float) -> str:
    ms = int(round(s * 1000))
    return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"


def _write_srt(path: Path) -> None:
    lines = [line for scene in SCRIPT for line in scene.lines]
    out = []
    for i, (s, e, text) in enumerate(lines, 1):
        out.append(f"{i}\n{_srt_time(s)} --> {_srt_time(e)}\n{text}\n")
    path.write_text("\n".join(out), encoding="utf-8")


def _scene_starting(start: float) -> Scene:
    return next(s for s in SCRIPT if s.start == start)


def _write_annotations(path: Path) -> None:
    pairs = []
    for pair_id, attribute, (ts, tq), (cs, cq) in PAIRS:
        t, c = _scene_starting(ts), _scene_starting(cs)
        pairs.append({"pair_id": pair_id, "movie_id": MOVIE_ID, "contrast_attribute": attribute,
                      "target": {"qid": f"{pair_id}_t", "query": tq, "interval": [float(t.start), float(t.end)]},
                      "confusable": {"qid": f"{pair_id}_c", "query": cq,
                                     "interval": [float(c.start), float(c.end)]}})
    data = {"movies": [{"movie_id": MOVIE_ID, "video": f"movies/{MOVIE_ID}.mp4",
                        "subtitles": f"movies/{MOVIE_ID}.srt", "title": "Three Friends (synthetic)"}],
            "pairs": pairs}
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _write_memory(out_dir: Path, seed: int) -> None:
    from PIL import Image

    bgs, flakes = _backgrounds(seed)
    mem_dir = out_dir / "memory"
    img_dir = mem_dir / MOVIE_ID
    img_dir.mkdir(parents=True, exist_ok=True)
    characters = []
    for char_id, name in CHARACTERS:
        refs = []
        for j, t in enumerate(REFERENCES[name], 1):
            assert name in scene_at(t).cast, (name, t)
            img = Image.fromarray(render_frame(scene_at(t), t, bgs, flakes))
            rel = f"{MOVIE_ID}/{char_id}_r{j}.jpg"
            img.save(mem_dir / rel, format="JPEG", quality=90)
            refs.append({"ref_id": f"{char_id}:r{j}", "image": rel, "time": t})
        characters.append({"char_id": char_id, "display_name": name, "names": [name], "references": refs})
    (mem_dir / f"{MOVIE_ID}.json").write_text(
        json.dumps({"movie_id": MOVIE_ID, "characters": characters}, indent=2) + "\n", encoding="utf-8")


def generate(out_dir: Path, seed: int = 0, progress: Callable[[float], None] | None = None) -> Path:
    """Write the example movie, subtitles, annotations and character memory into out_dir;
    `progress(fraction)` as the movie is drawn (nearly all of the time)."""
    out_dir = Path(out_dir)
    (out_dir / "movies").mkdir(parents=True, exist_ok=True)
    _write_video(out_dir / "movies" / f"{MOVIE_ID}.mp4", seed,
                 progress=(lambda f: progress(0.95 * f)) if progress else None)
    _write_srt(out_dir / "movies" / f"{MOVIE_ID}.srt")
    _write_annotations(out_dir / "annotations.json")
    write_grounding_runs(out_dir)   # runs/: what the tab's runs panel shows
    _write_memory(out_dir, seed)
    return out_dir


if __name__ == "__main__":  # pragma: no cover
    import sys
    import time

    start = time.perf_counter()
    generate(Path(sys.argv[1] if len(sys.argv) > 1 else "data/grounding"))
    print(f"done in {time.perf_counter() - start:.1f} s")
