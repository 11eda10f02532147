"""Prompt assets of the verifier (Appendix G) and the chat messages built from them.

The texts live in assets/prompts/aws_*.txt, word for word as printed in Appendix G (a test compares
them with the paper). Braced fields in user templates are runtime substitutions; braces in system
prompts are literal JSON (Appendix G), so system prompts are never formatted.

Where Appendix G leaves the layout open, the choices are:
- Decompose: user template, then the CAST block (header, "[C1] name", then "[C1:rj]" label and its
  image for each reference), only when MatchCharacters found candidates.
- Inspect: the candidate's first user turn holds the REFERENCE images ("[REF:<name>]" + photo),
  the user template, the frames (each preceded by "<T.T seconds>"), then the [Budget] line. After
  an EXPAND the next user turn holds an expansion observation (our wording), the new band's
  subtitles and frames only, and the next [Budget] line. At n = M the exhausted [Budget] line is
  followed by the "expansion is masked" message.
- The candidate description ({chunk_desc}) and the expansion observation are our wording.
- Select: user template, then per candidate its summary line and its midpoint frame (preceded by
  its "<T.T seconds>" marker), then the closing instruction. Indices are 0-based.
- The printed prompts hard-code M = 3 and Delta_max = 30 s; with other budgets those numbers are
  rewritten to the configured values (`with_budget`), otherwise the text is untouched.
"""
from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any
from collections.abc import Sequence

from backends.base import Message
from components.window_search.types import CastOption, InspectContext, Observation, \
    SelectCandidate, Statement

PROMPT_DIR = Path(__file__).resolve().parents[2] / "assets" / "prompts"

PROMPT_FILES = (
    "aws_decompose_system", "aws_decompose_user", "aws_decompose_cast_header",
    "aws_decompose_cast_person", "aws_decompose_cast_ref",
    "aws_inspect_system", "aws_inspect_user", "aws_inspect_subtitles_header",
    "aws_inspect_subtitle_line", "aws_budget_available", "aws_budget_exhausted",
    "aws_budget_masked", "aws_select_system", "aws_select_user", "aws_select_candidate",
    "aws_select_closing", "aws_localize",
)


@cache
def load_prompt(name: str) -> str:
    """Text of assets/prompts/<name>.txt without its final newline."""
    path = PROMPT_DIR / f"{name}.txt"
    try:
        return path.read_text(encoding="utf-8").rstrip("\n")
    except FileNotFoundError:
        raise FileNotFoundError(f"prompt file {path} is missing; restore it from the repository "
                                "(assets/prompts/)") from None


_FIELD = re.compile(r"\{([A-Za-z_]+)(\+1)?(?::([^{}]*))?\}")


def fill(template: str, **values: Any) -> str:
    """Substitute `{name}`, `{name:fmt}` and `{j+1}` fields (Appendix G template syntax).
    A None value with a numeric format prints as "n/a"."""
    def sub(m: re.Match) -> str:
        name, plus_one, fmt = m.group(1), m.group(2), m.group(3)
        if name not in values:
            raise KeyError(f"template field {{{name}}} has no value")
        value = values[name]
        if plus_one:
            value = int(value) + 1
        if value is None and fmt:
            return "n/a"
        return format(value, fmt.replace(" ", "")) if fmt else str(value)
    return _FIELD.sub(sub, template)


def _secs(x: float) -> str:
    return f"{x:g}"


def with_budget(text: str, M: int = 3, delta_max: float = 30.0) -> str:
    """Rewrite the printed budget numbers (M = 3, Delta_max = 30 s) when another budget is set."""
    if M != 3:
        text = text.replace("AT MOST 3 times", f"AT MOST {M} times")
        text = re.sub(r"\bof 3\b", f"of {M}", text)
    if float(delta_max) != 30.0:
        d = _secs(delta_max)
        for old, new in (("(<=30)", f"(<={d})"), ("AT MOST 30 seconds", f"AT MOST {d} seconds"),
                         ("truncated to 30 s", f"truncated to {d} s"), ("up to 30 s", f"up to {d} s")):
            text = text.replace(old, new)
    return text


