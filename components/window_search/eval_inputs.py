"""What `eval grounding` says about its prediction lines beyond the scores (docs/decisions.md
"Eval inputs"): lines for qids the annotations do not hold are ignored and counted
(`ignored_unknown_items`), and a file none of whose qids is annotated is refused (another split or
set); an interval that ends after its movie is scored as given, as the released CoM2 evaluation
scores it, and counted (`intervals_beyond_movie`). The movie's length comes from its video's
container header when the video is on disk (nothing is fetched or decoded); movies without one are
counted (`movies_without_duration`) and their predictions are not checked."""
from __future__ import annotations

from collections.abc import Callable, Mapping

from components.base.errors import UserError
from components.window_search.data import GroundingAnnotations, Prediction
from components.window_search.metrics import scored_interval

END_SLACK_S = 1e-3  # a movie's container duration and a 3-decimal end may differ by a millisecond


def grounding_input_report(annotations: GroundingAnnotations, predictions: Mapping[str, Prediction],
                           where: Mapping[str, str], pred_name: str, *,
                           duration_of: Callable[[str], float | None], score_fallbacks: bool = False) -> dict:
    queries = {q.qid: q for q in annotations.queries}
    unknown = [qid for qid in predictions if qid not in queries]
    if predictions and len(unknown) == len(predictions):
        raise UserError(f"{pred_name}: none of its {len(predictions)} prediction line(s) is for a qid of "
                        f"{annotations.path.name} (e.g. {where.get(unknown[0], '?')}, qid '{unknown[0]}'): "
                        "a file of another split or set? Pass the matching files.")
    notes = []
    if unknown:
        notes.append(f"{len(unknown)} prediction line(s) for qids not in the annotations were ignored "
                     f"(ignored_unknown_items; first: {where.get(unknown[0], '?')}, qid '{unknown[0]}').")
    movies = {q.movie_id for qid, q in queries.items() if qid in predictions}
    durations = {mid: duration_of(mid) for mid in sorted(movies)}
    beyond, first = 0, None
    for qid, pred in predictions.items():
        q = queries.get(qid)
        interval = scored_interval(pred, score_fallbacks=score_fallbacks)
        duration = durations.get(q.movie_id) if q else None
        if interval is None or duration is None or interval[1] <= duration + END_SLACK_S:
            continue
        beyond += 1
        first = first or (f"{where.get(qid, '?')}, key 'interval': {list(interval)} ends after the movie "
                          f"'{q.movie_id}' ({duration:.1f} s)")
    if beyond:
        notes.append(f"{beyond} interval(s) end after their movie; scored as given, as the released "
                     f"evaluation does (intervals_beyond_movie; first: {first}).")
    unknown_length = sorted(mid for mid, d in durations.items() if d is None)
    if unknown_length:
        notes.append(f"{len(unknown_length)} movie(s) have no video on disk to read a length from "
                     f"({', '.join(unknown_length[:3])}{', ...' if len(unknown_length) > 3 else ''}): their "
                     "intervals were not checked against the movie's end (movies_without_duration).")
    return {"ignored_unknown_items": len(unknown), "intervals_beyond_movie": beyond,
            "movies_without_duration": len(unknown_length), "notes": notes}
