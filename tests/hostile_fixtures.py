"""The submissions that try to cost the rest of a run its scores (issue 32), as a bundle.

:func:`hostile_bundle` copies ``tests/data/bundles/hostile`` (without its other hostile
sets) and fills its ``sample_submissions/`` with two good submissions and :data:`HOSTILE`:
the folders of ``tests/data/bundles/hostile/run_breakers`` and those made here because they
are large, binary or need a name a file in git should not have (zips, a 20,000-level
``metadata``, a link leaving the bundle, names that are spreadsheet formulas or terminal
escape sequences, links to the organizer's 0600 file, participants named in Markdown and
HTML). :data:`EXPECTED` says what each must
end as: ``Failed`` with a status holding a given text, or ``Finished`` with its score. The
scoring program of the bundle passes a submission's own ``scores.json`` / ``scores.txt``
through (as result competitions do), so the score files reach the runner as the participant
wrote them.

The bundles of issue 42 (:func:`linked_bundle`, :func:`meta_links_bundle`,
:data:`LINKS_OUT`) hold links that lead out of them, and that of issue 49
(:func:`hard_linked_bundle`) a hard link to the organizer's 0600 file, for
``tests/worker/test_hostile_bundle.py``.
"""

from __future__ import annotations

import shutil
import stat
import zipfile
from pathlib import Path

import yaml

HOSTILE_BUNDLE = Path(__file__).parent / "data" / "bundles" / "hostile"
BREAKERS = HOSTILE_BUNDLE / "run_breakers"
GOOD = HOSTILE_BUNDLE / "sample_submissions" / "good"

#: Spreadsheet formulas as participant names (item 14), each a good submission.
FORMULAS = {'=HYPERLINK("evil","x")': "0.4", "@SUM(1+1)": "0.3", "+1+cmd|' -C calc'!A0": "0.2",
            "-2+3": "0.1"}
#: A name that sets the terminal's title (item 15); its job prints more escapes and fails.
TERMINAL_NAME = "terminal\x1b]0;pwned\x07name"
#: Participant names that are Markdown, HTML or what Codabench's page renderer reads before
#: Markdown (issue 49, item 3): a live link, a remote image, a backslash that would merge
#: table cells, a code span, an HTML tag, emphasis, a list, a heading, a line break, a
#: formula, a placeholder of its code and formula passes, a bare URL, entities. Each is a
#: good submission's participant (``markup_<i>`` in a manifest); the first scores best.
MARKUP = ("[click me](javascript:alert(document.cookie))", "![x](http://host/track.png)", "a\\",
          "`code`", "<img src=x onerror=alert(1)>", "*b*", "__u__", "1. x", "# h", "two\nlines",
          "$\\href{javascript:alert(1)}{x}$", "%%LATEX_BLOCK_0%%", "http://evil.example/x",
          "&lt;b&gt; & <!-- c")
#: ``markup_<i>`` -> (participant, score)
MARKUP_SUBMISSIONS = {f"markup_{i}": (name, "0.95" if i == 0 else f"{0.65 - i / 100:.2f}")
                      for i, name in enumerate(MARKUP)}

