"""Every entry point (CLI, scoring and ingestion programs) maps errors to exit codes alike."""

from __future__ import annotations

import pytest

from metascore import cli, program
from metascore.cli import rank as rank_commands
from metascore.errors import InputError


def _entry_points(tmp_path, monkeypatch, exc):
    def boom(*args, **kwargs):
        raise exc

    monkeypatch.setattr(program, "load_config", boom)
    monkeypatch.setattr(program, "load_scores", boom)
    monkeypatch.setattr(rank_commands, "rank", boom)
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / program.CONFIG_NAME).write_text("{}\n")
    (tmp_path / "s.csv").write_text("candidate,acc\nA,1\nB,2\n")
    return {
        "cli": lambda: cli.main(["rank", str(tmp_path / "s.csv")]),
        "score": lambda: program.score_main(tmp_path, tmp_path / "out"),
        "ingest": lambda: program.ingest_main(tmp_path, tmp_path / "o", tmp_path, tmp_path / "s.csv"),
    }


@pytest.mark.parametrize(("exc", "code", "first_line"), [
    (InputError("bad scores."), 1, "metascore: error: bad scores."),
    (OSError("disk full"), 1, "metascore: error: disk full"),
    (KeyboardInterrupt(), 130, "metascore: interrupted"),
    (RuntimeError("oops"), 1, "metascore: internal error: RuntimeError: oops"),
])
@pytest.mark.parametrize("entry", ["cli", "score", "ingest"])
def test_every_entry_point_maps_an_error_to_the_same_exit_code_and_message(
    tmp_path, monkeypatch, capsys, exc, code, first_line, entry
):
    run = _entry_points(tmp_path, monkeypatch, exc)[entry]
    assert run() == code
    assert capsys.readouterr().err.splitlines()[0].startswith(first_line)
