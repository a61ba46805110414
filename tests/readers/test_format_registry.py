"""The input formats are one registry (issue 44 item 5): one record per format, in its own
module, from which the format names, detection, reading and the bundle check's export
formats are derived; adding a format is one module and one record."""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest

from metascore.bundle.check.meta_config import EXPORT_FORMATS
from metascore.config import parse_config
from metascore.errors import InputError
from metascore.readers import formats
from metascore.readers.configured import load_scores


def test_the_names_detection_and_export_formats_come_from_the_records():
    assert formats.FORMATS == tuple(f.name for f in formats.REGISTRY) == (
        "long", "tree", "codabench_json", "codabench_csv", "codalab_csv", "coopetition",
        "wide", "preflib")
    assert formats.SITE_EXPORTS == ("codabench_json", "codabench_csv", "codalab_csv")
    assert EXPORT_FORMATS == (None, *formats.SITE_EXPORTS)
    # every record is found by its name, and says how it is recognised and what it reads
    for fmt in formats.REGISTRY:
        assert (fmt.by_path is None) != (fmt.by_content is None), fmt.name
        assert (fmt.read is None) == (fmt.refusal is not None), fmt.name


#: The one module of a throwaway format: ``.toy`` files, one score a line,
#: ``<candidate> <task>/<metric> <value>``; its record is all the registry needs.
TOY_MODULE = '''
from metascore.readers.input_format import InputFormat, Verdict
from metascore.readers.rows import read_text, score_cell


def read_toy(source, rows):
    for n, line in enumerate(read_text(source.path).splitlines(), 1):
        if line.strip():
            candidate, judge, value = line.split()
            task, metric = judge.split("/")
            where = f"{source.path}, line {n}"
            rows.add(where, "", candidate, None, task, metric, score_cell(value, where))


FORMAT = InputFormat(
    "toy", read_toy,
    by_content=lambda s: Verdict.MATCH if s.suffix == ".toy" and len(s.header[0].split()) == 3 else None)
'''


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The throwaway format's module, imported, and its record in the registry."""
    (tmp_path / "toy_format.py").write_text(textwrap.dedent(TOY_MODULE), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("toy_format", tmp_path / "toy_format.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "toy_format", module)
    monkeypatch.setattr(formats, "REGISTRY", (*formats.REGISTRY, module.FORMAT))
    return module.FORMAT


def test_a_throwaway_format_is_one_module_and_one_record(tmp_path, toy):
    path = tmp_path / "scores.toy"
    path.write_text("alice iris/accuracy 0.9\nbob iris/accuracy 0.8\nalice wine/accuracy 0.7\n"
                    "bob wine/accuracy 0.75\n", encoding="utf-8")
    assert formats.detect_format(path) == "toy"
    table = formats.read_score_table(path)
    assert table.format == "toy"
    assert list(table.frame["candidate"]) == ["alice", "bob", "alice", "bob"]
    assert list(table.frame["value"]) == [0.9, 0.8, 0.7, 0.75]
    assert formats.read_score_table(path, "toy", phase="Dev").frame["phase"].unique().tolist() == ["Dev"]
    # through the configuration, as the meta-scoring program reads it
    config = parse_config({"input": {"path": "scores.toy"}})
    assert load_scores(config.input, tmp_path).input_path == "scores.toy"
    # a file no format claims names the new one among the formats to choose from
    other = tmp_path / "scores.tsv"
    other.write_text("a\tb\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"set `input.format:` to one of .*preflib, toy\.$"):
        formats.detect_format(other)
    with pytest.raises(InputError, match=r"unknown input format 'toyy' \(did you mean 'toy'\?\)"):
        formats.read_score_table(path, "toyy")


def test_a_format_rule_sure_of_a_file_wins_and_two_matches_are_ambiguous(tmp_path, toy):
    blind = tmp_path / "board.csv"
    blind.write_text("Not allowed, phase is blind.\ncandidate,value\n", encoding="utf-8")
    assert formats.detect_format(blind) == "codalab_csv"  # SURE: the long columns do not matter
    both = tmp_path / "both.csv"
    both.write_text("Username,candidate,task,value\nalice,a-1,iris,0.5\n", encoding="utf-8")
    with pytest.raises(InputError, match="it could be codabench_csv or long;"):
        formats.detect_format(both)
