"""Deep links to a question of the Cloze tab (pure; no gradio):
`?tab=cloze&stem=<stem>&q=<S|A|P|Mixed>` opens that question; `q=<n>` without a stem opens the
n-th question of the set. Optional keys say how the set is built: `mode=model` (the evaluation
order; the human study's order otherwise; `mode=compare` opens the leaderboard, the question kept
in the evaluation order for Model mode), `set`, `dims` (e.g. `S,A`), `seed`, `folder` (inside the
app's data folder). In Model mode `sort` (runs_view.SORTS: hardest, easiest, disagree, people,
stem) steps through the set in the runs' order; a practice playthrough never takes one (it keeps
its own order: the runs' answers would spoil it). `question_link` writes one, `read_link` reads
one back and `find_question` finds its question in the set."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from components.cloze.runs_view import SORTS
from components.cloze.spec import SPEC
from components.common.links import view_link

TAB = SPEC.url   # the link's ?tab= (the tab's registry row)
OWN_KEYS = SPEC.link_keys
DEFAULT_FOLDER = SPEC.data
DEFAULT_DIMS = ("S", "A", "P")
DEFAULT_SEED = 42
MODES = {"human": "practice", "practice": "practice", "model": "model",
         "compare": "compare"}  # link value -> the Mode radio value
DIMS = {"S": "S", "A": "A", "P": "C", "C": "C", "MIXED": "Mixed", "M": "Mixed"}  # link -> Question.dim
SHOWN_DIM = {"S": "S", "A": "A", "C": "P", "Mixed": "Mixed"}  # Question.dim -> the link's (paper's) name


@dataclass
class LinkRequest:
    """What a link asks the tab to open; `problems` are readable lines about values not understood
    (each says what is shown instead)."""

    mode: str = "practice"
    folder: str = DEFAULT_FOLDER
    set_name: str = "all"
    dims: tuple[str, ...] = DEFAULT_DIMS   # as the Dimension dropdown names them (P, not C)
    seed: int = DEFAULT_SEED
    stem: str | None = None
    dim: str | None = None      # S | A | C | Mixed (as Question.dim), with `stem`
    number: int | None = None   # 1-based question number, without `stem`
    sort: str = ""              # Model mode: the question list in the runs' order ("": the set's own)
    problems: list[str] = field(default_factory=list)

    @property
    def dims_choice(self) -> str:
        """The Dimension dropdown's value for `dims` ("S, A, P", "S", "Mixed", ...)."""
        return ", ".join(self.dims)


def is_for_this_tab(params: Mapping[str, str]) -> bool:
    """The link names this tab, or names no tab and carries this tab's parameters."""
    tab = (params.get("tab") or "").strip().lower()
    return tab == TAB or (not tab and any(params.get(k) for k in OWN_KEYS))


def _get(params: Mapping[str, str], key: str) -> str:
    return (params.get(key) or "").strip()


def read_link(params: Mapping[str, str]) -> LinkRequest:
    """A link's values, checked for form (the data is checked by `find_question`); a bad value is
    dropped with one readable line."""
    req = LinkRequest()
    mode = _get(params, "mode").lower()
    if mode:
        if mode in MODES:
            req.mode = MODES[mode]
        else:
            req.problems.append(f"The link's mode `{mode}` is not practice, model or compare; showing the practice playthrough.")
    req.folder = _get(params, "folder") or DEFAULT_FOLDER
    req.set_name = _get(params, "set") or "all"
    raw_dims = _get(params, "dims")
    if raw_dims:
        dims = _read_dims(raw_dims)
        if dims is None:
            req.problems.append(f"The link's dims `{raw_dims}` are not one of S, A, P, S,A,P or Mixed; "
                                "showing S, A, P.")
        else:
            req.dims = dims
    raw_seed = _get(params, "seed")
    if raw_seed:
        if raw_seed.isdigit():
            req.seed = int(raw_seed)
        else:
            req.problems.append(f"The link's seed `{raw_seed}` is not a whole number of 0 or more; "
                                f"showing seed {DEFAULT_SEED}.")
    req.stem = _get(params, "stem") or None
    raw_q = _get(params, "q")
    if raw_q:
        _read_q(req, raw_q)
    if req.dim == "Mixed" and req.dims != ("Mixed",):
        req.dims = ("Mixed",)
    _read_sort(req, _get(params, "sort").lower(), mode_named=bool(mode))
    return req


