"""The metascore commands a message proposes, with the bundle they are for.

A message made where the bundle's path as the organizer typed it is not known (the
meta-scoring program, which runs on Codabench too; a check of a zip's extraction; the notes
of ``add-meta``'s editor) proposes ``metascore bundle add-meta BUNDLE ...``
(:data:`ADD_META`); the command that prints it names the bundle it was given
(:func:`name_bundle`), so that the proposal is the command to type.
"""

from __future__ import annotations

import os
import shlex

__all__ = ["ADD_META", "name_bundle"]

#: The add-meta command, its bundle still to be named.
ADD_META = "metascore bundle add-meta BUNDLE"


def name_bundle(text: str, bundle: str | os.PathLike[str] | None) -> str:
    """``text`` with :data:`ADD_META` naming ``bundle`` (quoted for a shell when it must be);
    unchanged without one."""
    if bundle is None:
        return text
    return text.replace(ADD_META, f"metascore bundle add-meta {shlex.quote(os.fspath(bundle))}")
