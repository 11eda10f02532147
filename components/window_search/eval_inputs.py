"""What `eval grounding` says about its prediction lines beyond the scores (docs/decisions.md
"Eval inputs"): lines for qids the annotations do not hold are ignored and counted
(`ignored_unknown_items`), and a file none of whose qids is annotated is refused (another split or
set); an interval that ends after its movie is scored as given, as the released CoM2 evaluation
scores it, and counted (`intervals_beyond_movie`). The movie's length comes from its video's
container header when the video is on disk (nothing is fetched or decoded); movies without one are
counted (`movies_without_duration`) and their predictions are not checked."""
from __future__ import annotations

from collections.abc import Callable, Mapping

from components.common.eval_inputs import Tally, unknown_qid_notes
from components.window_search.data import GroundingAnnotations, Prediction
from components.window_search.metrics import scored_interval

END_SLACK_S = 1e-3  # a movie's container duration and a 3-decimal end may differ by a millisecond


def grounding_input_report(annotations: GroundingAnnotations, predictions: Mapping[str, Prediction],
                           where: Mapping[str, str], pred_name: str, *,
                           duration_of: Callable[[str], float | None], score_fallbacks: bool = False) -> dict:
    queries = {q.qid: q for q in annotations.queries}
    unknown = [qid for qid in predictions if qid not in queries]
    notes = unknown_qid_notes(unknown, len(predictions), where, pred_name,
                              against=f"a qid of {annotations.path.name}", what="qids not in the annotations")
    movies = {q.movie_id for qid, q in queries.items() if qid in predictions}
    durations = {mid: duration_of(mid) for mid in sorted(movies)}
    beyond = Tally()
    for qid, pred in predictions.items():
        q = queries.get(qid)
        interval = scored_interval(pred, score_fallbacks=score_fallbacks)
        duration = durations.get(q.movie_id) if q else None
        if interval is None or duration is None or interval[1] <= duration + END_SLACK_S:
            continue
        beyond.add(f"{where.get(qid, '?')}, key 'interval': {list(interval)} ends after the movie "
                   f"'{q.movie_id}' ({duration:.1f} s)")
    if beyond.n:
        notes.append(f"{beyond.n} interval(s) end after their movie; scored as given, as the released "
                     f"evaluation does (intervals_beyond_movie; first: {beyond.first}).")
    unknown_length = sorted(mid for mid, d in durations.items() if d is None)
    if unknown_length:
        notes.append(f"{len(unknown_length)} movie(s) have no video on disk to read a length from "
                     f"({', '.join(unknown_length[:3])}{', ...' if len(unknown_length) > 3 else ''}): their "
                     "intervals were not checked against the movie's end (movies_without_duration).")
    return {"ignored_unknown_items": len(unknown), "intervals_beyond_movie": beyond.n,
            "movies_without_duration": len(unknown_length), "notes": notes}
