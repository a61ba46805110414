"""The competition page that tells participants how the final ranking is computed.

:func:`ranking_page` writes it, in Markdown (Codabench renders a page's text as Markdown, in
v2 ``pages:`` and v1 ``html:`` alike), from the meta phase's ``metascore.yaml`` as parsed
(:class:`~metascore.config.Config`): who is ranked (the phases, which submission stands for
a participant, the baseline rule), how they are compared (the method, missing scores, ties,
and apart the judges that rank, the ranked phase's, and those that decide who is ranked,
the development phase's, each with its direction and weight), and how to read the meta
phase's one leaderboard row. ``metascore bundle add-meta`` adds it to the bundle's pages.

Every name, phase name, column title and parameter of the configuration goes through
:func:`~metascore.bundle.platform.page_text.page_text`: the page shows it as text.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...config import STATISTICS, Config, JudgeConfig
from ...registry import get_ranking_method
from ...submission_order import BY_NUMBER, BY_TIME, EARLIER
from ..platform.page_text import page_text

__all__ = ["ranking_page", "PAGE_TITLE"]

#: The page's title in the competition's tabs.
PAGE_TITLE = "Final ranking"

_MISSING_TEXTS = {
    "worst": "a missing score (a task that failed or was not submitted) ranks below every "
             "score on that task, tied with the other missing ones",
    "pairwise": "two participants are compared only on the tasks both have a score on",
    "drop_candidates": "a participant with a missing score is not ranked",
    "drop_judges": "a task on which someone has no score is left out of the ranking",
    "error": "every participant must have a score on every task, or the ranking is not computed",
}
_WHEN_EMPTY = {
    "n_qualified": "0: nobody qualified, so nobody is ranked",
    "n_candidates": "0: nobody took part in the ranked phase",
    "winner_score": "empty when fewer than two participants are ranked (one qualified "
                    "participant wins without a score)",
}


def ranking_page(config: Config, *, meta_phase: str, columns: Mapping[str, str],
                 eye_icons: bool = True) -> str:
    """The page's Markdown text. ``columns``: the meta phase's leaderboard columns, key ->
    title (the keys of ``output.scores``); ``eye_icons``: whether the leaderboards show them
    (else the link at the top of the page, written by ``metascore codabench publish``, is the
    way to the ranking)."""
    dev, final = config.phases.development, config.phases.final
    ranked = final or dev
    spec = get_ranking_method(config.ranking.method)
    lines = [
        f"# {PAGE_TITLE}",
        "",
        f"The final ranking ranks the participants of phase **{_cell(ranked)}**. It is published "
        f"in phase **{_cell(meta_phase)}**, once {_phase_list(dev, final)} have ended: the organizers "
        "submit the results of those phases there, and its leaderboard shows one row, theirs: "
        "**that row is not a participant's result**. The winner and the link to the whole "
        "ranking (every participant, their position and score, and why each one is or is not "
        "ranked) appear at the top of this page once the organizers have submitted"
        + (", and the row's eye icon opens the same ranking." if eye_icons else "."),
        "",
        "## Who is ranked",
        "",
        *_who(config, dev, final),
        "",
        "## How participants are compared",
        "",
        f"- **Method**: {spec.name.replace('_', ' ')} (`{spec.name}`"
        + (f", {_params(config.ranking.params)}" if config.ranking.params else "") + ")"
        + (f": {_sentence(spec.description)}" if spec.description else "."),
        f"- **Missing scores**: {_MISSING_TEXTS.get(config.ranking.missing, config.ranking.missing)}.",
        f"- **Ties**: participants with equal scores share a position; {_tie_break(config)}.",
        "",
        *_judges(config, dev, final),
        "",
        f"## The {_cell(meta_phase)} row",
        "",
        "| column | what it says |",
        "|---|---|",
        *(f"| {_cell(title)} | {_column(stat)} |"
          for key, title in columns.items() for stat in [config.scores.get(key, key)]),
        "",
        "Computed by metascore's meta-scoring program from the phases' results; the same "
        "scores always give the same ranking.",
    ]
    return "\n".join(lines) + "\n"


def _who(config: Config, dev: str, final: str | None) -> list[str]:
    pick = {"best": "best", "last": "last", "all": "every"}
    out = [f"- In phase **{_cell(final or dev)}**, each participant's "
           f"{pick[config.selection.final if final else config.selection.development]} "
           "submission stands for them."]
    rule, filt = config.filter.rule, config.filter
    where = f"in phase **{_cell(dev)}**" if final else "in the same phase"
    decides = (f" Phase **{_cell(dev)}** decides who is ranked, not the order: its scores do not "
               "enter the final ranking." if final else "")
    base = ", ".join(f"'{_cell(b)}'" for b in config.baselines) or "the baseline"
    if rule == "beat_baseline":
        which = "every baseline" if filt.beat == "all" else "at least one baseline"
        out.append(f"- Only those who beat {which} ({base}) {where} are ranked, comparing the "
                   f"{pick[config.selection.development]} submission of each participant with "
                   f"the same method, on the judges that decide who is ranked (below): strictly "
                   f"better, a tie does not qualify.{decides} The baselines are shown for "
                   "reference, without a position.")
    elif rule == "top_k":
        k = "k (estimated from the phases' rankings)" if filt.k == "auto" else str(filt.k)
        out.append(f"- Only the {k} best {where} are ranked, by the same method on the judges "
                   f"that decide who is ranked (below).{decides}")
    elif config.baselines:
        out.append(f"- Every participant is ranked; the baseline{'s' if len(config.baselines) > 1 else ''} "
                   f"({base}) {'are' if len(config.baselines) > 1 else 'is'} shown for reference, "
                   "without a position (no filter: nobody needs to beat it).")
    else:
        out.append("- Every participant is ranked (no filter).")
    return out


def _judges(config: Config, dev: str, final: str | None) -> list[str]:
    """The judges that rank (the ranked phase's) and, apart, those that decide who is
    ranked (the development phase's), when a filter does."""
    ranked = final or dev
    qualifies = dev if config.filter.rule != "none" else None
    if config.judges is None:
        text = (f"The ranking compares the participants on every task and score column found in "
                f"phase **{_cell(ranked)}**, each as a judge of equal weight, higher is better.")
        if qualifies is not None and final:
            text += (f" Who is ranked is decided the same way on the columns of phase "
                     f"**{_cell(dev)}**.")
        return [text]
    mine = _phase_judges(config.judges, ranked)
    lines = [f"The ranking compares the participants on these judges (tasks and leaderboard "
             f"columns) of phase **{_cell(ranked)}**" + (" only:" if final else ":"), "",
             *_judge_table(mine)]
    if qualifies is None or not final:
        return lines
    theirs = _phase_judges(config.judges, dev)
    if theirs == mine:
        return lines + ["", f"Who is ranked is decided on the same judges, with the scores of "
                        f"phase **{_cell(dev)}**."]
    return lines + ["", f"Who is ranked is decided on these judges of phase **{_cell(dev)}**:", "",
                    *_judge_table(theirs)]


def _phase_judges(judges: tuple[JudgeConfig, ...], phase: str) -> list[JudgeConfig]:
    """The judges that count in ``phase`` (those without a phase count in every one)."""
    return [j for j in judges if j.phase in (None, phase)]


def _judge_table(judges: list[JudgeConfig]) -> list[str]:
    if not judges:
        return ["(none: metascore.yaml names no judge of this phase)"]
    return ["| task | column | better | weight |", "|---|---|---|---|",
            *(f"| {_cell(j.task)} | {_cell(j.title or j.metric or '(all)')} | "
              f"{'higher' if j.higher_is_better else 'lower'} | {j.weight:g} |" for j in judges)]


def _column(stat: str) -> str:
    """What a statistic of the row says (a name this version does not know: the name, as text)."""
    if stat not in STATISTICS:
        return _cell(stat)
    text, empty = STATISTICS[stat], _WHEN_EMPTY.get(stat)
    return f"{text[0].upper()}{text[1:]}" + (f"; {empty}" if empty else "")


def _tie_break(config: Config) -> str:
    keys = [k for k in config.ranking.tie_break if k != "candidate"]
    if keys[:1] == ["submitted_at"]:
        return (f"within a shared position, {EARLIER} is listed first: {BY_TIME} where the results "
                f"carry one, else {BY_NUMBER} (Codabench numbers submissions in the order they are "
                "made: the `<id>` of `<owner>-<id>`; its results export holds no times), which gives "
                "the same order; a submission the platform copies into the next phase keeps the "
                "place of the one it copies")
    words = {"participant": "the participant's name", "input_order": "the order of the results export"}
    return "within a shared position, the order is fixed by " + (
        ", then ".join(words.get(k, k) for k in keys) or "the submission's name (`<owner>-<number>`)")


def _phase_list(dev: str, final: str | None) -> str:
    return f"**{_cell(dev)}**" if final is None else f"**{_cell(dev)}** and **{_cell(final)}**"


def _params(params: Mapping[str, object]) -> str:
    return ", ".join(f"{_cell(k)}={_cell(v)}" for k, v in params.items())


def _sentence(text: str) -> str:
    """The description's first clause, as a sentence."""
    first = _cell(text.strip().splitlines()[0].split(";")[0].strip())
    return first if first.endswith(".") else first + "."


def _cell(text: object) -> str:
    """``text`` as the page shows it, never as Markdown or HTML (in a table cell too)."""
    return page_text(text)
