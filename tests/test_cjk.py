"""Two-character Chinese, Japanese and Korean words are found by keyword (issue #26 item 10).

The word index reads a run of CJK characters as one token and trigrams need three
characters: 召回 (recall) inside 召回率很高 matched nothing before the CJK pair index."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kenning.search.engine import SearchEngine, SearchOptions
from kenning_testing import index_folder, reindex, write_files

NOTES = {
    "recall.md": "# 检索评估\n\n这个系统的召回率很高，排序也不错。\n",
    "vectors.md": "# 向量\n\n向量检索使用余弦相似度。\n",
    "japanese.md": "# 会議\n\n明日の会議で検索の結果を報告します。\n",
    "korean.md": "# 회의\n\n내일회의에서 결과를 보고합니다.\n",
    "english.md": "# Recall\n\nPlain English about recall and ranking.\n",
}


@pytest.fixture
def cjk_store(store, notes):
    write_files(notes, NOTES)
    index_folder(store, notes)
    return store


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("召回", "recall.md"),
        ("排序", "recall.md"),
        ("余弦", "vectors.md"),
        ("会議", "japanese.md"),
        ("회의", "korean.md"),
    ],
)
def test_a_two_character_word_inside_a_run_is_found_by_keyword(cjk_store, query, path):
    result = SearchEngine(cjk_store, None).search(query, SearchOptions(mode="lexical"))
    assert [h.path for h in result.hits][:1] == [path], result.hits
    hit = result.hits[0]
    assert "trigram" in hit.breakdown.lists  # the substring list found it
    assert any(hit.snippet[a:b] == query for a, b in hit.spans)  # and it is highlighted


def test_a_pair_that_is_not_written_finds_nothing_and_latin_is_unchanged(cjk_store):
    engine = SearchEngine(cjk_store, None)
    assert engine.search("率排", SearchOptions(mode="lexical")).hits == []  # 率，排: a comma between
    assert [h.path for h in engine.search("recall", SearchOptions(mode="lexical")).hits] == ["english.md"]


def test_a_changed_or_removed_note_leaves_the_pair_index(cjk_store, notes):
    (notes / "recall.md").write_text("# 检索\n\n没有那个词了。\n", encoding="utf-8")
    (notes / "vectors.md").unlink()
    reindex(cjk_store)
    engine = SearchEngine(cjk_store, None)
    assert engine.search("召回", SearchOptions(mode="lexical")).hits == []
    assert engine.search("余弦", SearchOptions(mode="lexical")).hits == []
    rows = cjk_store.scalar("SELECT count(*) FROM chunks_cjk")
    chunks_with_cjk = cjk_store.scalar("SELECT count(*) FROM chunks")
    assert rows <= chunks_with_cjk


def test_the_migration_indexes_the_pairs_of_chunks_written_before(cjk_store):
    from kenning.storage.migrations import m012_cjk_bigrams

    cjk_store.execute("DROP TRIGGER chunks_ad_cjk")
    cjk_store.execute("DROP TABLE chunks_cjk")
    with cjk_store.atomic():
        m012_cjk_bigrams(cjk_store)
    hits = SearchEngine(cjk_store, None).search("召回", SearchOptions(mode="lexical")).hits
    assert [h.path for h in hits] == ["recall.md"]


def test_bigrams_of_cjk_runs_only():
    from kenning.core.cjk import cjk_bigrams, is_cjk_pair

    assert cjk_bigrams("召回率 ok 向量") == ["召回", "回率", "向量"]
    assert cjk_bigrams("plain text") == [] and is_cjk_pair("召回") and not is_cjk_pair("ab")


@given(st.text(max_size=80))
def test_every_pair_of_adjacent_cjk_characters_is_a_bigram(text):
    from kenning.core.cjk import cjk_bigrams, is_cjk_pair

    grams = set(cjk_bigrams(text))
    for a, b in zip(text, text[1:]):
        if is_cjk_pair(a + b):
            assert a + b in grams


@given(
    st.text(alphabet=st.sampled_from("ab 1_\u2e7f\u2e80\u3005\u4e00\u9fff\uac00\ud7af\uff66\U00020000é"), max_size=12)
)
def test_the_cheap_first_cut_answers_as_the_patterns_do(text):
    """Text below U+2E80 is known to hold no CJK without compiling the patterns (issue #27)."""
    import re

    from kenning.core.cjk import _CJK_CHARS, cjk_bigrams, is_cjk

    assert is_cjk(text) == (re.fullmatch(f"[{_CJK_CHARS}]+", text) is not None)
    pairs = [
        m.group()[i : i + 2] for m in re.finditer(f"[{_CJK_CHARS}]{{2,}}", text) for i in range(len(m.group()) - 1)
    ]
    assert cjk_bigrams(text) == list(dict.fromkeys(pairs))


def test_latin_text_compiles_no_cjk_pattern():
    import os
    import subprocess
    import sys

    code = (
        "from kenning.core import cjk\n"
        "assert not cjk.is_cjk('socket') and not cjk.is_cjk('') and cjk.cjk_bigrams('plain words') == []\n"
        "print(sorted(vars(cjk._ALL)), sorted(vars(cjk._RUN)))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.split() == ["['flags',", "'pattern']", "['flags',", "'pattern']"]
