"""The instruction shown before question 1, and a practice question whose answer is obvious: a
drawn ball rolling left to right; the right candidate continues its path, the other three are a
black screen, a night sky and a test card. It is drawn (no clip of the study), laid out as the
frames display lays out a question, and its answer is shown (it scores nothing)."""
from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from components.cloze.questions import LETTERS

if TYPE_CHECKING:
    from PIL import Image

ANSWER = "C"
# the released app's task text (its PROMPT, not a word about the kinds of wrong candidates, so
# that humans here are told what the paper's annotators were told), then how the page works
INSTRUCTION = """### Before you start
You are given the **BEGINNING** (the first part of a video) and the **END** (the last part of the
same video). The middle segment between them was removed. You will then see four candidate middle
segments, labelled **A**, **B**, **C** and **D**. Exactly one is the true middle that connects the
BEGINNING to the END. Which candidate is the correct middle?

Take the time you need: a question is timed from when its clips are all on screen. You can go back
to a question you answered and change your answer.

**Practice** (not part of the study; its answer is shown): which candidate is the missing middle?"""
FEEDBACK_RIGHT = (f"**{ANSWER} is right**: the ball keeps rolling along its path from the BEGINNING to "
                  "the END. Press **Begin the study** when you are ready.")
FEEDBACK_WRONG = ("Not this one: look at where the ball is at the end of the BEGINNING and at the start "
                  f"of the END. The missing middle is **{ANSWER}**, where the ball rolls on between "
                  "them. Press **Begin the study** when you are ready.")
FRAMES = 16
TILE = (96, 64)


def _scene(step: float | None, kind: str = "ball") -> Image.Image:
    from PIL import Image, ImageDraw

    w, h = TILE
    if kind == "black":
        return Image.new("RGB", TILE, "black")
    if kind == "night":
        img = Image.new("RGB", TILE, (18, 22, 60))
        d = ImageDraw.Draw(img)
        d.ellipse((w - 30, 8, w - 12, 26), fill=(250, 240, 170))
        for x, y in ((10, 10), (30, 20), (50, 8), (20, 40), (45, 35)):
            d.point((x, y), fill="white")
        return img
    if kind == "bars":
        img = Image.new("RGB", TILE)
        d = ImageDraw.Draw(img)
        colours = ["white", "yellow", "cyan", "lime", "magenta", "red", "blue"]
        for k, c in enumerate(colours):
            d.rectangle((k * w // 7, 0, (k + 1) * w // 7, h), fill=c)
        return img
    img = Image.new("RGB", TILE, (150, 200, 245))
    d = ImageDraw.Draw(img)
    d.rectangle((0, h - 18, w, h), fill=(90, 170, 80))
    x = 6 + (w - 24) * (step or 0) / (FRAMES - 1)
    d.ellipse((x, h - 32, x + 14, h - 18), fill=(215, 40, 40))
    return img


@lru_cache(maxsize=1)
def practice_image() -> Image.Image:
    """BEGINNING (last 4 frames) | END (first 4); candidates A B / C D, first 2 | last 2 frames."""
    from components.cloze.study.media import edge_layout

    before = [_scene(i) for i in range(0, 4)]
    after = [_scene(i) for i in range(12, 16)]
    right = [_scene(i) for i in (4, 5, 10, 11)]
    wrong = {"A": [_scene(None, "night")] * 4, "B": [_scene(None, "black")] * 4,
             "D": [_scene(None, "bars")] * 4}
    cands = [right if x == ANSWER else wrong[x] for x in LETTERS]
    return edge_layout(before, after, cands, *TILE)


def feedback(letter: str) -> str:
    return FEEDBACK_RIGHT if letter == ANSWER else FEEDBACK_WRONG