#: Each hostile submission's outcome: ("Failed", text its status details hold) or
#: ("Finished", its score).
EXPECTED: dict[str, tuple[str, str | float]] = {
    # 1. metadata that is not YAML the worker could read
    "bad_yaml": ("Failed", "not valid YAML"),
    "python_tag": ("Failed", "not valid YAML"),
    "deep_yaml": ("Failed", "nested more than"),
    # 2. zips
    "bad_name": ("Failed", "not valid UTF-8"),
    "deep_zip": ("Failed", "folders deep"),
    # 3-4. outputs
    "deep_output": ("Failed", "folders deep"),
    "inode_flood": ("Failed", "File limit exceeded"),
    # 5. score files
    "json_deep": ("Failed", "nested"),
    "json_bigint": ("Failed", "too large"),
    "json_400": ("Failed", "too large"),
    "txt_400": ("Failed", "too large"),
    # 6-8. what the runner would write or hold for the job
    "sparse_links": ("Finished", 0.5),
    "zip_bomb": ("Failed", "--disk-limit"),
    "unlinked_tmp": ("Failed", "Disk limit exceeded"),
    # 9-10. YAML aliases, many keys
    "yaml_bomb": ("Failed", "alias"),
    "txt_bomb": ("Failed", "alias"),
    "many_keys": ("Failed", "larger than"),
    # 11-12. memory outside the address space, namespaces, keys
    "memfd": ("Failed", "Memory limit exceeded"),
    "sysv_shm": ("Failed", "Memory limit exceeded"),
    "userns": ("Failed", "program_rc=1"),
    "keyring": ("Failed", "program_rc=1"),
    # 13. a sample submission that is a link out of the bundle
    "outside_link": ("Failed", "outside the bundle"),
    # issue 42 item 2: a submission of the bundle holding a link to the organizer's 0600
    # file, and a zipped one holding a link member
    "inner_link": ("Failed", "outside the bundle"),
    "link_member": ("Failed", "symbolic link"),
    # 14-15. names and output for spreadsheets and terminals
    **{name: ("Finished", float(value)) for name, value in FORMULAS.items()},
    TERMINAL_NAME: ("Failed", "program_rc=1"),
    # issue 49, 3: participants named in Markdown and HTML
    **{name: ("Finished", float(value)) for name, (_, value) in MARKUP_SUBMISSIONS.items()},
    # issue 42, 1: a set-user-ID shell, a set-group-ID folder, a device node, a file capability
    "setuid": ("Finished", 0.5),
    # issue 42, 4: reading /etc/shadow, writing beside --out, leaving its session and control
    # groups, killing its supervisor, a process meant to outlive the run
    "root_job": ("Finished", 0.5),
    # issue 42, 5: 300 MB in /tmp, on the Docker backend the container's own layer
    "layer_fill": ("Failed", "Disk limit exceeded"),
    # issue 49, 5: a 0777 folder and a 0666 scores.json, a 2777 folder (left writable by their
    # owner alone), a sparse file of 1 TiB (more than --disk-limit claims, on every backend)
    "world_writable": ("Finished", 0.5),
    "setgid_open": ("Finished", 0.5),
    "sparse_tib": ("Failed", "Disk limit exceeded"),
}
#: The note a hostile submission that finishes must get (text it holds).
NOTED = {"setuid": "with a set-id bit", "setgid_open": "with a set-id bit"}
#: The hostile submissions run as ``--submissions`` in the local rewrite mode as root (issue
#: 42, 4: each job a user of its own, contained by its control group).
REWRITE = ["root_job", "setuid", "memfd", "unlinked_tmp", "world_writable", "setgid_open", "sparse_tib"]
#: The marker in the command line of the process ``root_job`` means to outlive the run.
SURVIVOR = "metascore-hostile-survivor"
#: The submissions that must score as in a run without the hostile ones.
GOOD_SCORES = {"good": 0.9, "good_too": 0.7}


def hostile_bundle(work: Path, names: list[str] | None = None) -> Path:
    """The hostile bundle in ``work/bundle`` with the good submissions and ``names`` of
    :data:`EXPECTED` (all by default; ``[]``: only the good ones) as sample submissions.
    ``work/outside`` holds the folder the ``outside_link`` submission leads to."""
    bundle = work / "bundle"
    shutil.copytree(HOSTILE_BUNDLE, bundle,
                    ignore=shutil.ignore_patterns("escapes", "run_breakers", "sample_submissions"))
    subs = bundle / "sample_submissions"
    subs.mkdir()
    _good(subs / "good", "0.9")
    _good(subs / "good_too", "0.7")
    for name in EXPECTED if names is None else names:
        make(name, subs, work)
    return bundle


