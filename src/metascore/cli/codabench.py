"""``metascore codabench phases | pull | rank | submit | sign | publish | verify``: from a live
competition to the final ranking (``phases`` lists the phases, their ids and the leaderboard,
to choose ``--phase``; ``sign`` makes the signed zip to upload through the site's own form;
``publish`` writes the outcome on the competition's pages again; ``verify``, for anyone, checks
the published ranking against the public leaderboards).

The API token comes from ``$CODABENCH_TOKEN`` or ``--token-file``, never from the command
line, and is never printed or written.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from typing import TYPE_CHECKING

from ..codabench import MAX_ANSWER, SCORES_WAIT, TOKEN_ENV
from ..errors import ConfigError

if TYPE_CHECKING:
    from ..codabench.api import CompetitionInfo
    from ..codabench.client import Client

__all__ = ["add_codabench_commands"]

PULLED = "pulled"
# the commands import their modules when they run: `metascore` starts without `requests`


def add_codabench_commands(subparsers: argparse._SubParsersAction) -> None:
    """Add ``codabench`` and its subcommands to the ``metascore`` command line: each takes
    the site options (:func:`_common`), then its own (:data:`_COMMANDS`)."""
    top = subparsers.add_parser(
        "codabench", help="pull a live Codabench competition's results, rank them, sign, submit, publish and "
        "verify the final ranking",
        description="Connect metascore to a running Codabench competition. The API token (an "
        f"organizer's or collaborator's) comes from ${TOKEN_ENV} or --token-file.",
    )
    sub = top.add_subparsers(dest="codabench_command", metavar="COMMAND")
    sub.required = True
    for name, (short, description, options, run) in _COMMANDS.items():
        p = sub.add_parser(name, help=short, description=description)
        _common(p)
        options(p)
        p.set_defaults(func=run)


def _no_options(p: argparse.ArgumentParser) -> None:
    """``phases`` takes the site options only."""


def _pull_args(p: argparse.ArgumentParser) -> None:
    _pull_options(p)
    p.add_argument("--config", help="metascore.yaml to complete (default: phases and judges "
                   "from the competition)")
    p.add_argument("--out", required=True, help="new folder to write")


def _rank_args(p: argparse.ArgumentParser) -> None:
    _pull_options(p)
    p.add_argument("--config", required=True, help="competition config (metascore.yaml)")
    p.add_argument("--seed", type=int, help="override ranking.seed")
    p.add_argument("--out", required=True, help="new folder to write")


def _submit_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--phase", required=True, help="the phase to submit to, e.g. 'Final ranking'")
    p.add_argument("folder", metavar="DIR", help="a folder written by `metascore codabench pull`")
    _key_option(p)
    _bundle_option(p)
    p.add_argument("--dry-run", action="store_true", help="print the requests, send nothing")
    p.add_argument("--poll-interval", type=float, default=10.0, help="seconds between status "
                   "checks (default 10)")
    p.add_argument("--max-wait", type=float, default=3600.0, help="give up after this many "
                   "seconds (default 3600)")
    p.add_argument("--scores-wait", type=float, default=SCORES_WAIT, help="once Finished, wait "
                   "at most this many seconds for the scores, which the platform posts after "
                   f"it sets Finished (default {SCORES_WAIT:g})")


def _sign_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--phase", default="Final ranking", help="the meta phase the zip is for (default "
                   "'Final ranking')")
    p.add_argument("folder", metavar="DIR", help="a folder written by `metascore codabench pull`")
    _key_option(p)
    _bundle_option(p)
    p.add_argument("-o", "--output", required=True, metavar="ZIP", help="the zip to write (a new file)")


def _publish_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--phase", default="Final ranking", help="the meta phase (default 'Final ranking')")
    p.add_argument("--submission", type=int, help="the meta submission's id (default: the newest "
                   "Finished one an organizer made)")


def _verify_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--submission", type=int, help="check this meta submission's ranking page (default: "
                   "the one the 'Final ranking' page links)")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--site", required=True, help="the site, e.g. https://www.codabench.org")
    p.add_argument("--competition", required=True, type=int, help="the competition's id")
    p.add_argument("--token-file", help=f"file holding the API token (default: ${TOKEN_ENV})")
    p.add_argument("--timeout", type=float, default=30.0, help="seconds per request, from "
                   "connecting to the answer's last byte (default 30)")
    p.add_argument("--max-answer", type=int, default=MAX_ANSWER >> 20, metavar="MIB",
                   help=f"the most MiB of an answer the client reads (default {MAX_ANSWER >> 20})")
    p.add_argument("--retries", type=int, default=3, help="retries on 429, 5xx and timeouts "
                   "(default 3)")
    p.add_argument("--backoff", type=float, default=1.0, help="first wait between retries in "
                   "seconds, doubled each time (default 1)")


def _key_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--key", metavar="FILE", help="the organizer's private key that signs the export "
                   "(default: $METASCORE_ORGANIZER_KEY, else ~/.config/metascore/organizer_key: the "
                   "key `metascore bundle zip` made and put the public half of into the bundle)")


def _bundle_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bundle", metavar="ZIP", help="the bundle zip `metascore bundle zip` wrote and "
                   "you uploaded: the competition token the signature names is read from it "
                   "(default: from the meta task's reference data on the site)")


def _pull_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--phase", nargs="+", default=[], metavar="NAME", help="phases to pull "
                   "(default: the config's development and final phases, else the first two)")
    p.add_argument("--baseline", nargs="+", default=[], metavar="NAME", help="baselines: "
                   "submissions ('<owner>-<id>') or owners; flagged in submissions.csv")


def _client(args: argparse.Namespace, *, token: bool = True) -> Client:
    from ..codabench.client import Client, read_token

    if args.max_answer < 1:
        raise ConfigError(f"--max-answer must be at least 1 (MiB); got {args.max_answer}.")
    return Client(args.site, read_token(args.token_file, required=token), timeout=args.timeout,
                  max_answer=args.max_answer << 20, retries=args.retries, backoff=args.backoff,
                  log=print)


def _cmd_phases(args: argparse.Namespace) -> int:
    from ..codabench.pull import fetch_competition

    comp = fetch_competition(_client(args, token=False), args.competition)
    for line in phase_listing(comp):
        print(line)
    return 0


def phase_listing(comp: CompetitionInfo) -> list[str]:
    """The lines ``metascore codabench phases`` prints: a table of the phases, then the
    leaderboards and the phases ``pull`` reads by default."""
    phases = sorted(comp.phases, key=lambda p: p.index)
    rows = [("id", "index", "name", "start", "end", "status", "tasks")]
    rows += [(str(p.id), str(p.index), p.name, _when(p.start), _when(p.end) if p.end else "never",
              p.status or "", ", ".join(t.name for t in p.tasks) or "(none)") for p in phases]
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]) - 1)]
    lines = [f"competition {comp.id}: {comp.title!r}, {len(phases)} phase(s)"]
    lines += ["  " + "  ".join(v.ljust(w) for v, w in zip(r, widths)) + "  " + r[-1] for r in rows]
    for board in comp.leaderboards:
        cols = ", ".join(f"{c.key} ({c.title}, {c.sorting}"
                         + (", hidden" if c.hidden else "")
                         + (f", computed {c.computation}" if c.computation else "") + ")"
                         for c in board.columns)
        rule = f", submission rule {board.submission_rule}" if board.submission_rule else ""
        lines.append(f"leaderboard {board.title!r}{rule}: {cols or 'no columns'}")
    if not comp.leaderboards:
        lines.append("no leaderboard is visible to this token (a hidden leaderboard needs an "
                     "organizer's token)")
    first = [p.name for p in phases[:2]]
    lines.append(f"`pull` and `rank` read phases.development and phases.final of --config, else "
                 f"the first two phases {first}; --phase NAME ... chooses others.")
    return lines


def _when(text: str | None) -> str:
    """An ISO 8601 time as ``YYYY-MM-DD HH:MM`` (as sent when it does not parse)."""
    if not text:
        return ""
    import datetime as dt

    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return text


def _cmd_pull(args: argparse.Namespace) -> int:
    from ..config import load_config
    from ..codabench.pull import new_directory, pull, write
    from ..config import CONFIG_NAME

    config = load_config(args.config) if args.config else None
    client = _client(args)
    pulled = pull(client, args.competition, phases=args.phase, baselines=args.baseline, config=config)
    with new_directory(args.out) as stage:
        write(pulled.files, stage)
    out = Path(args.out)
    print(f"[*] wrote {len(pulled.files)} files to {out}")
    print("next: rank locally with\n"
          f"  metascore rank --config {out / CONFIG_NAME} --input {out} --output {out / 'ranking'}\n"
          "or submit it to the meta phase with\n"
          f"  metascore codabench submit --site {client.site} --competition {args.competition} "
          f"--phase 'Final ranking' {out}")
    return 0


def _cmd_rank(args: argparse.Namespace) -> int:
    from ..config import load_config
    from ..program import run
    from ..codabench.pull import new_directory, pull, write

    config = load_config(args.config)
    if args.seed is not None:
        config = dataclasses.replace(config, ranking=dataclasses.replace(config.ranking, seed=args.seed))
    pulled = pull(_client(args), args.competition, phases=args.phase, baselines=args.baseline,
                  config=config)
    out = Path(args.out)
    with new_directory(args.out) as stage:
        write(pulled.files, stage / PULLED)
        run(pulled.config, stage / PULLED, stage,
            log=lambda line: print(line.replace(str(stage), str(out))))
    print(f"[*] final leaderboard: {out / 'leaderboard.csv'}")
    print(f"[*] detailed results: {out / 'detailed_results.html'}")
    print(f"[*] pulled scores: {out / PULLED}")
    return 0


def _cmd_submit(args: argparse.Namespace) -> int:
    from ..codabench.submit import submit
    from ..signature import organizer_key

    client = _client(args, token=not args.dry_run)
    key = organizer_key(args.key, create=False) if args.key else None
    submit(client, args.competition, args.phase, Path(args.folder), dry_run=args.dry_run, key=key,
           bundle=Path(args.bundle) if args.bundle else None, poll_interval=args.poll_interval, max_wait=args.max_wait, scores_wait=args.scores_wait)
    return 0


def _cmd_sign(args: argparse.Namespace) -> int:
    from ..atomic import write_bytes
    from ..codabench.pull import fetch_competition, find_phase
    from ..codabench.signing import binding_for, bundle_tokens, signed_zip, site_tokens
    from ..errors import ConfigError
    from ..signature import organizer_key

    out = Path(args.output)
    if out.exists() or out.is_symlink():
        raise ConfigError(f"{out} exists already; give a new file to write.")
    key = organizer_key(args.key, create=False)
    client = _client(args)
    comp = fetch_competition(client, args.competition)
    phase = find_phase(comp, args.phase)
    tokens = bundle_tokens(Path(args.bundle)) if args.bundle else site_tokens(client, phase)
    binding = binding_for(client.site, comp, phase, Path(args.folder), tokens)
    write_bytes(out, signed_zip(Path(args.folder), key, binding))  # the whole zip or nothing
    print(f"[*] {out}: {args.folder} signed with the organizer key {key.fingerprint} ({key.path}) for "
          f"{binding.describe()}, pulled at {binding.pulled_at}; upload it to that phase through the "
          "site's submission form, then run `metascore codabench publish` once it has finished")
    return 0


def _cmd_publish(args: argparse.Namespace) -> int:
    from ..codabench.publish import publish
    from ..codabench.pull import fetch_competition, find_phase

    client = _client(args)
    comp = fetch_competition(client, args.competition)
    publish(client, comp, find_phase(comp, args.phase), args.submission)
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from ..codabench.verify import SOURCE, verify_site
    from ..verify.compare import verdict_lines

    checked = verify_site(_client(args, token=False), args.competition, args.submission)
    for note in checked.notes:
        print(f"[*] {note}")
    for line in verdict_lines(checked.record, checked.differences, SOURCE, cannot=checked.cannot):
        print(line)
    return 1 if checked.differences or checked.cannot else 0


#: Each subcommand: its help line, its description, its own options, and what runs it.
_COMMANDS = {
    "phases": (
        "list the competition's phases (ids, dates, tasks) and leaderboard columns",
        "Read the competition and print each phase (id, index, name, dates, status, "
        "tasks), the leaderboards' columns and submission rule, and which phases `pull` and "
        f"`rank` read without --phase. The token (${TOKEN_ENV} or --token-file) is optional: "
        "a public competition answers without one; hidden leaderboards need an organizer's.",
        _no_options, _cmd_phases),
    "pull": (
        "download the phases' results into a folder metascore reads",
        "Read the competition's phases, tasks and leaderboard columns, download each "
        "phase's results export, and write a scoring-output tree (<phase>/<owner>-<id>/<task>/"
        "scores.json), submissions.csv, metascore.yaml (judges and directions from the columns' "
        "sorting when --config lists none) and codabench.json (provenance).",
        _pull_args, _cmd_pull),
    "rank": (
        "pull, then rank with a configuration: leaderboard.csv and detailed results",
        "Pull the configuration's phases into OUT/pulled, then run the configured "
        "ranking, baseline filter and writers: OUT/leaderboard.csv, leaderboard.json, "
        "detailed_results.html, scores.json, scores.txt.",
        _rank_args, _cmd_rank),
    "submit": (
        "sign pulled results, submit them to the meta phase, wait, publish the outcome",
        "Zip a pulled folder, sign it with the organizer's key (the meta-scoring "
        "program ranks only an export signed with the key `bundle zip` put into it, so a "
        "participant's upload to the meta phase fails), submit it to a phase (the meta phase, "
        "e.g. 'Final ranking') through the API, poll until Finished or Failed, print the scores "
        "and where the detailed results are, then publish the outcome as `publish` does: the "
        "'Final ranking' page opens with the winner, the top of the board and the link to the "
        "whole ranking, and the meta task's name on the Results tab names the winner.",
        _submit_args, _cmd_submit),
    "sign": (
        "sign pulled results into a zip to upload through the site's own form",
        "Zip a pulled folder and sign it with the organizer's key for the competition's "
        "meta phase, as `submit` does, but upload nothing: upload the zip to the meta phase through "
        "Codabench's own submission form, then run `publish` once it has finished. The signature "
        "names the meta phase's competition token (read from its reference data on the site, or "
        "from --bundle) and when the folder was pulled; the meta-scoring program refuses an export "
        "signed for another competition or phase, or pulled before the phases closed.",
        _sign_args, _cmd_sign),
    "publish": (
        "write the meta phase's outcome on the 'Final ranking' page and the Results tab",
        "Read the final board the meta-scoring program wrote on the site (the "
        "submission's scoring output), then, as the organizer: put the winner, the top of the "
        "board, the numbers ranked and not ranked, the rule and the link to the whole ranking "
        "at the top of the competition's 'Final ranking' page (added if missing), and name the "
        "winner in the meta task's name, which the Results tab shows above the meta phase's "
        "row. Only an organizer's submission (the competition's creator or a collaborator) "
        "signed for this competition's meta phase is published. `submit` does this once the "
        "submission finishes; run it again after a page edit or another submission.",
        _publish_args, _cmd_publish),
    "verify": (
        "check the published final ranking from the public leaderboards (no token needed)",
        "For participants and anyone: read what the site shows everyone (the 'Final "
        "ranking' page, the ranking page it links and each ranked phase's public leaderboard), "
        "recompute the final ranking with the configuration the ranking page publishes, and say in "
        "one line whether it is the published one; otherwise list each row that differs and why "
        "(a submission no longer on a leaderboard, a score changed since, a column not public). "
        f"Exit 0 only on a match. No token is needed (${TOKEN_ENV} or --token-file: a participant's, "
        "for a competition that is not published).",
        _verify_args, _cmd_verify),
}
