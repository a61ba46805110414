"""A program's ``command`` checked against its folder, its step and its own source.

:func:`check_command` returns the errors and warnings of one command of a scoring or
ingestion program (folder or zip):

errors (the program cannot run)
    the file the interpreter runs (``python3 score.py``, ``python $program/score.py``,
    ``/app/program/run.sh``) is not in the program, with the closest name there;
    a command that cannot be split.
warnings (it runs, but probably not as meant)
    shell syntax (there is no shell); a placeholder that is not one, or that names a folder
    the worker does not mount in the program's step (:mod:`~metascore.bundle.platform.placeholders`);
    another file argument that is not in the program; an ingestion program that is given no
    ``$submission_program`` and whose source never names ``/app/ingested_program`` (it cannot
    find the submission's code); a scoring command that passes ``$program`` (the scoring
    program's own folder) and nothing that holds the predictions, from a program whose
    source does not find them itself.
"""

from __future__ import annotations

import re
import shlex
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from ...errors import did_you_mean
from .competition import Task
from ..files import is_noise
from ..platform.placeholders import command_problems, step_for

__all__ = ["check_command", "program_files"]

_SHELL = re.compile(r"&&|\|\||[|;<>`]|\$\(")
_INTERPRETER = re.compile(r"^(?:\S*/)?(?:python[\d.]*|Rscript|bash|sh|julia|node|perl|ruby)$")
_SCRIPT_SUFFIXES = (".py", ".R", ".r", ".sh", ".jl", ".js", ".pl", ".rb")
# a scoring program's source that finds the predictions itself
_PREDICTIONS_IN_SOURCE = re.compile(r"/app/input\b|input/res\b|['\"]res['\"]")


def program_files(program: Path) -> list[str]:
    """The files of a program folder or zip, as paths relative to its root (noise left out)."""
    if program.is_dir():
        return sorted(p.relative_to(program).as_posix() for p in program.rglob("*")
                      if p.is_file() and not any(is_noise(part) for part in p.relative_to(program).parts))
    with zipfile.ZipFile(program) as zf:
        return sorted(n for n in zf.namelist()
                      if not n.endswith("/") and not any(is_noise(part) for part in n.split("/")))


def check_command(
    command: str, *, kind: str, task: Task, program: Path, source: Callable[[], str],
) -> tuple[list[str], list[str]]:
    """``(errors, warnings)`` of the ``command`` of ``task``'s ``kind`` program
    (``"scoring"`` or ``"ingestion"``) stored at ``program``; ``source()`` is the text of
    the program's files (read only when needed)."""
    errors: list[str] = []
    warnings: list[str] = []
    only = task.ingestion_only_during_scoring
    is_scoring = kind == "scoring" or only
    step = step_for("program" if kind == "scoring" else "ingestion", is_scoring, only)
    if _SHELL.search(command):
        warnings.append(f"command {command!r} uses shell syntax, but the worker runs it without "
                        "a shell; wrap it as: bash -c \"...\".")
    warnings.extend(command_problems(command, step, task.input_data is not None))
    try:
        tokens = shlex.split(command)
    except ValueError as exc:
        errors.append(f"command {command!r} cannot be split ({exc}).")
        return errors, warnings
    files = program_files(program)
    script = _script_index(tokens)
    for i, token in enumerate(tokens):
        rel = _in_program(token, only)
        if rel is None or (i != script and not rel.endswith(_SCRIPT_SUFFIXES)):
            continue
        if rel in files or any(f.startswith(rel.rstrip("/") + "/") for f in files):
            continue
        if i == script:
            errors.append(f"command {command!r} runs {token!r}, but {program.name} has no "
                          f"{rel}{_closest(rel, files)}.")
        else:
            warnings.append(f"the command passes {token!r} but {program.name}/{rel} does not exist.")
    if kind == "ingestion" and "ingested_program" not in command and "$submission_program" not in command:
        text = source()
        if "ingested_program" not in text and "submission_program" not in text:
            warnings.append(
                "the command passes no '$submission_program' and no file of the ingestion program "
                "names /app/ingested_program, where the worker mounts the submission: in a "
                "code-submission competition the ingestion program cannot find the submission's "
                "code. Pass $submission_program (or read /app/ingested_program).")
    if kind == "scoring" and any(t.rstrip("/") in ("$program", "/app/program") for t in tokens[1:]):
        if not _reaches_predictions(tokens) and not _PREDICTIONS_IN_SOURCE.search(source()):
            warnings.append(
                "the command passes '$program' (/app/program: the scoring program's own folder in "
                "the scoring step) and nothing under /app/input/res; if it is meant as the "
                "predictions, pass '$predictions' (/app/input/res) or '$input' (/app/input, holding "
                "res/ and ref/); the reference data is '$hidden' (/app/input/ref).")
    return errors, warnings


def _reaches_predictions(tokens: list[str]) -> bool:
    """Whether an argument is the scoring step's predictions or a folder holding them."""
    for token in tokens[1:]:
        path = token.rstrip("/")
        if path in ("$input", "/app/input", "/app") or "$predictions" in path:
            return True
        if path.startswith(("$input/res", "/app/input/res")):
            return True
    return False


def _script_index(tokens: list[str]) -> int | None:
    """The index of the file the command runs: the first non-option after an interpreter,
    or the command itself when it is a path (``./run.sh``); ``None`` for a program found on
    the PATH, ``python -m module`` and ``bash -c ...``."""
    if not tokens:
        return None
    if not _INTERPRETER.match(tokens[0]):
        return 0 if "/" in tokens[0] else None
    skip = False
    for i, token in enumerate(tokens[1:], 1):
        if skip:
            skip = False
        elif token in ("-m", "-c") or re.match(r"-\w*[mc]$", token):
            return None
        elif token in ("-W", "-X", "-e", "-o", "--rcfile", "--init-file"):
            skip = True  # an option with a value
        elif not token.startswith("-"):
            return i
    return None


def _in_program(token: str, only: bool) -> str | None:
    """The path inside the program folder that ``token`` names, or ``None``."""
    rel = None
    for prefix in ("/app/program/", "$ingestion_program/", "$program/"):
        if token.startswith(prefix):
            if prefix == "$program/" and only:  # /app/ingestion_program: a placeholder warning
                return None
            rel = token[len(prefix):]
            break
    else:
        if not token.startswith(("/", "$", "-", "~")) and "=" not in token:
            rel = token
    if not rel:
        return None
    path = PurePosixPath(rel)
    if ".." in path.parts or "$" in rel:
        return None
    return path.as_posix() + ("/" if rel.endswith("/") else "")


def _closest(rel: str, files: list[str]) -> str:
    close = did_you_mean(rel, files)
    if close:
        return close
    scripts = [f for f in files if f.endswith(_SCRIPT_SUFFIXES)][:6]
    return f" (its scripts: {', '.join(scripts)})" if scripts else f" ({len(files)} file(s), no script)"
