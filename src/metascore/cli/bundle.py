"""``metascore bundle add-meta | check | run | env | zip | runtime``: add the meta phase to a Codabench/CodaLab
bundle and test it before uploading it.

:func:`add_bundle_commands` adds one parser per subcommand (``_add_meta_parser`` ...), each
running its ``_cmd_*`` function; those of ``env`` and ``runtime``, the caches the others draw
on, are :mod:`metascore.cli.bundle_cache`'s."""

from __future__ import annotations

import argparse
import functools
import signal
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable
from pathlib import Path

from ..bundle.check.image_checks import RECOMMENDED_IMAGE
from ..bundle.worker.limits import add_limit_options, limits_from_args
from ..bundle.worker.local import DEFAULT_SANDBOX, SANDBOX_MODES
from ..bundle.runner import DEFAULT_OUT, JOBS_CAP
from ..bundle.worker.backends import BACKENDS, DEFAULT_BACKEND
from ..bundle.platform.commands import name_bundle
from ..bundle.platform.meta_program import META_PYTHONS
from ..bundle.runtime.store import COMPRESSIONS, first_build_notice
from ..bundle.site.server import DEFAULT_FEED, FEEDS
from ..config import RankingConfig
from ..errors import ConfigError, InputError
from .bundle_cache import cmd_env, cmd_runtime

__all__ = ["add_bundle_commands"]


