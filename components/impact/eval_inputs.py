"""What `eval impact-temporal` / `eval impact-spatial` say about their inputs beyond the scores:
the prediction lines they ignore or score as something else, counted and named (file, line, key),
and the files they refuse (docs/decisions.md "Eval inputs").

- Lines whose qid (or qid#frame) is not scored are ignored and counted (`ignored_unknown_items`,
  spatial also `ignored_unannotated_frames`, `ignored_other_split`); a file where no line matches
  is refused: it belongs to another split or set.
- A temporal window that ends after the clip (the ground truth line's `duration`) is scored as
  given, as the released QVHighlights/HAPACT evaluation scores it (no clipping: clipping would
  score a window the model never gave, and flatter it), and counted (`windows_beyond_clip`).
- Frames or queries without a prediction line (a 0-byte file included) are scored as empty and
  counted, with a note.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from components.base.errors import UserError
from components.impact.data import ImpactAnnotations
from components.impact.metrics.temporal import is_invalid

#: seconds a window may end after the clip (float noise of frames / fps)
END_SLACK_S = 1e-6


def _refuse_wrong_split(name: str, lines: int, example: str, against: str) -> None:
    raise UserError(f"{name}: none of its {lines} prediction line(s) is for {against} (e.g. "
                    f"{example}): a file of another split or set? Pass the matching files.")


def temporal_input_report(gt: Sequence[dict], pred: Sequence[dict], where: Mapping[str, str],
                          pred_name: str) -> dict:
    """Counts and notes about the temporal prediction lines (`where`: qid -> "file line n")."""
    gt_by_qid = {str(g["qid"]): g for g in gt}
    unknown = [str(p["qid"]) for p in pred if str(p["qid"]) not in gt_by_qid]
    if pred and len(unknown) == len(pred):
        _refuse_wrong_split(pred_name, len(pred), f"{where.get(unknown[0], '?')}, qid '{unknown[0]}'",
                            "a qid of the ground truth")
    notes = []
    if unknown:
        notes.append(f"{len(unknown)} prediction line(s) for qids not in the ground truth were ignored "
                     f"(ignored_unknown_items; first: {where.get(unknown[0], '?')}, qid '{unknown[0]}').")
    beyond, first = 0, None
    for p in pred:
        g = gt_by_qid.get(str(p["qid"]))
        duration = g.get("duration") if g else None
        if g is None or is_invalid(p) or not isinstance(duration, (int, float)) or isinstance(duration, bool):
            continue
        for i, w in enumerate(p["pred_relevant_windows"]):
            if w[1] > duration + END_SLACK_S:
                beyond += 1
                first = first or (f"{where.get(str(p['qid']), '?')}, key 'pred_relevant_windows': window "
                                  f"{i} {list(w[:2])} ends after the clip ({duration:g} s)")
    if beyond:
        notes.append(f"{beyond} predicted window(s) end after their clip; scored as given, as the "
                     f"released evaluation does (windows_beyond_clip; first: {first}).")
    return {"ignored_unknown_items": len(unknown), "windows_beyond_clip": beyond, "notes": notes}


def spatial_input_report(annotations: ImpactAnnotations, pred: Mapping[tuple[str, int], dict],
                         where: Mapping[tuple[str, int], str], pred_name: str, split: str | None,
                         scored: Sequence[tuple[str, int]]) -> dict:
    """Counts and notes about the spatial prediction lines: lines for unknown qids, for items of
    another split, for frames that are not scored (`scored`: the (qid, frame) units)."""
    items = annotations.by_qid()
    in_split = {item.qid for item in annotations.split(split)}
    scored_set = set(scored)
    unknown = [k for k in pred if k[0] not in items]
    other_split = [k for k in pred if k[0] in items and k[0] not in in_split]
    unannotated = [k for k in pred if k[0] in in_split and k not in scored_set]
    if pred and not scored_set & set(pred):
        k = next(iter(pred))
        _refuse_wrong_split(pred_name, len(pred), f"{where.get(k, '?')}, qid '{k[0]}' frame {k[1]}",
                            f"an annotated frame of {annotations.path.name}"
                            + (f" split {split}" if split else ""))
    notes = []
    for keys, what, count_key in (
            (unknown, "qids not in the annotations", "ignored_unknown_items"),
            (other_split, f"items outside split {split}", "ignored_other_split"),
            (unannotated, "frames that are not annotated (not scored)", "ignored_unannotated_frames")):
        if keys:
            k = keys[0]
            notes.append(f"{len(keys)} prediction line(s) for {what} were ignored ({count_key}; first: "
                         f"{where.get(k, '?')}, qid '{k[0]}' frame {k[1]}).")
    missing = len(scored_set - set(pred))
    if not pred:
        notes.append(f"{pred_name} holds no prediction line: all {missing} annotated frame(s) are "
                     "scored as nothing predicted (frames_without_prediction).")
    elif missing:
        notes.append(f"{missing} annotated frame(s) have no prediction line: scored as nothing "
                     "predicted, F1 0 (frames_without_prediction).")
    return {"ignored_unknown_items": len(unknown), "ignored_other_split": len(other_split),
            "ignored_unannotated_frames": len(unannotated), "notes": notes}
