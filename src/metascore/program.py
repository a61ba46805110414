"""The library side of the Codabench meta-scoring and ingestion programs.

``scoring_program/score.py`` and ``ingestion_program/ingestion.py`` are thin wrappers
around :func:`score_main` and :func:`ingest_main`. Both print ``[*]`` progress lines on
stdout and, on a user error, one readable ``metascore: error: ...`` line on stderr and
return 1 without writing any output file. :func:`run` is the one pipeline shared with
the ``metascore rank --config`` command.

Layout seen by the scoring program (Codabench v2)::

    <input>/ref/metascore.yaml     the configuration (reference data)
    <input>/ref/metascore_competition.json   the meta phase's token (``bundle zip`` writes it)
    <input>/res/...                the organizer's "result submission": an export file or
                                   an outputs tree (located by ``input.path``), or the
                                   ``metascore_long.csv`` the ingestion program wrote
    <output>/                      scores.json, scores.txt, leaderboard.csv/.json,
                                   detailed_results.html
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from ._version import __version__
from .config import CONFIG_NAME, COMPARE_R, STABILITY_Q, Config, load_config
from .errors import ConfigError, InputError, exit_code
from .readers.configured import LONG_NAME, load_scores
from .readers.rows import CANONICAL_COLUMNS
from .render.publish import write_files
from .render.writers import long_csv, render_outputs
from .render.per_judge import PER_JUDGE_FILE
from .leaderboard import Leaderboard, build_leaderboard
from .signature.binding import competition_token
from .signature import PUBLIC_KEY_NAME, SignedExport, read_public_key, verify_folder

__all__ = ["run", "recompute", "score_main", "ingest_main"]

Log = Callable[[str], None]


def run(config: Config, root: str | Path, output_dir: str | Path, *, log: Log = print,
        signed: SignedExport | None = None) -> Leaderboard:
    """Read, rank, filter and write every output file (all or nothing).

    Shared by :func:`score_main` and ``metascore rank --config``. ``signed``: the organizer's
    signature checked on ``root``, which the outputs record (``input.export``).
    """
    log(f"[*] reading scores from {Path(root).name or root}")
    table = load_scores(config.input, root, development=config.phases.development)
    if signed is not None:
        table = dataclasses.replace(table, export=signed.provenance())
    log(f"[*] {len(table.frame)} scores, format {table.format}, phases "
        f"{sorted(set(map(str, table.frame['phase'].unique())))}")
    for note in table.notes:
        log(f"[*] note: {note}")
    if table.directions:
        log("[*] directions of judges without one: the competition's leaderboard columns")
    for item in table.failed:
        log(f"[!] failed: phase {item.phase!r}, candidate {item.candidate!r}, task "
            f"{item.task!r} ({item.reason})")
    for item in table.flagged:
        log(f"[!] prediction failed, scored anyway: phase {item.phase!r}, candidate "
            f"{item.candidate!r}, task {item.task!r} ({item.reason})")
    rc = config.ranking
    log(f"[*] ranking with {rc.method} (missing={rc.missing}, seed={rc.seed})")
    ac = config.analysis
    if ac.bootstrap or ac.stability:
        log(f"[*] analysis: {ac.bootstrap} judge resamples for rank intervals (level "
            f"{ac.level}), stability {'on' if ac.stability else 'off'}, seed {rc.seed}")
    if ac.compare:
        log(f"[*] method comparison: {', '.join(ac.compare)} ({ac.bootstrap} trials, stabilities "
            f"{STABILITY_Q} x {COMPARE_R}, seed {rc.seed})")
    lb = build_leaderboard(table, config, progress=_progress(log))
    if lb.filter is not None:
        log(f"[*] filter {lb.filter.rule}: {len(lb.filter.qualified)} of "
            f"{len(lb.filter.decisions)} final candidates qualified")
    for line in _left_out(lb):
        log(line)
    for message in lb.messages:
        log(f"[!] {message}")
    for note in lb.analysis.notes:
        log(f"[*] {note}")
    if lb.analysis.comparison_note:
        log(f"[!] {lb.analysis.comparison_note}")
    files = render_outputs(lb)
    write_files(output_dir, files, withdraw=[PER_JUDGE_FILE])  # not an earlier run's
    log(f"[*] winner: {lb.winner or 'none'}")
    log(f"[*] wrote {', '.join(files)} to {output_dir}")
    return lb


def recompute(config: Config, root: str | Path) -> Leaderboard:
    """The leaderboard :func:`run` would make of ``root`` with ``config``, in memory (nothing
    is written): what ``metascore verify`` compares with a published ranking."""
    table = load_scores(config.input, root, development=config.phases.development)
    return build_leaderboard(table, config)


#: How many candidates left out of the ranking the log names one by one.
_LEFT_OUT_SHOWN = 20


def _left_out(lb: Leaderboard) -> list[str]:
    """The log lines that account for every candidate of the final board that is not
    ranked (baselines aside), with the reason, and for the submissions not selected."""
    rows = [r for r in lb.final.rows if r.position is None and not r.is_baseline]
    lines = [f"[*] {len(lb.final.ranked)} ranked, {len(rows)} not ranked"
             + (f", {len(lb.final.not_selected)} submission(s) not selected (a participant's "
                "other submissions, or late)" if lb.final.not_selected else "")
             + f" in phase {lb.final.phase!r}"]
    lines += [f"[*] not ranked: {r.candidate} ({r.reason})" for r in rows[:_LEFT_OUT_SHOWN]]
    if len(rows) > _LEFT_OUT_SHOWN:
        lines.append(f"[*] ... and {len(rows) - _LEFT_OUT_SHOWN} more (leaderboard.csv lists "
                     "every one with its reason)")
    return lines


def _progress(log: Log) -> Callable[[str, int, int], None]:
    """Log a slow bootstrap analysis (one ranking per resample) at each quarter."""
    def progress(what: str, done: int, total: int) -> None:
        if total >= 20 and done < total and done * 4 // total > (done - 1) * 4 // total:
            log(f"[*] {what}: {done}/{total} resamples")
    return progress


def score_main(input_dir: str | Path, output_dir: str | Path, program_dir: str | Path | None = None) -> int:
    """Entry point of the meta-scoring program; returns the exit code.

    ``program_dir``: the program's folder (``score.py`` passes its own). Given, the results
    export must carry the signature of the organizer whose public key the folder holds
    (:mod:`metascore.signature`): anything else is refused before it is read, so that a
    participant's upload to the meta phase ends Failed and on no leaderboard.
    """
    print(f"[*] metascore {__version__} scoring program")

    def body() -> None:
        config_path = Path(input_dir) / "ref" / CONFIG_NAME
        if not config_path.is_file():
            raise ConfigError(
                f"no {CONFIG_NAME} in the reference data ({config_path}); the bundle's "
                "reference data must ship the configuration."
            )
        config = load_config(config_path)
        print(f"[*] configuration {CONFIG_NAME} is valid")
        res = Path(input_dir) / "res"
        if not res.is_dir():
            raise InputError(f"no result submission found ({res} is missing).")
        signed = None
        if program_dir is not None:
            signed = _check_signature(Path(program_dir), Path(input_dir) / "ref", res)
            print(f"[*] signed by the organizer (key {signed.fingerprint}) for "
                  f"{signed.binding.describe()}, pulled at {signed.binding.pulled_at or 'an unknown time'}")
        run(config, res, output_dir, signed=signed)

    return exit_code(body)


def _check_signature(program_dir: Path, ref: Path, res: Path) -> SignedExport:
    """The organizer's signature on ``res``, for this meta phase's token in ``ref`` (or a
    :class:`SignatureError`)."""
    key_file = program_dir / PUBLIC_KEY_NAME
    if not key_file.is_file():
        raise ConfigError(
            f"the meta-scoring program has no organizer key ({PUBLIC_KEY_NAME} next to score.py), so "
            "it cannot tell the organizer's results export from anyone's: zip the bundle with "
            "`metascore bundle zip`, which puts your key there.")
    return verify_folder(res, read_public_key(key_file), competition_token(ref))


def ingest_main(
    input_data: str | Path,
    output_dir: str | Path,
    program_dir: str | Path,
    ingested_program: str | Path,
) -> int:
    """Entry point of the ingestion program; returns the exit code.

    Validates what the organizer submitted (an export file or an outputs tree at
    ``ingested_program``) and writes the canonical long table ``metascore_long.csv`` to
    ``output_dir``. The configuration, if any, is read from ``input_data`` or
    ``program_dir`` (``metascore.yaml``); when found, the whole pipeline runs as a check
    (nothing else is written), so errors surface here rather than at scoring.
    """
    print(f"[*] metascore {__version__} ingestion program")

    def body() -> None:
        config, found = Config(), None
        for folder in (input_data, program_dir):
            path = Path(folder) / CONFIG_NAME
            if path.is_file():
                config, found = load_config(path), path
                break
        print(f"[*] configuration: {found.name if found else 'defaults (no ' + CONFIG_NAME + ')'}")
        table = load_scores(config.input, ingested_program, development=config.phases.development)
        print(f"[*] read {len(table.frame)} scores (format {table.format})")
        if found is not None:
            lb = build_leaderboard(table, config)
            print(f"[*] the submission ranks: winner {lb.winner or 'none'}")
        write_files(output_dir, {LONG_NAME: long_csv(table.frame, CANONICAL_COLUMNS)})
        print(f"[*] wrote {LONG_NAME}")

    return exit_code(body)