def add_bundle_commands(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bundle`` and its subcommands to the ``metascore`` command line."""
    bundle = subparsers.add_parser(
        "bundle",
        help="add the meta phase to, check, run locally, or zip a Codabench/CodaLab bundle; "
        "the environments and the meta program's Python it runs with",
        description="Work with a competition bundle (a folder or zip with competition.yaml at "
        "its root): add the meta-ranking phase to it, check it, run it as Codabench's compute "
        "worker would, or zip it for upload; `env` and `runtime` prepare the Python environments "
        "a local run uses and the meta-scoring program's own Python a zip carries.",
    )
    sub = bundle.add_subparsers(dest="bundle_command", metavar="SUBCOMMAND")
    sub.required = True
    for add_parser in (_add_meta_parser, _check_parser, _run_parser, _env_parser, _zip_parser, _runtime_parser):
        add_parser(sub)


def _add_meta_parser(sub: argparse._SubParsersAction) -> None:
    """``metascore bundle add-meta``: its options."""
    p = sub.add_parser(
        "add-meta",
        help="add the meta-ranking phase (metascore's meta-scoring program) to your bundle",
        description="Add to a bundle you already have (v2 or v1, folder or zip) everything the "
        "meta-ranking phase needs and nothing else: the meta task (meta_scoring_program/, which "
        "`bundle run` and `bundle zip` fill, and reference data holding metascore.yaml), a "
        "'Final ranking' phase the day after the last phase ends, and the leaderboard columns the "
        "meta-scoring program writes. The competition's docker_image is left as it is (--image "
        "sets another): the meta-scoring program runs in it, with the image's python3 where the image "
        "is known to run it (codalab/codalab-legacy:py312), else with its own Python, which `bundle "
        "zip` puts in. metascore.yaml ranks the last phase after the "
        "one before it (one phase, or no filter: the last phase alone; more than two: a note shows "
        "what each phase holds and the choice), judges = the leaderboard columns with "
        "directions from their sorting (no sorting: descending, as Codabench sorts), timing and "
        "computed columns left out, baseline = the starting kit's submission or the solution "
        "(none, or none that runs in the development phase: no filter, said). So that every participant sees the final ranking and nobody but "
        "the organizers its input, it sets enable_detailed_results: true (the ranking is the "
        "meta submission's detailed results) and hide_output: true on the Final ranking phase "
        "(its input is the results export), and adds a 'Final ranking' page saying how the "
        "ranking is computed, written from metascore.yaml. competition.yaml keeps its comments "
        "and order; each added block has a comment. A folder is edited in place (or copied to -o DIR); a zip gives a zip with the "
        "meta-scoring program filled in (in place, or -o NEW.zip), or a folder with -o DIR. "
        "Prints what it changed and what to check. Running it again changes only what its options "
        "name and keeps the rest (the end, the rule, and metascore.yaml's method, baselines, judges, "
        "filter and phases), and says so; without options it changes nothing. --force is needed only "
        "over a meta phase add-meta did not write, or over its files edited by hand. Nothing "
        "is written unless the result passes `metascore bundle check`, and nothing through a link "
        "that leaves the bundle (every path written is checked first).",
    )
    p.add_argument("bundle", help="bundle folder or zip")
    p.add_argument("--output", "-o", metavar="OUT",
                   help="write a copy instead of editing the bundle: a folder, or (zip bundles) "
                   "NEW.zip")
    p.add_argument("--method", "-m",
                   help=f"ranking method of the final ranking (default: {RankingConfig.method}; a "
                   "second run keeps the bundle's; see `metascore methods`)")
    p.add_argument("--baseline", action="append", metavar="NAME|FILE",
                   help="the account (participant) whose submission is the baseline, or a "
                   "submission zip or folder (a path: copied into sample_submissions/<development "
                   "phase>/ and run there locally as participant 'baseline'); repeatable; "
                   "'none': no baseline (default: the starting kit's submission, run locally as "
                   "'baseline', or the first solution, run as 'organizer')")
    p.add_argument("--judges", metavar="KEY,...", type=_names,
                   help="the leaderboard columns (keys or titles) to rank on (default: every column "
                   "but computed and timing ones)")
    p.add_argument("--exclude", metavar="KEY,...", type=_names, default=(),
                   help="leaderboard columns not to rank on")
    p.add_argument("--filter", metavar="RULE",
                   help="who enters the final ranking: beat_baseline (default with a baseline), "
                   "top_k:K, top_k:auto, or none (default without a baseline)")
    p.add_argument("--phases", metavar="DEV[,FINAL]", type=_names,
                   help="the development and final phases (default: the last two phases; one "
                   "name: that phase ranked alone)")
    p.add_argument("--submission-rule", metavar="RULE",
                   help="set the leaderboard's submission_rule, e.g. Force_Last: each "
                   "participant's last finished submission goes on the leaderboard, and so into the "
                   "results export the meta phase ranks (under Add, Codabench's default, nothing "
                   "does without a click); a v1 competition.yaml, which cannot set a rule, is "
                   "written in the v2 form (the v1 file kept as competition.v1.yaml)")
    p.add_argument("--end", metavar="DATE",
                   help="the end date of the last phase when it has none (e.g. 2027-06-30); the "
                   "Final ranking phase starts the day after")
    p.add_argument("--image", metavar="IMAGE",
                   help="set the competition's docker_image, the image of every phase (default: "
                   "leave it as it is)")
    p.add_argument("--eye-icons", choices=("keep", "hide"), default="keep",
                   help="the leaderboards' eye icons (detailed results): keep them (default; a "
                   "row whose scoring program writes no detailed_results.html opens an empty "
                   "page, as the notes say) or hide them all (show_detailed_results_in_leaderboard: "
                   "false; participants open the ranking from the link `codabench submit` writes "
                   "at the top of the 'Final ranking' page)")
    _meta_python_option(p, "the meta-scoring program filled into a zip bundle")
    p.add_argument("--force", action="store_true",
                   help="write the meta phase (its task, phase, columns, page and metascore.yaml) "
                   "even over a meta phase add-meta did not write, or over its files edited by "
                   "hand since; a second run needs it for nothing else")
    p.add_argument("--submissions", metavar="DIR", type=Path,
                   help="the submissions folder `bundle run --submissions` will use (instead of "
                   "sample_submissions/), where the baseline is looked for")
    p.set_defaults(func=_interruptible(_cmd_add_meta))


def _check_parser(sub: argparse._SubParsersAction) -> None:
    """``metascore bundle check``: its options."""
    p = sub.add_parser(
        "check",
        help="check competition.yaml, the files it references and the programs' metadata",
        description="Check a bundle: first its links (a link that leaves the bundle, to nothing, "
        "or a FIFO, in competition.yaml, what it names or sample_submissions/, is an error "
        "naming the link and its target, and nothing behind it is read; a zip holding a link "
        "member is refused) and the size of competition.yaml (at most 4 MiB, 200,000 nodes with "
        "aliases expanded, 100 levels deep), then the v2 or v1 competition.yaml schema (errors name the key "
        "and the allowed values), the files it references, each program's metadata, and the "
        "meta-ranking's metascore.yaml against the competition (method and parameters, "
        "directions, judges' tasks and columns, baselines, output keys). Warnings list what "
        "Codabench accepts but silently ignores or gets wrong, including its known traps "
        "(multi-task phases with Force_Last, migration of multi-task submissions, a meta phase "
        "under the Add rule, baselines), each with the upstream issue and the fix, what "
        "participants can see (a meta phase whose ranking they cannot open, or whose input, "
        "the results export, anyone can download; registrations that wait for approval), its "
        "calendar: a time of day its unpacker drops from an unquoted date-time, a phase with "
        "auto_migrate_to_this_phase that starts before now (migrated at once, empty). A zip is "
        "checked as it would be uploaded: a meta_scoring_program/ placeholder that `bundle zip` "
        "did not fill is an error there (a note for a folder). Exit code 1 when there are errors "
        "(or warnings with --strict).",
    )
    p.add_argument("bundle", help="bundle folder or zip")
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    p.add_argument("--submissions", metavar="DIR", type=Path,
                   help="the submissions folder `bundle run --submissions` will use (instead of "
                   "sample_submissions/), where the baselines are looked for")
    p.add_argument("--probe", action="store_true",
                   help="try the meta-scoring program in a container of the competition's image "
                   "(a Docker-compatible engine at DOCKER_HOST; the image is pulled if needed): "
                   "an error if it cannot run there")
    _meta_python_option(p, "a meta_scoring_program/ placeholder, once `bundle zip` fills it,")
    p.set_defaults(func=_interruptible(_cmd_check))


def _run_parser(sub: argparse._SubParsersAction) -> None:
    """``metascore bundle run``: its options."""
    p = sub.add_parser(
        "run",
        help="run every phase x submission x task locally, then the meta-ranking",
        description="Run a whole competition as the Codabench v2 compute worker would: for each "
        "phase, submission and task, the prediction job (ingestion program + submission) and the "
        "scoring job, with the worker's /app layout, placeholders and time limits. Submissions: "
        "the starting kit's baseline, the bundle's solutions and sample_submissions/ (or "
        "--submissions). The finished scores the site's results export would hold (the "
        "leaderboard's submission_rule; --feed all: every submission) are collected into "
        "OUT/outputs/ and fed to the meta-scoring phase (a phase whose reference data holds "
        "metascore.yaml), as the export holds them: named <owner>-<id> with the ids the site "
        "gives them, without submission times. A submission "
        "runs in its phase (manifest column 'phase' or a DIR/<phase name>/ folder; without one: "
        "every phase that does not migrate, the first phase only for a result submission) and "
        "reaches later phases through auto_migrate_to_this_phase. Prints a summary and where "
        "the final leaderboard.csv and detailed_results.html are; a run that finished after a "
        "failed prediction step (the worker goes on to scoring) is marked 'prediction failed', "
        "listed as FLAGGED and marked on the final leaderboard (column prediction_failed; the "
        "site's meta phase cannot know it). Writes only inside --out. "
        "Exit code 1 when every run of a phase failed (any run failed or flagged with "
        "--strict) or the meta-scoring failed.",
    )
    p.add_argument("bundle", help="bundle folder or zip")
    p.add_argument("--out", "-o", default=DEFAULT_OUT, help="output folder (default: ./%(default)s)")
    p.add_argument("--backend", default=DEFAULT_BACKEND, choices=BACKENDS,
                   help="local: this machine, in a bwrap sandbox with the worker's /app layout "
                   "where bwrap runs (default); docker: containers of the bundle's image")
    p.add_argument("--image", help="docker image (default: the bundle's docker_image)")
    p.add_argument("--network", action="store_true",
                   help="let the programs use the network (off by default; the local rewrite "
                   "mode cannot block it)")
    p.add_argument("--sandbox", default=DEFAULT_SANDBOX, choices=SANDBOX_MODES,
                   help="local backend: auto (bwrap where it runs, else rewrite, but never by "
                   "itself for --submissions; default), bwrap (fail without it) or rewrite "
                   "(only /app paths on the command line are rewritten; the programs run "
                   "unisolated, as you, or, run by root with --submissions, each job as a user "
                   "of its own that reads and writes only what any user may)")
    p.add_argument("--python-env", metavar="PATH",
                   help="local backend: virtual environment (or interpreter) that runs python "
                   "and python3 (default: the one `metascore bundle env` built for the bundle's "
                   "image, else this Python)")
    p.add_argument("--setup", action="store_true",
                   help="local backend: install what a first run lacks, once: bubblewrap (the "
                   "sandbox; apt-get, as root or through sudo) and, when the programs import "
                   "modules the image carries and this Python lacks, the image's packages (as "
                   "`metascore bundle env` builds them)")
    add_limit_options(p)
    p.add_argument("--submissions", metavar="DIR",
                   help="folder of submissions, one zip or folder each, run as the participant "
                   "its name gives (alice__v2.zip: alice) or an optional submissions.yaml or .csv "
                   "manifest says (file, participant, submitted_at, is_baseline, phase, "
                   "on_leaderboard), in every phase or, in a sub-folder named after a phase, in that "
                   "one; replaces the bundle's sample_submissions/. Needed without those (a zipped "
                   "bundle carries none): only the starting kit would run, as 'baseline'. Sample "
                   "zips beside the bundle are not read")
    p.add_argument("--scoring-program", metavar="DIR",
                   help="meta-scoring program used to fill meta_scoring_program/ (default: the "
                   "repository's scoring_program/)")
    _meta_python_option(p, "the meta-scoring program filled into meta_scoring_program/")
    p.add_argument("--jobs", "-j", type=int, default=None,
                   help=f"jobs run at the same time (default: the number of CPUs, at most {JOBS_CAP})")
    p.add_argument("--feed", choices=FEEDS, default=DEFAULT_FEED,
                   help="what reaches the meta phase: export (default) = what the site's results "
                   "export would hold under the leaderboard's submission_rule (Force_Last: each "
                   "participant's last finished submission; Force_Best: the best; "
                   "Force_Latest_Multiple: all finished; Add: those marked on_leaderboard in the "
                   "submissions manifest); all = every submission that ran")
    p.add_argument("--data", action="append", default=[], metavar="KEY=PATH", type=_data_item,
                   help="a zip or folder for a Codabench dataset key the bundle uses instead of "
                   "a file (input_data, reference_data, a program); repeatable")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 when any run failed or finished after a failed prediction step "
                   "(default: when every run of a phase failed)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    p.set_defaults(func=_cmd_run)


def _env_parser(sub: argparse._SubParsersAction) -> None:
    """``metascore bundle env``: its options."""
    p = sub.add_parser(
        "env",
        help="build the Python packages of the bundle's docker_image for the local backend",
        description="Build (once) a virtual environment with the Python packages of the "
        "bundle's docker_image (package lists ship for codalab/codalab-legacy:py37, :py39 and "
        ":py312; --requirements FILE for any other image or extra packages). `bundle run` with "
        "the local backend then uses it. The environments (several hundred MB each) live in "
        "envs/ of metascore's cache: $METASCORE_CACHE, else $XDG_CACHE_HOME/metascore, else "
        "~/.cache/metascore; set the variable to move it, --list shows them, --remove deletes them.",
    )
    p.add_argument("bundle", nargs="?", help="bundle folder or zip (not with --list or --remove)")
    p.add_argument("--list", action="store_true",
                   help="list the environments built in the cache: image, size, folder")
    p.add_argument("--remove", metavar="IMAGE",
                   help="delete the environment built for IMAGE ('all': every environment)")
    p.add_argument("--requirements", "-r", metavar="FILE",
                   help="pip requirements file to install instead of the image's package list")
    p.add_argument("--image", help="image to build for (default: the bundle's docker_image)")
    p.add_argument("--system-site-packages", action="store_true",
                   help="let the environment see the packages of the Python running metascore "
                   "(those of its virtual environment too, when it runs in one; faster, less faithful)")
    p.set_defaults(func=_interruptible(cmd_env), parser=p)


def _zip_parser(sub: argparse._SubParsersAction) -> None:
    """``metascore bundle zip``: its options."""
    p = sub.add_parser(
        "zip",
        help="zip a bundle folder for upload to Codabench",
        description="Zip a bundle folder: competition.yaml at the zip root, every folder it "
        "references (programs, data, starting kits) zipped on its own with its files at the "
        "root, and meta_scoring_program/ filled with metascore's meta-scoring program and a "
        "vendored copy of the metascore package, with its own Python (built once, see `bundle "
        "runtime`) unless the competition's image is known to have what it needs "
        "(--meta-python), so it runs in that image whatever Python it has. The zip is then "
        "checked as `bundle check` would check it, and its warnings printed (e.g. a phase "
        "that auto-migrates and starts before now: Codabench migrates it at once, empty). A "
        "link that leaves the bundle is refused before anything is read; a link inside it is "
        "stored as the file or folder it names (Codabench's unpacker makes no links); a file "
        "whose data is shared with a file outside the bundle (a hard link) is refused unless "
        "--allow-hardlinks. The zip is writable by you alone (rw-r--r-- at most), whatever "
        "the umask.",
    )
    p.add_argument("bundle", help="bundle folder")
    p.add_argument("--output", "-o", default="bundle.zip", help="zip to write (default: bundle.zip)")
    p.add_argument("--scoring-program", metavar="DIR",
                   help="meta-scoring program folder (default: the repository's scoring_program/)")
    p.add_argument("--start", metavar="DATE",
                   help="move every phase date in the zip by the same number of days so that the "
                   "first phase starts on DATE (YYYY-MM-DD, or 'today' in UTC); phase lengths and "
                   "gaps are kept, the folder is not changed. The end given to `bundle add-meta "
                   "--end` and the Final ranking phase's start, the day after, stay where they were "
                   "put (a shift that would move a phase past that end is refused)")
    p.add_argument("--allow-hardlinks", action="store_true",
                   help="pack the files whose data is shared with a file outside the bundle (hard "
                   "links: their link count is above the names the bundle has for them), which are "
                   "refused by default: a hard link gives a bundle any file its maker could read, "
                   "a 0600 file of yours too; `bundle check` names them")
    _meta_python_option(p, "the meta-scoring program filled into the zip")
    p.add_argument("--compression", choices=COMPRESSIONS, default="lzma",
                   help="how the members of the meta-scoring program's own Python are compressed: "
                   "lzma (default; Python's zipfile, which Codabench extracts with, reads them; "
                   "Info-ZIP unzip 6.0 skips them, exit code 81) or deflate (any unzip; a larger zip)")
    p.set_defaults(func=_interruptible(_cmd_zip))


def _runtime_parser(sub: argparse._SubParsersAction) -> None:
    """``metascore bundle runtime``: its options."""
    p = sub.add_parser(
        "runtime",
        help="build, list or remove the meta-scoring program's own Python (cached), or pack it as a wheel",
        description="The meta-scoring program carries its own Python (CPython 3.13 with numpy, "
        "scipy, pandas and pyyaml, built with zig cc for glibc 2.17 from Debian's source "
        "tarballs and PyPI's manylinux2014 wheels, what the program never loads left out), so "
        "the meta phase runs in any Linux x86_64 image with glibc >= 2.17. `bundle zip`, "
        "`bundle run` and `bundle add-meta` take it from the installed wheel (pip install "
        "'metascore[runtime]') when it is this release's, else from the cache "
        "($METASCORE_RUNTIME_CACHE, else ~/.cache/metascore/runtime), else build it there once "
        "(a few minutes; Linux x86_64, make, the network: the Debian archive of this machine's "
        "apt configuration, or $METASCORE_DEBIAN_MIRROR, and PyPI).",
    )
    p.add_argument("action", choices=("build", "list", "remove"),
                   help="build: build it unless the cache has it (--rebuild: again; --wheel DIR: "
                   "also pack it as the metascore-runtime wheel into DIR); list: the installed "
                   "wheel's and the cache's, with where each comes from; remove: the outdated "
                   "builds in the cache (--all: everything)")
    p.add_argument("--rebuild", action="store_true", help="build: build again even if cached")
    p.add_argument("--wheel", metavar="DIR",
                   help="build: write the platform wheel (metascore_runtime-VERSION-py3-none-"
                   "manylinux_2_17_x86_64.manylinux2014_x86_64.whl) into DIR")
    p.add_argument("--all", action="store_true",
                   help="remove: also the current build and the downloaded sources")
    p.set_defaults(func=cmd_runtime, parser=p)


#: The signals that stop a command as Ctrl-C does (SIGINT), its temporary files removed.
_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _interruptible(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``command`` with SIGTERM and SIGHUP raising :class:`KeyboardInterrupt` as SIGINT does:
    Python's default ends the process at once, leaving its temporary folders (a zip's
    extraction, the stage of a zip) in ``$TMPDIR``; this way every ``with`` block removes its
    own on the way out (exit code 130). A second signal while they are removed is ignored."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        if threading.current_thread() is not threading.main_thread():  # signals need the main thread
            return command(args)

        def stop(signum: int, _frame: object) -> None:
            for sig in _STOP_SIGNALS:
                signal.signal(sig, signal.SIG_IGN)
            raise KeyboardInterrupt(signal.Signals(signum).name)

        before = {sig: signal.signal(sig, stop) for sig in _STOP_SIGNALS}
        try:
            return command(args)
        finally:
            for sig, handler in before.items():
                signal.signal(sig, handler)

    return run


def _meta_python_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--meta-python", choices=META_PYTHONS, default=None,
                   help=f"how {what} runs: bundled = with its own Python, in any Linux x86_64 "
                   "image with glibc >= 2.17 (about 73 MB more in the bundle; built once, several "
                   "minutes); image = with the image's python3 (>= 3.10 with numpy, scipy, "
                   f"pandas, pyyaml, as {RECOMMENDED_IMAGE} has); auto (default; "
                   "$METASCORE_META_PYTHON sets another) = image for an image known to have them, "
                   "else bundled, and on the local backend this machine's Python")


def _names(text: str) -> tuple[str, ...]:
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise argparse.ArgumentTypeError(f"expected one or more comma-separated names, got {text!r}")
    return names


def _is_path(text: str) -> bool:
    """A ``--baseline`` that names a file or folder (or looks like a path), not an account."""
    return Path(text).exists() or "/" in text or text.lower().endswith(".zip")


def _data_item(text: str) -> tuple[str, str]:
    key, sep, path = text.partition("=")
    if not sep or not key.strip() or not path.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=PATH (a dataset key and a zip or folder), got {text!r}")
    return key.strip(), path.strip()


def _cmd_check(args: argparse.Namespace) -> int:
    path = Path(args.bundle)
    if path.is_file() and not zipfile.is_zipfile(path):
        raise InputError(f"{path}: not a bundle folder or zip file.")
    if not path.exists():
        raise InputError(f"{path}: no such bundle folder or zip file.")
    if args.submissions is not None and not args.submissions.is_dir():
        raise InputError(f"--submissions {args.submissions}: not a folder of submissions.")
    report = _check_path(path, args.submissions, probe=args.probe, meta_python=args.meta_python)
    comp = report.competition
    if comp is not None:
        print(f"{path}: v{comp.version} bundle {comp.title!r}, image {comp.docker_image}")
        for phase in comp.phases:
            names = ", ".join(comp.tasks[i].name for i in phase.tasks)
            print(f"  phase {phase.name!r} ({phase.execution_time_limit} s): {names}")
        if comp.leaderboard is not None:
            cols = ", ".join(f"{c.key} ({c.sorting})" for c in comp.leaderboard.columns)
            print(f"  leaderboard {comp.leaderboard.title!r}: {cols}")
    for kind, texts in (("error", report.errors), ("warning", report.warnings), ("note", report.notes)):
        for text in texts:  # a proposed `metascore bundle add-meta BUNDLE ...` names this bundle
            print(f"{kind}: {name_bundle(text, path)}")
    failed = bool(report.errors) or (args.strict and bool(report.warnings))
    print(f"{len(report.errors)} error(s), {len(report.warnings)} warning(s): "
          + ("not ready to upload." if failed else "OK."))
    return 1 if failed else 0


def _check_path(path: Path, submissions: Path | None = None, *, probe: bool = False,
                meta_python: str | None = None):
    """The full check of a bundle folder, or of a zip as it would be uploaded (the
    meta-scoring program's placeholder is then an error, not a note); ``probe``: the meta
    program tried in the image too (:func:`_image_lines`)."""
    from ..bundle.archive import extract_bundle
    from ..bundle.check.full import check_bundle

    with tempfile.TemporaryDirectory(prefix="metascore-check-") as tmp:
        root = path
        if not path.is_dir():
            extract_bundle(path, tmp)
            root = Path(tmp)
        report = check_bundle(root, meta_program_available=path.is_dir(), submissions=submissions,
                              meta_python=meta_python, given=path)
        if report.competition is not None and not report.errors:
            errors, notes = _image_lines(report.competition, probe, meta_python)
            report.errors.extend(errors)
            report.notes.extend(notes)
        return report


def _image_lines(comp, probe: bool, meta_python: str | None) -> tuple[list[str], list[str]]:
    """``(errors, notes)`` about the meta phase in the competition's image: what is known
    without running it, or, with ``probe``, what a container of the image says."""
    from ..bundle.check.meta_config import find_meta_configs
    from ..bundle.check.image_checks import meta_image_note, meta_python_for, meta_tasks

    tasks = meta_tasks(comp, find_meta_configs(comp))
    if not tasks:
        return [], []
    if not probe:
        return [], [meta_image_note(comp, tasks, meta_python)]
    from ..bundle.archive import as_folder
    from ..bundle.worker.docker_backend import DockerBackend
    from ..bundle.worker.image_probe import probe_image
    from ..bundle.meta.program_folder import assemble_meta_program
    from ..bundle.platform.meta_program import needs_meta_program

    backend = DockerBackend()
    errors, notes = [], []
    with tempfile.TemporaryDirectory(prefix="metascore-probe-") as tmp:
        for i, task in enumerate(tasks):
            program = comp.path(task.scoring_program)
            folder = Path(tmp) / str(i)
            if needs_meta_program(program):
                program = assemble_meta_program(folder, python=meta_python_for(comp, task, meta_python),
                                                log=lambda line: print(line, flush=True))
            else:
                program = as_folder(program, folder)
            found = probe_image(backend, comp.docker_image, program)
            (notes if found.ok else errors).append(f"task {task.name!r}: {found.line()}")
    return errors, notes


def _cmd_add_meta(args: argparse.Namespace) -> int:
    from ..bundle.meta.add import add_meta
    from ..bundle.meta.choices import MetaChoices

    given = [Path(b) for b in args.baseline or () if _is_path(b)]
    names = [b for b in args.baseline or () if not _is_path(b)]
    choices = MetaChoices(
        method=args.method, baselines=tuple(names) if names else None, baseline_files=tuple(given),
        judges=args.judges, exclude=tuple(args.exclude), filter=args.filter, phases=args.phases,
        submissions=args.submissions, eye_icons=args.eye_icons,
    )
    result = add_meta(args.bundle, args.output, choices=choices, force=args.force, end=args.end,
                      submission_rule=args.submission_rule, image=args.image,
                      meta_python=args.meta_python)
    print("\n".join(result.lines()))
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from ..bundle.worker.logs import printable
    from ..bundle.runner import format_report, run_bundle

    # names and job output reach the terminal written out: no escape sequence drives it
    log = (lambda _: None) if args.quiet else (lambda line: print(printable(line), flush=True))
    report = run_bundle(
        args.bundle, args.out, backend=args.backend, image=args.image,
        submissions=args.submissions, scoring_program=args.scoring_program,
        network=args.network, jobs=args.jobs, feed=args.feed, data=dict(args.data), log=log,
        sandbox=args.sandbox, python_env=args.python_env, limits=limits_from_args(args),
        meta_python=args.meta_python, setup=args.setup,
    )
    print()
    print(printable(format_report(report)))
    if report.meta is not None and not report.meta.finished:
        print(f"metascore: error: the meta-scoring phase failed: {printable(report.meta.status_details)}",
              file=sys.stderr)
        return 1
    if not report.results:
        print("metascore: error: nothing was run.", file=sys.stderr)
        return 1
    failed = report.failed_phases()
    if failed:
        print(f"metascore: error: every run of phase(s) {printable(', '.join(map(repr, failed)))} failed.",
              file=sys.stderr)
        return 1
    if args.strict and not all(r.finished and not r.flagged for r in report.results):
        n, flagged = sum(not r.finished for r in report.results), sum(r.flagged for r in report.results)
        print(f"metascore: error: {n} of {len(report.results)} runs failed"
              + (f", {flagged} finished after a failed prediction step" if flagged else "")
              + " (--strict).", file=sys.stderr)
        return 1
    return 0


def _cmd_zip(args: argparse.Namespace) -> int:
    from ..bundle.bundle_zip import build_bundle_zip
    from ..bundle.check.full import check_bundle
    from ..bundle.schema.phase_dates import parse_start

    start = parse_start(args.start) if args.start is not None else None
    bundled = False
    if Path(args.bundle).is_dir():  # the full check (metascore.yaml too) before zipping
        report = check_bundle(Path(args.bundle), meta_python=args.meta_python)
        if report.errors:
            raise ConfigError(
                f"{args.bundle}: {report.errors[0]} ({len(report.errors)} error(s); "
                f"run `metascore bundle check {args.bundle}`); no zip written."
            )
        bundled = report.competition is not None and _carries_runtime(report.competition, args.meta_python)
        notice = first_build_notice() if bundled else None
        if notice:  # before the build starts: what it costs, and the ways out
            print(f"note: {notice}", flush=True)
    dest = build_bundle_zip(args.bundle, args.output, scoring_program=args.scoring_program,
                            start=start, log=lambda line: print(line, flush=True),
                            meta_python=args.meta_python, allow_hardlinks=args.allow_hardlinks,
                            compression=args.compression)
    try:
        report = _check_path(dest)  # what is uploaded: the dates as moved, the programs as filled
    except BaseException:  # interrupted: no zip that was not checked
        dest.unlink()
        raise
    if report.errors:
        dest.unlink()
        raise ConfigError(f"{dest}: {report.errors[0]} ({len(report.errors)} error(s) in the "
                          "zip); no zip written.")
    for warning in report.warnings:
        print(f"warning: {warning}")
    print(f"wrote {dest}, {dest.stat().st_size / 1e6:.1f} MB (upload it on Codabench: "
          "Benchmarks > Management > Upload)"
          + (f"; {len(report.warnings)} warning(s) above" if report.warnings else ""))
    if bundled and args.compression == "lzma":
        print("note: the meta-scoring program's own Python is LZMA-compressed in its program zip: "
              "Codabench (Python's zipfile) reads it; to unzip it by hand use `python3 -m zipfile -e "
              "FILE.zip DIR`, 7-Zip or bsdtar (Info-ZIP unzip 6.0 skips those members: exit code 81, "
              "the program without its Python), or zip with --compression deflate.")
    return 0


def _carries_runtime(comp, meta_python: str | None) -> bool:
    """Whether the zip of ``comp`` will carry the meta-scoring program's own Python: a
    placeholder to fill, run ``bundled`` in its image."""
    from ..bundle.platform.meta_program import meta_python_in, needs_meta_program

    return any(needs_meta_program(path) for t in comp.tasks.values()
               if (path := comp.path(t.scoring_program)) is not None) and \
        meta_python_in(comp.docker_image, meta_python) == "bundled"
