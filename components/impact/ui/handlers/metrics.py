"""The metrics panel: the session's model (or the baselines) over every clip of a split, scored with
HAPACT's metrics beside the paper's rows."""
from __future__ import annotations

import gradio as gr

from backends.pair import partner_id
from components.base.errors import UserError
from components.impact import view
from components.impact.metrics.temporal import evaluate_temporal, no_prediction_note
from components.impact.pairs import temporal_pair
from components.impact.pipeline import annotated_frames, check_stop, evaluate_spatial, select_regions
from components.impact.solvers import solvers_for
from components.impact.ui.handlers.model_runs import paired_regions
from components.impact.ui.session import ImpactResources, ImpactSession, ImpactTab
from components.impact.ui.views import MetricsView
from components.settings.session import SessionSettings, backend_for


def set_metrics(tab: ImpactTab, res: ImpactResources, session: ImpactSession, split_name: str | None,
                settings: dict | None, style: str = "auto", *, progress: gr.Progress | None = None) -> MetricsView:
    """Run the session's model (or the baselines) over every clip of the set, then both tables
    (Stop, or closing the page, ends it before the next clip). With "compare with", both models
    answer the same requests and each table has a row (with its intervals) for each."""
    annotations, cancel = tab.annotations, res.fresh_stop()
    split_name = None if split_name in (None, "all") else split_name
    if annotations is None:
        raise UserError("No impact annotations are loaded.")
    items = annotations.split(split_name)
    solvers = solvers_for(backend_for(settings), SessionSettings.from_state(settings), style=style)
    partner = partner_id(getattr(solvers.temporal, "backend", None))
    preds: list[list[dict]] = [[], []]
    spatial: list[dict] = [{}, {}]
    for item in (progress.tqdm(items, desc="clips") if progress is not None else items):
        check_stop(cancel)
        frames = [f for f in annotated_frames(item) if f in item.frames]
        if partner:
            pair = temporal_pair(solvers.temporal, item, cancel)
            preds[0].append(pair.first.to_record())
            preds[1].append(pair.second.to_record())
            firsts, seconds = paired_regions(solvers.regions, item, frames, cancel=cancel)
            for frame in frames:
                spatial[0][(item.qid, frame)] = firsts[str(frame)]
                spatial[1][(item.qid, frame)] = seconds[str(frame)]
            continue
        preds[0].append(solvers.temporal.localize(item, cancel=cancel).to_record())
        for frame, answer in select_regions(solvers.regions, item, frames, cancel=cancel).items():
            spatial[0][(item.qid, frame)] = answer.as_dict()
    names = [solvers.temporal.method] + ([preds[1][0]["method"] if preds[1] else partner] if partner else [])
    gt = [i.gt_record() for i in items]
    temporal = [(name, evaluate_temporal(gt, p, fps=annotations.fps)) for name, p in zip(names, preds)]
    temporal_data = view.data_label(annotations, split_name, temporal[0][1]["num_queries"], "queries")
    parts = [f"**Temporal** — {name}; {len(items)} clip(s); {_temporal_counts(result)}" for name, result in temporal]
    parts += [view.temporal_table(temporal, data=temporal_data),
              "**By moment length and count** (mAP\\@0.3)",
              view.breakdown_table(temporal, data=temporal_data)]
    region_names = [solvers.regions.name] + ([partner] if partner else [])
    scored = [(name, evaluate_spatial(annotations, answers, split=split_name))
              for name, answers in zip(region_names, spatial) if answers]
    if scored:
        parts += [f"**Spatial** — {name}; unparsed or failed answers: {result['invalid']} of "
                  f"{result['num_frames']} frame(s) (scored as nothing predicted)" for name, result in scored]
        parts.append(view.spatial_table(scored, data=view.data_label(
            annotations, split_name, scored[0][1]["num_frames"], "frames")))
    return MetricsView(metrics="\n\n".join(parts))


def _temporal_counts(result: dict) -> str:
    """What a temporal score rests on beyond its row: answers not read, queries with no prediction
    (left out, as QV-M2 leaves them), queries without windows and the queries @3+tgt averages over."""
    left_out = (no_prediction_note(result) or "queries with no prediction: 0.").replace("*", "\\*")
    return (f"unparsed answers: {result['unparsed']}, failed calls: {result['errors']} (both no "
            f"prediction, never guessed); {left_out} Ground truth without windows: "
            f"{result.get('gt_without_windows', 0)}; queries with 3+ moments (@3+tgt): "
            f"{result.get('@3+tgt_queries', 0)}")