def time_marker(t: float) -> str:
    """The absolute movie-time marker that precedes every frame ("<T.T seconds>")."""
    return f"<{t:.1f} seconds>"


def decomposition_json(statements: Sequence[Statement]) -> str:
    """Serialized sub-queries (ids and texts only: no reference image field, Appendix G)."""
    return json.dumps([{"id": s.sid, "text": s.text} for s in statements], ensure_ascii=False,
                      indent=2)


def merge_text(parts: list) -> list:
    """Join adjacent strings with newlines so each message alternates text and images."""
    out: list = []
    for p in parts:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] = out[-1] + "\n" + p
        elif not (isinstance(p, str) and p == ""):
            out.append(p)
    return out


_merge_text = merge_text  # the earlier name


# -- Decompose ----------------------------------------------------------------------------------
def decompose_messages(query: str, options: Sequence[CastOption]) -> list[Message]:
    parts: list = [fill(load_prompt("aws_decompose_user"), query=query)]
    if options:
        parts.append("")
        parts.append(load_prompt("aws_decompose_cast_header"))
        for opt in options:
            parts.append(fill(load_prompt("aws_decompose_cast_person"), cid=opt.cid,
                              display_name=opt.display_name))
            for ref in opt.refs:
                if ref.image is None:
                    continue
                parts.append(ref.label)  # == fill(aws_decompose_cast_ref, cid=..., j=...)
                parts.append(ref.image)
    return [Message.text("system", load_prompt("aws_decompose_system")),
            Message("user", merge_text(parts))]


def cast_ref_label(cid: str, j: int) -> str:
    """"[C1:r1]" label of reference j (0-based) of cast option cid."""
    return fill(load_prompt("aws_decompose_cast_ref"), cid=cid, j=j)


# -- Inspect ------------------------------------------------------------------------------------
def subtitle_block(cues: Sequence[Any]) -> str:
    """Optional subtitle template; empty when there are no cues. Ends with a newline."""
    if not cues:
        return ""
    lines = [load_prompt("aws_inspect_subtitles_header")]
    lines += [fill(load_prompt("aws_inspect_subtitle_line"), timestamp=c.start, text=c.text)
              for c in cues]
    return "\n".join(lines) + "\n"


def budget_lines(n: int, M: int, allow_expand: bool, delta_max: float = 30.0) -> list[str]:
    """[Budget] line(s) before Inspect call n (0-based): available while n < M, else exhausted
    followed by the masked-expansion message."""
    if allow_expand and n < M:
        return [with_budget(fill(load_prompt("aws_budget_available"), next_expansion=n + 1, used=n,
                                 remaining=M - n), M, delta_max)]
    return [with_budget(fill(load_prompt("aws_budget_exhausted"), used=n), M, delta_max),
            load_prompt("aws_budget_masked")]


def chunk_description(chunk: Any, window: tuple[float, float]) -> str:
    return (f"chunk {chunk.index}, movie time {window[0]:.1f} s to {window[1]:.1f} s "
            f"(starts at {window[0]:.1f} seconds)")


def _frame_parts(frames: Sequence[Any]) -> list:
    parts: list = []
    for f in frames:
        parts.append(time_marker(f.time))
        parts.append(f.image)
    return parts


def expansion_text(obs: Observation, k: int) -> str:
    """Our wording for the observation appended after the k-th expansion (Appendix G is silent)."""
    side = "earlier (left)" if obs.side == "left" else "later (right)"
    text = (f"Expansion {k}: revealed {obs.applied:g} s of {side} footage, "
            f"movie time {obs.band[0]:.1f} s to {obs.band[1]:.1f} s. "
            f"The visible window is now {obs.window[0]:.1f} s to {obs.window[1]:.1f} s.")
    if obs.requested is not None and obs.requested > obs.applied_cap:
        text += f" The request of {obs.requested:g} s was truncated to {obs.applied_cap:g} s."
    if obs.applied < min(obs.requested or obs.applied_cap, obs.applied_cap) - 1e-6:
        text += (" The window reached the " + ("start" if obs.side == "left" else "end")
                 + " of the movie.")
    if obs.frames:
        text += " The new frames follow."
    else:
        text += " No new frames."
    return text


