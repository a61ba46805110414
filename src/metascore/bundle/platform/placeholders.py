"""What a program's ``command`` placeholders become in each step, and which of them work.

The compute worker replaces the legacy placeholders of a ``command`` (:data:`PLACEHOLDERS`)
with plain ``str.replace`` (:func:`substitute`) and mounts a few folders for each program
(:func:`volumes`, :func:`mount_points`): the worker's jobs
(:mod:`metascore.bundle.worker.job`) run commands so, and the schema checks them by the same
rules. A placeholder can therefore name a folder the worker does not mount in that step
(``$hidden`` in the prediction step), be left as typed (``$ingested_program``: no shell
expands it), or be replaced in part (``$input_data`` becomes ``/app/input_data_data`` for an
ingestion program).

:data:`STEPS` are the five places a command runs; :func:`markdown_table` is the table of
``docs/placeholders.md`` (a test keeps them equal); :func:`command_problems` returns one
warning per placeholder or ``/app`` path of a command that cannot work in its step.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...errors import did_you_mean

__all__ = ["PLACEHOLDERS", "substitute", "volumes", "mount_points", "Step", "STEPS", "step_for",
           "markdown_table", "command_problems"]


def _placeholder_values(kind: str, is_scoring: bool, ingestion_only_during_scoring: bool) -> tuple[tuple[str, str], ...]:
    """(placeholder, value) in the worker's order (``replace_legacy_metadata_command``)."""
    return (
        ("$input", "/app/input_data" if kind == "ingestion" else "/app/input"),
        ("$output", "/app/output"),
        ("$program", "/app/ingestion_program" if ingestion_only_during_scoring and is_scoring else "/app/program"),
        ("$ingestion_program", "/app/program"),
        ("$hidden", "/app/input/ref"),
        ("$shared", "/app/shared"),
        ("$submission_program", "/app/ingested_program"),
        ("$tmp", "/app/output"),
        ("$predictions", "/app/input/res" if is_scoring else "/app/output"),
    )


#: The placeholders the worker replaces in a ``command``, in the order it replaces them.
PLACEHOLDERS = tuple(name for name, _ in _placeholder_values("program", False, False))


def substitute(command: str, kind: str, is_scoring: bool, ingestion_only_during_scoring: bool = False) -> str:
    """The v2 worker's placeholder substitution: plain ``str.replace``, in this order.

    ``kind`` is ``"program"`` (submission or scoring program) or ``"ingestion"``.

    >>> substitute("python $program/score.py $input $output", "program", True)
    'python /app/program/score.py /app/input /app/output'
    >>> substitute("python $program/ingest.py $input $output $submission_program", "ingestion", False)
    'python /app/program/ingest.py /app/input_data /app/output /app/ingested_program'
    """
    for placeholder, value in _placeholder_values(kind, is_scoring, ingestion_only_during_scoring):
        command = command.replace(placeholder, value)
    return command


def volumes(kind: str, is_scoring: bool, ingestion_only: bool, input_data: bool) -> tuple[tuple[str, str], ...]:
    """The worker's volumes for one program (``compute_worker.py: _run_program_directory``;
    docs/placeholders.md shows which folder is mounted in which step): ``(container path,
    folder of the job's sandbox)``, in the worker's order."""
    found = [("/app/program", "program" if kind == "program" else "ingestion_program"), ("/app/output", "output")]
    if kind == "ingestion":
        found.append(("/app/ingested_program", "input/res" if (is_scoring and ingestion_only) else "program"))
    if is_scoring:
        found += [("/app/input", "input"), ("/app/shared", "shared")]
    if input_data:
        found.append(("/app/input_data", "input_data"))
    return tuple(found)


def mount_points(kind: str, is_scoring: bool, ingestion_only: bool, input_data: bool) -> tuple[str, ...]:
    """The container paths the worker mounts for one program (:func:`volumes`)."""
    return tuple(path for path, _ in volumes(kind, is_scoring, ingestion_only, input_data))


@dataclass(frozen=True)
class Step:
    """Where a command runs: the program ``kind`` (``program``: the submission or the scoring
    program; ``ingestion``), the job (prediction or scoring) and the task's
    ``ingestion_only_during_scoring``."""

    label: str
    kind: str
    is_scoring: bool
    ingestion_only: bool = False


STEPS = (
    Step("submission (prediction step)", "program", False),
    Step("ingestion program (prediction step)", "ingestion", False),
    Step("scoring program (scoring step)", "program", True),
    Step("ingestion program (scoring step, ingestion_only_during_scoring)", "ingestion", True, True),
    Step("scoring program (scoring step, ingestion_only_during_scoring)", "program", True, True),
)

