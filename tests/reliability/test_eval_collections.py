"""`kenning eval` on collections a user makes (issue #24, item 27): document ids that
differ only in punctuation are three documents, not one file scored 0; a title or text
that is not a text is a clear error naming its line."""

from __future__ import annotations

import json

import pytest

from kenning_testing import write_beir
from reliability.helpers import cli, count

IDS = ["x/1", "x_1", "x:1", "x%2F1", ".hidden", "../up", "é/ü", "plain-1.0"]


def test_ids_differing_in_punctuation_are_separate_documents_and_score(tmp_path):
    words = ["apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel"]
    docs = [{"_id": i, "title": w, "text": f"all about the {w}"} for i, w in zip(IDS, words)]
    queries = [{"_id": f"q{n}", "text": w} for n, w in enumerate(words)]
    folder = write_beir(tmp_path / "beir", docs, queries, [(f"q{n}", i) for n, i in enumerate(IDS)])
    keep = tmp_path / "kept"
    rc, out, err = cli(tmp_path / "k.db", "eval", str(folder), "--mode", "lexical", "--json", "--keep", str(keep))
    assert rc == 0, err
    assert f"indexed {len(IDS)} documents" in err
    assert len(list((keep / "docs").glob("*.md"))) == len(IDS)  # one file each, none hidden
    row = json.loads(out.splitlines()[-1])
    assert row["queries"] == len(IDS) and row["mrr@10"] == 1.0, row
    count("data-loss: eval ids kept apart")


@pytest.mark.parametrize("doc_id", [*IDS, "%", "a%b", "ÿ", "tab\there", "100%"])
def test_file_names_give_the_id_back(doc_id):
    from kenning.cli.evaluate import doc_file_name, doc_id_of

    name = doc_file_name(doc_id)
    assert "/" not in name and not name.startswith(".")
    assert doc_id_of(name) == doc_id


@pytest.mark.parametrize(
    ("row", "said"),
    [
        ({"_id": "d2", "title": 5, "text": "x"}, '"title" is a int'),
        ({"_id": "d2", "text": ["a", "b"]}, '"text" is a list'),
        ({"_id": "d2", "text": {"nested": 1}}, '"text" is a dict'),
        ({"_id": "", "text": "x"}, 'with an "_id"'),
    ],
)
def test_a_title_or_text_that_is_no_text_is_a_clear_error(tmp_path, row, said):
    folder = write_beir(tmp_path / "beir", [{"_id": "d1", "text": "alpha"}, row], [{"_id": "q1", "text": "alpha"}], [])
    rc, out, err = cli(tmp_path / "k.db", "eval", str(folder), "--mode", "lexical")
    assert rc == 2 and "Something went wrong" not in err and "corpus.jsonl line 2" in err and said in err, err


def test_a_query_text_that_is_no_text_is_a_clear_error(tmp_path):
    folder = write_beir(tmp_path / "beir", [{"_id": "d1", "text": "alpha"}], [{"_id": "q1", "text": 7}], [("q1", "d1")])
    rc, out, err = cli(tmp_path / "k.db", "eval", str(folder), "--mode", "lexical")
    assert rc == 2 and "queries.jsonl line 1" in err and '"text" is a int' in err, err
