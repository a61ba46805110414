"""The baselines ``metascore.yaml`` names, against the submissions of a local run.

A baseline is a participant: the account that submits the organizers' baseline on Codabench,
and in a local run the participant of a submission of the bundle (its starting kit, its
solutions, ``sample_submissions/``) or of ``--submissions``. :func:`unknown_baseline_text`
says what a local run does with a baseline no such submission is by;
:func:`unbeatable_notes` names a baseline whose files are the reference answers of the phase
it is compared in (nobody can beat it). ``bundle check``
(:mod:`~metascore.bundle.check.meta_config`, :mod:`~metascore.bundle.check.full`) and
``bundle add-meta`` (:mod:`~metascore.bundle.meta.choices`) say both.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...leaderboard.filtering import top_k_text
from ..schema.competition import Competition, Phase
from ..site.submissions import Submission, reference_copies

__all__ = ["Placed", "unknown_baseline_text", "unbeatable_notes"]

#: Each local submission and the phases it runs in.
Placed = Sequence[tuple[Submission, list[str]]]


def unknown_baseline_text(name: str, folder: Path | None) -> str:
    """What a local run does with a baseline that no submission of the bundle (starting
    kit, solutions, ``sample_submissions/``) or of ``folder`` (``--submissions``) is by."""
    if folder is not None:
        return (f"no submission of the starting kit, the solutions or --submissions {folder} is by "
                f"participant {name!r}, so `bundle run` with these submissions fails on it (its "
                "meta phase, like Codabench's results export, names submissions <owner>-<id>); on "
                "Codabench it must be the account that submits the baseline.")
    return (f"no submission of the starting kit, the solutions or sample_submissions/ is by "
            f"participant {name!r}: `bundle run` finds it when --submissions DIR holds one of "
            f"its submissions (participant {name!r} in the manifest, or a name {name}__...), and "
            "fails on it otherwise (its meta phase, like Codabench's results export, names "
            "submissions <owner>-<id>); give --submissions DIR here too to check it. On Codabench "
            "it must be the account that submits the baseline.")


def unbeatable_notes(comp: Competition, phases: Sequence[Phase], dev: str, baselines: Sequence[str],
                     placed: Placed) -> list[str]:
    """A baseline whose files are the reference answers of the phase it is compared in: it
    scores the best possible on every judge, so nobody can beat it (the final ranking would
    be empty)."""
    phase = next((p for p in phases if p.name == dev), None)
    if phase is None:
        return []
    out = []
    others = len({s.participant for s, where in placed if dev in where and s.participant not in baselines})
    for sub, where in placed:
        if sub.participant not in baselines or dev not in where:
            continue
        same = reference_copies(sub, [comp.path(t.reference_data) for t in comp.phase_tasks(phase)])
        if same:
            out.append(f"baseline {sub.candidate!r} ({sub.origin}) holds the reference answers of "
                       f"{dev!r} ({'; '.join(same)}): it scores the best possible there on every "
                       "judge, so no participant can beat it and the final ranking will be empty; "
                       "give another baseline (--baseline NAME or FILE; `baselines:` in "
                       f"metascore.yaml) or another filter ({top_k_text(others, dev)} of the local "
                       "run's participants; or --filter none; `filter.rule`).")
    return out