#: Why a folder is missing from a step, for the messages.
_WHY_ABSENT = {
    "/app/input": "only the scoring step has /app/input (ref/ and res/)",
    "/app/shared": "only the scoring step has /app/shared",
    "/app/ingested_program": "only an ingestion program gets the submission there",
    "/app/ingestion_program": "the worker never mounts it; this program is /app/program",
    "/app/input_data": "the task's input data, mounted in the prediction step (and in the "
                       "scoring step with ingestion_only_during_scoring)",
}
#: Placeholders people write, by meaning, and the one the worker replaces.
_MEANT = {
    "ingested_program": "$submission_program", "submission": "$submission_program",
    "submission_dir": "$submission_program", "submission_program_dir": "$submission_program",
    "ref": "$hidden", "reference": "$hidden", "reference_data": "$hidden", "reference_dir": "$hidden",
    "res": "$predictions", "prediction": "$predictions", "prediction_dir": "$predictions",
    "input_dir": "$input", "output_dir": "$output", "program_dir": "$program", "score_dir": "$output",
}
_TOKEN = re.compile(r"\$(\{)?([A-Za-z_]\w*)(\})?")
_APP_PATH = re.compile(r"/app/\w+")


def step_for(kind: str, is_scoring: bool, ingestion_only: bool) -> Step:
    """The step of :data:`STEPS` where a ``kind`` program runs."""
    return next(s for s in STEPS if (s.kind, s.is_scoring) == (kind, is_scoring)
                and s.ingestion_only == (ingestion_only and is_scoring))


def _mounted(path: str, step: Step, input_data: bool) -> bool:
    mounts = mount_points(step.kind, step.is_scoring, step.ingestion_only, input_data)
    return any(path == m or path.startswith(m + "/") for m in mounts)


def markdown_table() -> str:
    """The table of docs/placeholders.md: each placeholder's value in each step, and
    whether the worker mounts it there (the task is assumed to have input data)."""
    head = "| placeholder | " + " | ".join(s.label for s in STEPS) + " |"
    lines = [head, "|---" * (len(STEPS) + 1) + "|"]
    for name in PLACEHOLDERS:
        cells = []
        for step in STEPS:
            value = substitute(name, step.kind, step.is_scoring, step.ingestion_only)
            mounted = _mounted(value, step, not step.is_scoring or step.ingestion_only)
            cells.append(f"`{value}`" + ("" if mounted else " (not mounted)"))
        lines.append(f"| `{name}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def command_problems(command: str, step: Step, has_input_data: bool) -> list[str]:
    """Warnings for the placeholders and ``/app`` paths of ``command`` that cannot work
    where it runs (``step``; ``has_input_data``: the task has input data, which the worker
    mounts in the prediction step, and in the scoring step with ingestion_only_during_scoring)."""
    input_data = has_input_data and (not step.is_scoring or step.ingestion_only)
    shell = bool(re.match(r"\s*(?:\S*/)?(?:ba)?sh\s+-\w*c\b", command))
    problems: list[str] = []
    reported: set[str] = set()
    for match in _TOKEN.finditer(command):
        token, braces, name = match.group(0), match.group(1), match.group(2)
        word = f"${name}"
        if braces:
            if shell:
                continue
            problems.append(f"{token!r} is left as typed: the worker replaces {word!r} without "
                            "braces, and there is no shell to expand it.")
            continue
        if word in PLACEHOLDERS:
            value = substitute(word, step.kind, step.is_scoring, step.ingestion_only)
            if not _mounted(value, step, input_data):
                reported.add(_root(value))
                problems.append(f"{word!r} becomes {value}, which the worker does not mount for "
                                f"the {step.label} ({_why(value, has_input_data)}).")
            continue
        replaced = substitute(word, step.kind, step.is_scoring, step.ingestion_only)
        if replaced != word:
            problems.append(f"{word!r} is not a placeholder: the worker replaces its beginning and "
                            f"passes {replaced!r}{_meant(name)}.")
        elif not shell:
            problems.append(f"{word!r} is not a placeholder the worker replaces, and there is no "
                            f"shell to expand it: the program gets the text {word!r}{_meant(name)}.")
    final = substitute(command, step.kind, step.is_scoring, step.ingestion_only)
    for path in dict.fromkeys(_APP_PATH.findall(final)):
        if path not in reported and path in _WHY_ABSENT and not _mounted(path, step, input_data):
            problems.append(f"it uses {path}, which the worker does not mount for the "
                            f"{step.label} ({_why(path, has_input_data)}).")
    return problems


def _root(path: str) -> str:
    """``/app/input/ref`` -> ``/app/input``."""
    return "/" + "/".join(path.strip("/").split("/")[:2])


def _why(path: str, has_input_data: bool) -> str:
    root = _root(path)
    if root == "/app/input_data" and has_input_data:
        return "the input data reaches the scoring step only with ingestion_only_during_scoring"
    if root == "/app/input_data":
        return "the task has no input_data"
    return _WHY_ABSENT.get(root, "see docs/placeholders.md")


def _meant(name: str) -> str:
    if name in _MEANT:
        return f" (did you mean {_MEANT[name]!r}?)"
    return did_you_mean(f"${name}", PLACEHOLDERS)
