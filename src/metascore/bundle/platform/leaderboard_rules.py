"""The leaderboard's ``submission_rule``: Codabench's rules by name, and what they mean for a bundle.

Which submissions a leaderboard (and so the results export and phase migration) holds
depends on its rule (:data:`SUBMISSION_RULES`; how the site applies each is
:mod:`metascore.bundle.site.submission_rules`). Under :data:`MANUAL_RULES` nothing reaches
the leaderboard without a click; :func:`force_last_fix` says how an organizer puts each
participant's last finished submission there instead, in a v2 or a v1 bundle.
"""

from __future__ import annotations

from .commands import ADD_META

__all__ = ["SUBMISSION_RULES", "MANUAL_RULES", "force_last_fix"]

SUBMISSION_RULES = (
    "Add", "Add_And_Delete", "Add_And_Delete_Multiple", "Force_Last", "Force_Latest_Multiple",
    "Force_Best",
)
#: Rules under which nothing reaches the leaderboard without a click.
MANUAL_RULES = ("Add", "Add_And_Delete", "Add_And_Delete_Multiple")


def force_last_fix(version: int, *, explain: bool = True) -> str:
    """How an organizer puts each participant's last finished submission on the leaderboard
    (and so in the results export) without a click, in a v2 or a v1 bundle: the add-meta
    command (:data:`~metascore.bundle.platform.commands.ADD_META`), and with ``explain`` what
    it sets."""
    if version == 2:
        return f"`{ADD_META} --submission-rule Force_Last`" + (
            " (it sets submission_rule: Force_Last on the leaderboard in competition.yaml)" if explain else "")
    return ("a v1 competition.yaml cannot set the rule (Codabench's v1 import makes it Add): "
            f"`{ADD_META} --submission-rule Force_Last` writes the file in the v2 "
            "form, which can, or after the upload choose the submission rule 'Force Last' in the "
            "Leaderboard tab of Codabench's competition editor")
