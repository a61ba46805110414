"""The organizer's side of a meta phase, as the tests lay it out: ``bundle zip`` put the
public key next to the meta-scoring program and a competition token into the meta task's
reference data; ``codabench submit`` signs the results export for that token."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from metascore.signature.binding import COMPETITION_FILE, Binding, new_token, competition_token, token_text
from metascore.signature import PUBLIC_KEY_NAME, organizer_key, public_key_text, sign_folder


def sign_as_organizer(input_dir: Path, program: Path | None = None) -> None:
    """Sign ``input_dir/res`` for the token of ``input_dir/ref`` (written when absent), with the
    session's organizer key, whose public half goes into ``program`` when given."""
    key = organizer_key()
    if program is not None:
        (program / PUBLIC_KEY_NAME).write_text(public_key_text(key.public))
    ref = input_dir / "ref"
    if not (ref / COMPETITION_FILE).is_file():
        ref.mkdir(parents=True, exist_ok=True)
        (ref / COMPETITION_FILE).write_text(token_text(new_token(), "test"))
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    sign_folder(input_dir / "res", key, Binding("https://codabench.example", 1, "Final ranking", 3,
                                                (competition_token(ref),), now), now)