def _read_sort(req: LinkRequest, sort: str, *, mode_named: bool) -> None:
    """`sort`: Model mode's question order; a link that names no mode opens Model mode with it."""
    if not sort:
        return
    if sort not in SORTS:
        req.problems.append(f"The link's sort `{sort}` is not one of {', '.join(SORTS)}; showing the set's order.")
        return
    if not mode_named:
        req.mode = "model"
    if req.mode != "model":
        req.problems.append("A practice playthrough keeps its own order; the link's sort is for Model mode.")
    else:
        req.sort = sort


def _read_dims(raw: str) -> tuple[str, ...] | None:
    """`S`, `A`, `P` (or `C`), `S,A,P` or `Mixed`: the Dimension dropdown's choices."""
    names = tuple("P" if d.strip().upper() == "C" else d.strip().upper() for d in raw.split(",") if d.strip())
    if names == ("MIXED",):
        return ("Mixed",)
    if names in (DEFAULT_DIMS, ("S",), ("A",), ("P",)):
        return names
    return None


def _read_q(req: LinkRequest, raw: str) -> None:
    if req.stem:
        dim = DIMS.get(raw.upper())
        if dim is None:
            req.problems.append(f"The link's q `{raw}` is not S, A, P or Mixed; showing the stem's "
                                "first question.")
        req.dim = dim
    elif raw.isdigit() and int(raw) >= 1:
        req.number = int(raw)
    else:
        req.problems.append(f"The link's q `{raw}` is not a question number (1, 2, ...) and the link names "
                            "no stem; showing question 1.")


def find_question(req: LinkRequest, questions: Sequence[tuple[str, str]]) -> tuple[int, list[str]]:
    """(index of the question the link names in `questions` ((stem, dim) pairs, in the set's
    order), readable lines when it names none of them: the first question is shown then)."""
    if req.number is not None:
        if req.number <= len(questions):
            return req.number - 1, []
        return 0, [f"The link's q `{req.number}` is past the last question ({len(questions)}); "
                   "showing question 1."]
    if not req.stem:
        return 0, []
    of_stem = [i for i, (stem, _) in enumerate(questions) if stem == req.stem]
    if not of_stem:
        return 0, [f"The link's stem `{req.stem}` is not in this set; showing question 1."]
    if req.dim is None:
        return of_stem[0], []
    exact = [i for i in of_stem if questions[i][1] == req.dim]
    if exact:
        return exact[0], []
    return of_stem[0], [f"The link's q `{SHOWN_DIM.get(req.dim, req.dim)}` is not asked for `{req.stem}` in "
                        f"this set; showing its first question."]


def question_link(*, human: bool, folder: str, set_name: str, dims: Sequence[str], seed: int,
                  stem: str, dim: str, sort: str = "") -> str:
    """The query string of a link to one question (defaults left out; the page adds its address);
    `sort` only in Model mode."""
    shown_dims = tuple("P" if d == "C" else d for d in dims)
    return view_link(tab=TAB, stem=stem, q=SHOWN_DIM.get(dim, dim),
                     mode=None if human else "model",
                     folder=None if folder == DEFAULT_FOLDER else folder,
                     set=None if set_name == "all" else set_name,
                     dims=None if shown_dims in (DEFAULT_DIMS, ("Mixed",)) else ",".join(shown_dims),
                     seed=None if seed == DEFAULT_SEED else seed,
                     sort=sort if sort and not human else None)