def inspect_messages(ctx: InspectContext, allow_expand: bool) -> list[Message]:
    """The conversation for Inspect call n = len(ctx.replies) (history + new user turn)."""
    system = with_budget(load_prompt("aws_inspect_system"), ctx.M, ctx.delta_max)
    messages = [Message.text("system", system)]
    for i, obs in enumerate(ctx.observations):
        parts: list = []
        if i == 0:
            for ref in ctx.ref_images:
                if ref.image is not None:
                    parts += [f"[REF:{ref.name}]", ref.image]
            parts.append(fill(load_prompt("aws_inspect_user"), query=ctx.query,
                              decomposition_json=decomposition_json(ctx.statements),
                              chunk_desc=chunk_description(ctx.chunk, obs.window),
                              subtitle_block=subtitle_block(obs.cues)))
        else:
            parts.append(expansion_text(obs, i))
            block = subtitle_block(obs.cues)
            if block:
                parts.append(block.rstrip("\n"))
        parts += _frame_parts(obs.frames)
        is_last = i == len(ctx.observations) - 1
        parts += budget_lines(i, ctx.M, allow_expand if is_last else True, ctx.delta_max)
        messages.append(Message("user", merge_text(parts)))
        if i < len(ctx.replies):
            messages.append(Message.text("assistant", ctx.replies[i]))
    return messages


# -- Select -------------------------------------------------------------------------------------
def select_messages(query: str, statements: Sequence[Statement],
                    rejected: Sequence[SelectCandidate]) -> list[Message]:
    parts: list = [fill(load_prompt("aws_select_user"), query=query,
                        decomposition_json=decomposition_json(statements), n=len(rejected))]
    for c in rejected:
        parts.append(fill(load_prompt("aws_select_candidate"), index=c.index,
                          chunk_id=c.chunk.index, win_start=c.window[0], win_end=c.window[1],
                          confidence=c.confidence, reasoning=c.reasoning))
        if c.frame is not None:
            parts += [time_marker(c.frame.time), c.frame.image]
    parts.append(load_prompt("aws_select_closing"))
    return [Message.text("system", load_prompt("aws_select_system")),
            Message("user", merge_text(parts))]


# -- Localizer ----------------------------------------------------------------------------------
def frame_sampling(frames: Sequence[Any]) -> str:
    """How the frames were really sampled, from their own timestamps: "one frame every 6.6
    seconds" (mean spacing), "one frame per second", or "a single frame"."""
    times = [float(f.time) for f in frames]
    if len(times) < 2:
        return "a single frame" if times else "no frames"
    step = (times[-1] - times[0]) / (len(times) - 1)
    if abs(step - 1.0) < 0.05:
        return "one frame per second"
    return f"one frame every {step:.1f} seconds"


def localize_messages(query: str, window: tuple[float, float], frames: Sequence[Any],
                      fps: float | None = None) -> list[Message]:
    """Grounding prompt for the localizer. NOTE: Appendix G has no localizer prompt (the paper
    uses TimeLens2 unchanged); aws_localize.txt is ours, in the TimeLens style. It states the
    sampling the frames really have (their count and spacing, from their timestamps: a 210 s
    window under a 32-frame budget is "32 frames ... one frame every 6.6 seconds"), and each
    frame carries its own "<T.T seconds>" marker. (`fps` is the rate asked for; the frames'
    timestamps are what is stated.)"""
    text = fill(load_prompt("aws_localize"), n_frames=len(frames), sampling=frame_sampling(frames),
                win_start=window[0], win_end=window[1], query=query)
    return [Message("user", merge_text(_frame_parts(frames) + [text]))]
