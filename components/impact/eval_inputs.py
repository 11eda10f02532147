"""What `eval impact-temporal` / `eval impact-spatial` say about their inputs beyond the scores:
the prediction lines they ignore or score as something else, counted and named (file, line, key),
and the files they refuse (docs/decisions.md "Eval inputs").

- Lines whose qid (or qid#frame) is not scored are ignored and counted (`ignored_unknown_items`,
  spatial also `ignored_unannotated_frames`, `ignored_other_split`); a file where no line matches
  is refused: it belongs to another split or set.
- A query of the ground truth with no prediction line is refused by default, naming the qids, as
  QV-M2's `eval_submission` refuses a file whose qids differ from the ground truth's; with
  `partial` it is left out, as QV-M2's `match_number=False` does (counted, with a note).
- A temporal window is scored as written, as the released QV-M2 evaluation scores it: one that
  starts before 0 s (`windows_before_clip`), ends after the clip (the ground-truth line's
  `duration`; `windows_beyond_clip`) or has no length (`zero_length_windows`) is counted in a
  note, never clipped (clipping would score a window the model never gave, and flatter it).
- A ground-truth window that ends after its clip is scored as written and counted
  (`gt_windows_beyond_clip`); one that starts at or after the clip's end is refused when the file
  is read (components/impact/data.py).
- Frames without a prediction line (a 0-byte file included) are scored as empty and counted, with
  a note.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from components.base.errors import UserError
from components.common.eval_inputs import Tally, ignored_note, refuse_wrong_split, unknown_qid_notes
from components.impact.data import ImpactAnnotations
from components.impact.metrics.temporal import is_invalid

#: seconds a window may end after the clip (float noise of frames / fps)
END_SLACK_S = 1e-6


def _missing_lines(gt_by_qid: Mapping[str, dict], pred: Sequence[dict], gt_where: Mapping[str, str],
                   pred_name: str, partial: bool) -> list[str]:
    """The GT qids without a prediction line; refused (UserError) unless `partial`."""
    predicted = {str(p["qid"]) for p in pred}
    missing = [qid for qid in gt_by_qid if qid not in predicted]
    if missing and not partial:
        shown = ", ".join(f"'{q}' ({gt_where.get(q, '?')})" for q in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        raise UserError(f"{pred_name}: {len(missing)} ground-truth quer{'y has' if len(missing) == 1 else 'ies have'} "
                        f"no prediction line: {shown}{more}. The reference (QV-M2's eval_submission) "
                        "refuses a file whose qids differ from the ground truth's; add the lines (rerun "
                        "the run to finish it), or pass --partial to leave these queries out as its "
                        "match_number=False does.")
    return missing


def _first(where: str, i: int, w: Sequence[float], what: str) -> str:
    return f"{where}, key 'pred_relevant_windows': window {i} {list(w[:2])} {what}"


def temporal_input_report(gt: Sequence[dict], pred: Sequence[dict], where: Mapping[str, str],
                          pred_name: str, *, gt_where: Mapping[str, str] | None = None,
                          partial: bool = False) -> dict:
    """Counts and notes about the temporal lines (`where` / `gt_where`: qid -> "file line n" of
    the prediction / ground-truth line); refuses a file that misses GT queries unless `partial`."""
    gt_where = gt_where or {}
    gt_by_qid = {str(g["qid"]): g for g in gt}
    unknown = [str(p["qid"]) for p in pred if str(p["qid"]) not in gt_by_qid]
    notes = unknown_qid_notes(unknown, len(pred), where, pred_name, against="a qid of the ground truth",
                              what="qids not in the ground truth")
    missing = _missing_lines(gt_by_qid, pred, gt_where, pred_name, partial)
    if missing:
        notes.append(f"--partial: {len(missing)} ground-truth quer{'y' if len(missing) == 1 else 'ies'} "
                     f"without a prediction line (first: '{missing[0]}', {gt_where.get(missing[0], '?')}) "
                     "taken as queries with no prediction, as QV-M2's match_number=False does.")
    counts = {"windows_before_clip": Tally(), "windows_beyond_clip": Tally(), "zero_length_windows": Tally()}

    for p in pred:
        g = gt_by_qid.get(str(p["qid"]))
        if g is None or is_invalid(p):
            continue
        duration = g.get("duration")
        has_duration = isinstance(duration, (int, float)) and not isinstance(duration, bool)
        line = where.get(str(p["qid"]), "?")
        for i, w in enumerate(p["pred_relevant_windows"]):
            if w[0] < 0:
                counts["windows_before_clip"].add(_first(line, i, w, "starts before 0 s"))
            if has_duration and w[1] > duration + END_SLACK_S:
                counts["windows_beyond_clip"].add(_first(line, i, w, f"ends after the clip ({duration:g} s)"))
            if w[1] == w[0]:
                counts["zero_length_windows"].add(_first(line, i, w, "has no length"))
    for key, what in (("windows_before_clip", "start before 0 s"), ("windows_beyond_clip", "end after their clip"),
                      ("zero_length_windows", "have no length (IoU 0 with any moment)")):
        if counts[key].n:
            notes.append(f"{counts[key].n} predicted window(s) {what}; scored as written, as the reference "
                         f"(QV-M2) does ({key}; first: {counts[key].first}).")
    gt_beyond = Tally()
    for qid, g in gt_by_qid.items():
        duration = g.get("duration")
        if not isinstance(duration, (int, float)) or isinstance(duration, bool):
            continue
        for i, w in enumerate(g["relevant_windows"]):
            if w[1] > duration + END_SLACK_S:
                gt_beyond.add(f"{gt_where.get(qid, '?')}, key 'relevant_windows': window {i} "
                              f"{list(w[:2])} ends after the clip ({duration:g} s)")
    if gt_beyond.n:
        notes.append(f"{gt_beyond.n} ground-truth window(s) end after their clip; scored as written, "
                     f"as the reference does (gt_windows_beyond_clip; first: {gt_beyond.first}).")
    return {"ignored_unknown_items": len(unknown), "missing_lines": len(missing),
            **{key: tally.n for key, tally in counts.items()}, "gt_windows_beyond_clip": gt_beyond.n,
            "notes": notes}


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
        refuse_wrong_split(pred_name, len(pred), f"{where.get(k, '?')}, qid '{k[0]}' frame {k[1]}",
                            f"an annotated frame of {annotations.path.name}"
                            + (f" split {split}" if split else ""))
    notes = []
    for keys, what, count_key in (
            (unknown, "qids not in the annotations", "ignored_unknown_items"),
            (other_split, f"items outside split {split}", "ignored_other_split"),
            (unannotated, "frames that are not annotated (not scored)", "ignored_unannotated_frames")):
        if keys:
            k = keys[0]
            notes.append(ignored_note(len(keys), what, count_key, f"{where.get(k, '?')}, qid '{k[0]}' frame {k[1]}"))
    missing = len(scored_set - set(pred))
    if not pred:
        notes.append(f"{pred_name} holds no prediction line: all {missing} annotated frame(s) are "
                     "scored as nothing predicted (frames_without_prediction).")
    elif missing:
        notes.append(f"{missing} annotated frame(s) have no prediction line: scored as nothing "
                     "predicted, F1 0 (frames_without_prediction).")
    return {"ignored_unknown_items": len(unknown), "ignored_other_split": len(other_split),
            "ignored_unannotated_frames": len(unannotated), "notes": notes}
