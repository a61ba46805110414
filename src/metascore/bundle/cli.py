"""``metascore bundle check | run | zip``: test a Codabench/CodaLab bundle before uploading it."""

from __future__ import annotations

import argparse
import sys
import tempfile
import zipfile
from pathlib import Path

from ..errors import InputError
from .runner import BACKENDS

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``bundle`` and its subcommands to the ``metascore`` command line."""
    bundle = subparsers.add_parser(
        "bundle",
        help="check, run locally, or zip a Codabench/CodaLab competition bundle",
        description="Work with a competition bundle (a folder or zip with competition.yaml at "
        "its root): check it, run it as Codabench's compute worker would, or zip it for upload.",
    )
    sub = bundle.add_subparsers(dest="bundle_command", metavar="SUBCOMMAND")
    sub.required = True

    p = sub.add_parser(
        "check",
        help="check competition.yaml, the files it references and the programs' metadata",
        description="Check a bundle: the v2 or v1 competition.yaml schema (errors name the key "
        "and the allowed values), the files it references, and each program's metadata. "
        "Warnings list what Codabench accepts but silently ignores or gets wrong. Exit code 1 "
        "when there are errors (or warnings with --strict).",
    )
    p.add_argument("bundle", help="bundle folder or zip")
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser(
        "run",
        help="run every phase x submission x task locally, then the meta-ranking",
        description="Run a whole competition as the Codabench v2 compute worker would: for each "
        "phase, submission and task, the prediction job (ingestion program + submission) and the "
        "scoring job, with the worker's /app layout, placeholders and time limits. Submissions: "
        "the starting kit's baseline, the bundle's solutions and sample_submissions/ (or "
        "--submissions). Finished scores are collected into OUT/outputs/ and fed to the "
        "meta-scoring phase (a phase whose reference data holds metascore.yaml). Prints a "
        "summary and where the final leaderboard.csv and detailed_results.html are. Writes "
        "only inside --out.",
    )
    p.add_argument("bundle", help="bundle folder or zip")
    p.add_argument("--out", "-o", default="runs", help="output folder (default: ./runs)")
    p.add_argument("--backend", default="local", choices=BACKENDS,
                   help="local: subprocesses with this Python (default); docker: containers")
    p.add_argument("--image", help="docker image (default: the bundle's docker_image)")
    p.add_argument("--network", action="store_true",
                   help="docker backend: allow network access (off by default)")
    p.add_argument("--submissions", metavar="DIR",
                   help="folder of submission zips/folders (optional submissions.yaml or .csv "
                   "manifest: file, participant, submitted_at, is_baseline); replaces the "
                   "bundle's sample_submissions/. Needed with a zipped bundle, which carries no "
                   "sample submissions (only the baseline would run)")
    p.add_argument("--scoring-program", metavar="DIR",
                   help="meta-scoring program used to fill meta_scoring_program/ (default: the "
                   "repository's scoring_program/)")
    p.add_argument("--jobs", "-j", type=int, default=None,
                   help="jobs run at the same time (default: the number of CPUs, at most 4)")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser(
        "zip",
        help="zip a bundle folder for upload to Codabench",
        description="Zip a bundle folder: competition.yaml at the zip root, every folder it "
        "references (programs, data, starting kits) zipped on its own with its files at the "
        "root, and meta_scoring_program/ filled with metascore's meta-scoring program and a "
        "vendored copy of the metascore package (so it runs in a stock image).",
    )
    p.add_argument("bundle", help="bundle folder")
    p.add_argument("--output", "-o", default="bundle.zip", help="zip to write (default: bundle.zip)")
    p.add_argument("--scoring-program", metavar="DIR",
                   help="meta-scoring program folder (default: the repository's scoring_program/)")
    p.set_defaults(func=_cmd_zip)


def _cmd_check(args: argparse.Namespace) -> int:
    from .archive import safe_extract
    from .schema import check_bundle

    path = Path(args.bundle)
    with tempfile.TemporaryDirectory(prefix="metascore-check-") as tmp:
        if path.is_file():
            if not zipfile.is_zipfile(path):
                raise InputError(f"{path}: not a bundle folder or zip file.")
            safe_extract(path, tmp)
            root = Path(tmp)
        elif path.is_dir():
            root = path
        else:
            raise InputError(f"{path}: no such bundle folder or zip file.")
        report = check_bundle(root)
    comp = report.competition
    if comp is not None:
        print(f"{path}: v{comp.version} bundle {comp.title!r}, image {comp.docker_image}")
        for phase in comp.phases:
            names = ", ".join(comp.tasks[i].name for i in phase.tasks)
            print(f"  phase {phase.name!r} ({phase.execution_time_limit} s): {names}")
        if comp.leaderboard is not None:
            cols = ", ".join(f"{c.key} ({c.sorting})" for c in comp.leaderboard.columns)
            print(f"  leaderboard {comp.leaderboard.title!r}: {cols}")
    for error in report.errors:
        print(f"error: {error}")
    for warning in report.warnings:
        print(f"warning: {warning}")
    failed = bool(report.errors) or (args.strict and bool(report.warnings))
    print(f"{len(report.errors)} error(s), {len(report.warnings)} warning(s): "
          + ("not ready to upload." if failed else "OK."))
    return 1 if failed else 0


def _cmd_run(args: argparse.Namespace) -> int:
    from .runner import format_report, run_bundle

    log = (lambda _: None) if args.quiet else (lambda line: print(line, flush=True))
    report = run_bundle(
        args.bundle, args.out, backend=args.backend, image=args.image,
        submissions=args.submissions, scoring_program=args.scoring_program,
        network=args.network, jobs=args.jobs, log=log,
    )
    print()
    print(format_report(report))
    if report.meta is not None and not report.meta.finished:
        print(f"metascore: error: the meta-scoring phase failed: {report.meta.status_details}",
              file=sys.stderr)
        return 1
    if not report.results:
        print("metascore: error: nothing was run.", file=sys.stderr)
        return 1
    return 0


def _cmd_zip(args: argparse.Namespace) -> int:
    from .archive import build_bundle_zip

    dest = build_bundle_zip(args.bundle, args.output, scoring_program=args.scoring_program,
                            log=lambda line: print(line))
    print(f"wrote {dest} (upload it on Codabench: Benchmarks > Management > Upload)")
    return 0