def make(name: str, subs: Path, work: Path) -> None:
    """Put the hostile submission ``name`` into the folder ``subs``."""
    if (BREAKERS / name).is_dir():
        shutil.copytree(BREAKERS / name, subs / name)
    elif name in FORMULAS:
        _good(subs / name, FORMULAS[name])
    elif name == TERMINAL_NAME:
        shutil.copytree(BREAKERS / "terminal", subs / name)
    elif name in MARKUP_SUBMISSIONS:  # a folder name cannot hold all of them: the manifest does
        participant, value = MARKUP_SUBMISSIONS[name]
        _good(subs / name, value)
        manifest = subs / "submissions.yaml"
        rows = yaml.safe_load(manifest.read_text()) if manifest.is_file() else []
        manifest.write_text(yaml.safe_dump([*rows, {"file": name, "participant": participant}]))
    elif name == "deep_yaml":  # 20,000 levels of nesting: a recursive parser's end
        _good(subs / name, "0.5")
        (subs / name / "metadata.yaml").write_text("command: " + "[" * 20_000 + "]" * 20_000 + "\n")
    elif name == "bad_name":  # a member name that is not UTF-8, in a zip flagged UTF-8
        _zip(subs / "bad_name.zip", {"main.py": _main("0.5"), "XX.py": b"x", **_meta()},
             patch=(b"XX.py", b"\xff\xfe.py"))
    elif name == "deep_zip":  # a member 1,500 folders deep
        _zip(subs / "deep_zip.zip", {"main.py": _main("0.5"), "d/" * 1500 + "f.txt": b"deep", **_meta()})
    elif name == "zip_bomb":  # 1 GiB of zeros in a 1 MB zip
        _zip(subs / "zip_bomb.zip", {"main.py": _main("0.5"), **_meta()}, zeros=1 << 30)
    elif name == "outside_link":  # the job would get a folder of the organizer's machine
        (subs / name).symlink_to(_outside(work))
    elif name == "inner_link":  # a good submission, but its leak.txt is the organizer's 0600 file
        _good(subs / name, "0.5")
        (subs / name / "leak.txt").symlink_to(_outside(work) / "secret.txt")
    elif name == "link_member":  # Codabench's unpacker makes a link member a text file
        _zip(subs / "link_member.zip", {"main.py": _main("0.5"), **_meta()},
             links={"leak.txt": "../../../outside/secret.txt"})
    else:
        raise KeyError(name)


#: What the organizer's 0600 file ``outside/secret.txt`` holds: it must reach no output.
SECRET_TEXT = "the organizer's secret\n"


def _outside(work: Path) -> Path:
    """``work/outside``: a good submission folder holding the organizer's 0600 ``secret.txt``,
    that links of the bundle lead to."""
    secret = work / "outside"
    if not secret.is_dir():
        _good(secret, "1.0")
        (secret / "secret.txt").write_text(SECRET_TEXT)
        (secret / "secret.txt").chmod(0o600)
    return secret


def _good(folder: Path, value: str) -> None:
    shutil.copytree(GOOD, folder)
    (folder / "main.py").write_bytes(_main(value))


def _main(value: str) -> bytes:
    return f'import sys\nopen(sys.argv[1] + "/pred.txt", "w").write("{value}")\n'.encode()


def _meta() -> dict[str, bytes]:
    return {"metadata.yaml": b"command: python3 main.py $output\n"}


def _zip(path: Path, members: dict[str, bytes], *, patch: tuple[bytes, bytes] | None = None,
         zeros: int = 0, links: dict[str, str] | None = None) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            zf.writestr(info, data)
        for name, target in (links or {}).items():  # as `zip --symlinks` stores a link
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
        if zeros:
            info = zipfile.ZipInfo("zeros.bin")
            info.compress_type = zipfile.ZIP_DEFLATED
            with zf.open(info, "w", force_zip64=True) as handle:
                chunk = bytes(1 << 24)
                for _ in range(zeros >> 24):
                    handle.write(chunk)
    if patch:  # the same length: the local header and the central directory both hold it
        path.write_bytes(_utf8_flagged(path.read_bytes().replace(*patch), patch[1]))


def _utf8_flagged(data: bytes, name: bytes) -> bytes:
    """The zip ``data`` with the flag "this name is UTF-8" (bit 11) set on the member
    ``name``, in its local header and in the central directory."""
    out = bytearray(data)
    for signature, flags, length, start in ((b"PK\x03\x04", 6, 26, 30), (b"PK\x01\x02", 8, 28, 46)):
        at = out.find(signature)
        while at >= 0:
            size = int.from_bytes(out[at + length:at + length + 2], "little")
            if out[at + start:at + start + size] == name:
                out[at + flags + 1] |= 0x08  # bit 11: bit 3 of the flags' second byte
            at = out.find(signature, at + 4)
    return bytes(out)


# ----------------------------------------------------------------------------- hostile bundles (issue 42)
#: Links that leave a bundle (item 2), made in :func:`linked_bundle`: per case, ``(path in
#: the bundle, target)`` pairs, the first one the link each command must name. ``{outside}``
#: is ``work/outside``, which holds the organizer's 0600 ``secret.txt``.
LINKS_OUT = {
    "relative file": [("ref/leak.txt", "../../outside/secret.txt")],
    "absolute file": [("scoring_program/shadow.txt", "/etc/shadow")],
    "absolute folder": [("ref/etc", "/etc")],
    "relative folder": [("scoring_program/outside", "../../outside")],
    "chain": [("ref/chain.txt", "hop.txt"), ("ref/hop.txt", "{outside}/secret.txt")],
    "item folder": [("ranking", "/etc")],
    "page": [("pages/terms.md", "{outside}/secret.txt")],
}


def linked_bundle(work: Path, links: list[tuple[str, str]]) -> Path:
    """The hostile bundle with only the good submissions (``work/bundle``), the organizer's
    0600 file in ``work/outside/secret.txt``, and ``links`` made in the bundle (a file or
    folder of the same name is replaced)."""
    bundle = hostile_bundle(work, [])
    outside = _outside(work)
    for rel, target in links:
        path = bundle / rel
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        path.symlink_to(target.format(outside=outside))
    return bundle


def meta_links_bundle(work: Path, final_ranking: str) -> Path:
    """``tests/data/bundles/add_meta_v2`` (no meta phase yet) in ``work/bundle``, where the
    folders add-meta writes are links out of it (item 3): ``final_ranking/`` to
    ``final_ranking`` (``{outside}`` is ``work/outside``), ``meta_scoring_program/`` to
    ``work/outside_program``, which holds the organizer's README.md."""
    bundle = work / "bundle"
    shutil.copytree(HOSTILE_BUNDLE.parent / "add_meta_v2", bundle)
    outside = _outside(work)
    program = work / "outside_program"
    program.mkdir()
    (program / "README.md").write_text("the organizer's own README\n")
    (bundle / "final_ranking").symlink_to(final_ranking.format(outside=outside))
    (bundle / "meta_scoring_program").symlink_to(program)
    return bundle


#: The file of :func:`hard_linked_bundle` that is a hard link to the organizer's 0600 file.
HARD_LINK = "ref/leak.txt"


def hard_linked_bundle(work: Path) -> Path:
    """The hostile bundle with only the good submissions, ready for ``bundle zip`` (a
    baseline, an image that runs the meta program as it is), whose :data:`HARD_LINK` is a
    second name of the organizer's 0600 ``work/outside/secret.txt`` (issue 49, 6), and whose
    ``ref/truth-too.txt`` is a second name of ``ref/truth.txt`` (both inside: no finding)."""
    bundle = hostile_bundle(work, [])
    with open(bundle / "ranking" / "metascore.yaml", "a") as handle:
        handle.write("baselines: [good_too]\n")
    with open(bundle / "competition.yaml", "a") as handle:
        handle.write("docker_image: codalab/codalab-legacy:py312\n")
    (bundle / HARD_LINK).hardlink_to(_outside(work) / "secret.txt")
    (bundle / "ref" / "truth-too.txt").hardlink_to(bundle / "ref" / "truth.txt")
    return bundle
