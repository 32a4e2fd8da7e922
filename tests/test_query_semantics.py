"""Query semantics people rely on: required phrases, exclusions in every list,
filter-only queries, front-matter words, the meaning floor, did-you-mean."""

import pytest

from kenning.search.engine import SearchEngine, SearchOptions
from kenning.search.fusion import DEFAULT_FUSION
from kenning.search.query import parse_query
from kenning_testing import index_folder, write_files

FUZZY = f"{DEFAULT_FUSION}-fuzzy"  # the layer of a search found only by correcting its words

MODES = ("hybrid", "lexical", "vector")


@pytest.fixture
def phrased(store, notes, embedder):
    write_files(
        notes,
        {
            "side.md": "# Ops\n\nthe rollback plan is written down here\n",
            "apart.md": "# Ops\n\na plan for every rollback we made\n",
            "apart2.md": "# Rollback of a plan\n\nplan plan plan rollback rollback rollback\n",
            "other.md": "# Gardening\n\ntomatoes and roses\n",
        },
    )
    index_folder(store, notes, embedder)
    return embedder


def _lists_seen(result) -> set[str]:
    return {name for h in result.hits for name in h.breakdown.lists}


@pytest.mark.parametrize("mode", MODES)
def test_a_quoted_phrase_is_required_in_every_list(store, phrased, mode):
    result = SearchEngine(store, phrased).search(
        '"rollback plan"', SearchOptions(mode=mode, limit=1, meaning_floor=None)
    )
    assert [h.path for h in result.hits] == ["side.md"]
    assert result.banner() is None and not result.hits[0].breakdown.lacks_phrases


@pytest.mark.parametrize("mode", MODES)
def test_phrase_hits_come_first_and_results_for_the_words_follow(store, phrased, mode):
    """Fewer chunks hold the phrase than were asked for: the list is not cut short."""
    result = SearchEngine(store, phrased).search(
        '"rollback plan"', SearchOptions(mode=mode, limit=20, meaning_floor=None)
    )
    paths = [h.path for h in result.hits]
    assert paths[0] == "side.md" and {"apart.md", "apart2.md"} <= set(paths[1:])
    assert [h.breakdown.lacks_phrases for h in result.hits] == [False] + [True] * (len(paths) - 1)
    assert result.banner() == 'Only 1 result contains "rollback plan"; results for its words follow'
    assert result.phrases.first == 1 and result.phrases.required == ("rollback plan",)


def test_when_nothing_follows_the_phrase_hits_the_result_does_not_say_words_follow(store, notes, embedder):
    """Only one chunk holds the phrase and no other matches its words: every result holds
    it, so there is nothing to announce (it said "results for its words follow", then
    showed that one result alone)."""
    write_files(
        notes,
        {"side.md": "# Ops\n\nthe rollback plan is written down here\n", "other.md": "# Gardening\n\ntomatoes\n"},
    )
    index_folder(store, notes, embedder)
    result = SearchEngine(store, embedder).search('"rollback plan"', SearchOptions(mode="lexical", limit=20))
    assert [h.path for h in result.hits] == ["side.md"]
    assert result.banner() is None and not result.hits[0].breakdown.lacks_phrases


@pytest.mark.parametrize("mode", MODES)
def test_a_phrase_nothing_contains_is_searched_as_its_words(store, phrased, mode):
    result = SearchEngine(store, phrased).search(
        'tomatoes "plan rollback written"', SearchOptions(mode=mode, limit=20, meaning_floor=None)
    )
    assert result.hits and {"other.md", "side.md"} <= {h.path for h in result.hits}
    assert not any(h.breakdown.lacks_phrases for h in result.hits)  # no hit holds it: nothing to rank first
    assert result.banner() == 'No note contains "plan rollback written"; showing results for its words'
    assert result.phrases.absent == ("plan rollback written",) and result.phrases.first is None


def test_phrases_found_apart_but_never_together_are_searched_as_words(store, phrased):
    result = SearchEngine(store, phrased).search('"tomatoes" "rollback"', SearchOptions(limit=20, meaning_floor=None))
    assert {"other.md", "side.md"} <= {h.path for h in result.hits}
    assert result.banner() == 'No note contains "tomatoes" and "rollback" together; showing results for their words'


def test_a_phrase_only_outside_the_filters_is_said_to_be_missing_under_them(store, phrased):
    result = SearchEngine(store, phrased).search(
        '"rollback plan" -written', SearchOptions(limit=20, meaning_floor=None)
    )
    assert result.hits and all("written" not in h.text for h in result.hits)
    assert result.banner().startswith('No note the filters allow contains "rollback plan"')


def test_a_missing_phrase_beside_a_found_one_keeps_the_found_one_first(store, phrased):
    result = SearchEngine(store, phrased).search(
        '"written down" "zzyzx quux" rollback', SearchOptions(limit=20, meaning_floor=None)
    )
    assert result.hits[0].path == "side.md" and all(h.breakdown.lacks_phrases for h in result.hits[1:])
    assert result.banner() == (
        'No note contains "zzyzx quux"; showing results for its words;'
        ' only 1 result contains "written down"; results for the words follow'
    )


def test_phrase_words_still_rank_as_words_and_every_list_obeys(store, notes, embedder):
    files = {f"noise{i}.md": f"# Rollback {i}\n\nrollback plan notes {i} rollback\n" for i in range(20)}
    files.update({f"keep{i}.md": f"# Keep {i}\n\nthe rollback plan for service {i}\n" for i in range(3)})
    index_folder(store, write_files(notes, files), embedder)
    engine = SearchEngine(store, embedder)
    result = engine.search('"plan for" rollback', SearchOptions(limit=3, meaning_floor=None))
    assert sorted(h.path for h in result.hits) == ["keep0.md", "keep1.md", "keep2.md"]
    assert {"porter", "vector"} <= _lists_seen(result)
    for hit in result.hits:
        assert hit.breakdown.lists["porter"].score > 0  # "rollback" counted as a word too
    longer = engine.search('"plan for" rollback', SearchOptions(limit=30, meaning_floor=None)).hits
    assert [h.chunk_id for h in longer[:3]] == [h.chunk_id for h in result.hits]
    assert all(h.breakdown.lacks_phrases and h.path.startswith("noise") for h in longer[3:]) and len(longer) == 23


def test_a_single_quoted_word_is_required(store, phrased):
    result = SearchEngine(store, phrased).search(
        'tomatoes "written"', SearchOptions(mode="vector", meaning_floor=None, limit=1)
    )
    assert [h.path for h in result.hits] == ["side.md"]


def test_phrase_match_follows_the_porter_stemmer(store, phrased):
    # FTS5 porter phrases match stems side by side: "rollbacks planned" is "rollback plan".
    hits = SearchEngine(store, phrased).search('"rollbacks planned"', SearchOptions(mode="lexical")).hits
    assert [h.path for h in hits if not h.breakdown.lacks_phrases] == ["side.md"]


@pytest.mark.parametrize("mode", MODES)
def test_exclusions_hold_in_every_list_including_feedback(store, notes, embedder, mode):
    files = {f"k{i}.md": f"# Kestrel {i}\n\nkestrel falcon hunting notes {i}\n" for i in range(6)}
    files["p.md"] = "# Kestrel pigeon\n\nkestrel falcon hunting pigeon notes\n"
    index_folder(store, write_files(notes, files), embedder)
    result = SearchEngine(store, embedder).search(
        "kestrel falcon -pigeon", SearchOptions(mode=mode, limit=20, meaning_floor=None)
    )
    assert result.hits and all(h.path != "p.md" for h in result.hits)
    for hit in result.hits:
        assert "pigeon" not in hit.text


def test_parse_keeps_single_quoted_words_as_required():
    q = parse_query('"alpha" "beta gamma" delta')
    assert q.phrases == (("alpha",), ("beta", "gamma"))
    assert q.terms == ("alpha", "beta", "gamma", "delta")


def _dated(day: str, tags: str = "", body: str = "notes") -> str:
    return f"---\ndate: {day}\ntags: [{tags}]\n---\n# Note of {day}\n\n{body}\n\n## Part two\n\nmore {body}\n"


@pytest.fixture
def dated(store, notes, embedder):
    write_files(
        notes,
        {
            "m1.md": _dated("2024-01-05", "meeting"),
            "m2.md": _dated("2024-03-01", "meeting"),
            "m3.md": _dated("2023-12-30", "meeting, draft", body="draft agenda"),
            "adr/0001.md": _dated("2024-02-10"),
            "adr/0002.md": _dated("2023-11-01"),
            "other.md": _dated("2024-04-01", "retro"),
        },
    )
    index_folder(store, notes, embedder)
    return embedder


@pytest.mark.parametrize("mode", MODES)
def test_a_query_of_filters_only_lists_documents_newest_first(store, dated, mode):
    result = SearchEngine(store, dated).search("tag:meeting", SearchOptions(mode=mode))
    assert [h.path for h in result.hits] == ["m2.md", "m1.md", "m3.md"]
    assert result.layer == "filter"
    assert all(h.line_start == 5 for h in result.hits)  # each document's first chunk, once


def test_filters_only_combine_and_respect_exclusions(store, dated):
    engine = SearchEngine(store, dated)
    assert [h.path for h in engine.search("path:adr after:2024-01").hits] == ["adr/0001.md"]
    assert [h.path for h in engine.search("tag:meeting -draft").hits] == ["m2.md", "m1.md"]
    assert [h.path for h in engine.search("tag:meeting", SearchOptions(limit=1)).hits] == ["m2.md"]


def test_filters_only_explain_says_what_ordered_them_and_adds_up(store, dated):
    from kenning.cli.output import explain_lines
    from kenning.search.signals import final_score

    hits = SearchEngine(store, dated).search("tag:meeting").hits
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and scores[0] == 1.0 and len(set(scores)) == 3
    for rank, hit in enumerate(hits, 1):
        b = hit.breakdown
        assert list(b.lists) == ["date"] and b.lists["date"].rank == rank
        assert b.fused == sum(s.contribution for s in b.lists.values())
        assert b.lists["date"].contribution == b.lists["date"].weight / (60 + rank)
        assert min(1.0, (b.fused + b.proximity) / b.normaliser) == b.base
        again = final_score(b.base, b.recency, b.git, b.penalty)
        assert min(1.0, (b.base + again.recency_bonus + again.git_bonus) * b.penalty) == b.final == hit.score
    text = "\n".join(explain_lines(hits[0].breakdown))
    assert "2024-03-01" in text and "newest first" in text


RETRO = "---\ntitle: Sprint review\ntags: [retro, team]\n---\n# What went well\n\nthe deploy went smoothly\n\n## Next\n\nwrite more tests\n"


@pytest.mark.parametrize("mode", ("hybrid", "lexical"))
def test_front_matter_title_and_tags_are_searchable_words(store, notes, embedder, mode):
    write_files(notes, {"r.md": RETRO, "o.md": "# Other\n\nthe deploy of a sprint\n"})
    index_folder(store, notes, embedder)
    engine = SearchEngine(store, embedder)
    for text in ("retro", "review", "team deploy"):
        hits = engine.search(text, SearchOptions(mode=mode)).hits
        assert hits and hits[0].path == "r.md", text
    # Every chunk of the note carries them, and its own title is still what is shown.
    hits = engine.search("retro", SearchOptions(mode="lexical")).hits
    assert sorted(h.title for h in hits) == ["What went well", "What went well > Next"]


def test_a_tag_or_title_word_is_never_corrected(store, notes):
    write_files(notes, {"r.md": RETRO, "x.md": "# Metro\n\nthe metro and the retry loop\n"})
    index_folder(store, notes)
    result = SearchEngine(store, None).search("retro deploy")
    assert result.suggestion is None and result.corrections == {}


def test_migration_makes_existing_stores_words_searchable(tmp_path, notes, monkeypatch):
    from kenning.ingest.sources import add_source
    from kenning.storage import migrations, open_store
    from kenning_testing import reindex

    write_files(notes, {"r.md": RETRO})
    path = tmp_path / "old" / "kenning.db"
    with monkeypatch.context() as patch:
        patch.setattr(migrations, "MIGRATIONS", [migrations.m001_initial])
        old = open_store(path)
    source = add_source(old, notes)
    old.execute(
        "INSERT INTO documents (source_id, rel_path, sha256, size, mtime, kind, title, tags)"
        " VALUES (?, 'r.md', 'abc', 10, 1.0, 'markdown', 'Sprint review', ' retro team ')",
        (source.id,),
    )
    old.execute(
        "INSERT INTO chunks (document_id, ord, title, kind, text, line_start, line_end, input_sha)"
        " VALUES (1, 0, 'What went well', 'prose', 'the deploy went smoothly', 5, 7, 'x')"
    )
    old.close()
    store = open_store(path)
    try:
        engine = SearchEngine(store, None)
        assert [h.path for h in engine.search("retro").hits] == ["r.md"]  # tags at once
        assert engine.search("review").hits == []  # the title needs the note read again
        reindex(store)
        assert {h.path for h in engine.search("review").hits} == {"r.md"}
        for table in ("chunks_fts", "chunks_tri"):
            store.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
    finally:
        store.close()


@pytest.fixture
def postgres_notes(store, notes):
    files = {
        "pg.md": "# Postgres tuning notes\n\nPostgres tuning: shared buffers, work mem and tuning autovacuum.\n",
        "pg2.md": "# Postgres\n\nPostgres tuning checklist for the database\n",
    }
    # The globally frequent neighbours, never together with each other as these are.
    files.update({f"run{i}.md": f"# Jobs {i}\n\nrun the job, run it again, run {i}\n" for i in range(30)})
    files.update({f"sql{i}.md": f"# Db {i}\n\npostgresql replication {i}\n" for i in range(30)})
    files["both.md"] = "# Ops\n\nrun postgresql locally\n"
    index_folder(store, write_files(notes, files))


def test_did_you_mean_prefers_corrections_found_together(store, postgres_notes):
    engine = SearchEngine(store, None)
    plain = SearchOptions(search_corrections=False)
    result = engine.search("postgress tunning database", plain)
    assert result.hits and result.suggestion == "postgres tuning database"
    # By default a confident correction is searched for as well, and said so.
    result = engine.search("postgress tunning database")
    assert result.layer == f"{DEFAULT_FUSION}-corrected" and result.suggestion is None
    assert result.corrections == {"postgress": "postgres", "tunning": "tuning"}
    assert result.hits[0].path in ("pg.md", "pg2.md") and "postgress → postgres" in result.banner()
    assert result.hits[0].breakdown.corrections == result.corrections
    result = engine.search("postgress tunning", plain)  # nothing matches: the corrected words are searched
    assert result.layer == FUZZY and result.corrections == {"postgress": "postgres", "tunning": "tuning"}
    assert result.hits[0].path in ("pg.md", "pg2.md")


def test_keyword_mode_searches_what_was_typed_and_offers_the_correction(store, postgres_notes):
    engine = SearchEngine(store, None)
    result = engine.search("postgress tunning database", SearchOptions(mode="lexical"))
    assert result.layer == DEFAULT_FUSION and result.corrections == {}
    assert result.suggestion == "postgres tuning database"
    result = engine.search("postgress tunning", SearchOptions(mode="lexical"))  # nothing matches as typed
    assert result.layer == FUZZY and result.hits[0].path in ("pg.md", "pg2.md")


def test_single_typos_are_restored_by_their_edits(store, postgres_notes):
    engine = SearchEngine(store, None)
    for typo in ("replicaton", "replicatoin", "replicattion", "replucation"):
        result = engine.search(f"{typo} database", SearchOptions(search_corrections=False))
        assert result.suggestion == "replication database", typo


@pytest.fixture
def birds(store, notes, embedder):
    write_files(
        notes,
        {
            "a.md": "# Raptors\n\nkestrel falcon hawk",
            "b.md": "# Misc\n\nunrelated words entirely",
            "c.md": "# Sea\n\ngulls and terns",
        },
    )
    index_folder(store, notes, embedder)
    return embedder


@pytest.mark.parametrize("mode", ("hybrid", "vector"))
def test_nonsense_finds_nothing_rather_than_arbitrary_hits(store, birds, mode):
    engine = SearchEngine(store, birds)
    assert engine.search("qwxzv", SearchOptions(mode=mode)).hits == []
    assert engine.search("qwxzv", SearchOptions(mode=mode, meaning_floor=None)).hits  # the floor did it


def test_meaning_only_hits_under_the_floor_go_and_the_rest_are_labelled(store, birds):
    engine = SearchEngine(store, birds)
    everything = engine.search("falconry hawks", SearchOptions(meaning_floor=None)).hits
    meaning = sorted((h.breakdown.cosine, h.path) for h in everything if h.breakdown.meaning_only)
    assert len(meaning) >= 2
    floor = (meaning[-1][0] + meaning[-2][0]) / 2
    kept = engine.search("falconry hawks", SearchOptions(meaning_floor=floor)).hits
    kept_meaning = [h for h in kept if h.breakdown.meaning_only]
    assert [h.path for h in kept_meaning] == [meaning[-1][1]]
    assert all(h.breakdown.cosine >= floor for h in kept_meaning)
    literal = [h for h in everything if not h.breakdown.meaning_only]
    assert {h.chunk_id for h in literal} <= {h.chunk_id for h in kept}  # literal hits never floored


def test_meaning_only_label_in_cli_output(store, birds):
    import json

    from kenning.cli.output import hit_dict, print_human
    from kenning.core.types import SearchResult

    hits = SearchEngine(store, birds).search("falconry hawks", SearchOptions(meaning_floor=None)).hits
    lines: list[str] = []
    print_human(SearchResult(query="falconry hawks", hits=hits), explain=False, write=lines.append)
    for hit in hits:
        record = json.loads(json.dumps(hit_dict(hit, explain=False)))
        assert record["meaning_only"] is hit.breakdown.meaning_only
    labelled = [line for line in lines if "meaning only" in line]
    assert len(labelled) == sum(h.breakdown.meaning_only for h in hits) > 0


def test_the_app_labels_meaning_only_rows(store, birds):
    pytest.importorskip("PySide6")
    from kenning.gui.results import row_tag

    hits = SearchEngine(store, birds).search("falconry hawks", SearchOptions(meaning_floor=None)).hits
    assert {row_tag(h) for h in hits} == {"meaning only", ""}
    assert all((row_tag(h) == "meaning only") == h.breakdown.meaning_only for h in hits)


def test_a_searched_correction_is_in_the_explain_record(store, postgres_notes):
    from kenning.cli.output import explain_lines

    hit = SearchEngine(store, None).search("postgress tunning database").hits[0]
    assert "searched as postgress → postgres, tunning → tuning" in "\n".join(explain_lines(hit.breakdown))


def test_vector_mode_floors_only_queries_the_index_does_not_know(store, birds):
    engine = SearchEngine(store, birds)
    strict = SearchOptions(mode="vector", meaning_floor=0.99)
    assert engine.search("gulls", strict).hits  # a known word: ranked by meaning, never cut short
    assert engine.search("qwxzv", strict).hits == []


def test_the_explanation_of_a_filter_only_list_adds_up(store, dated):
    from kenning.search import explain

    hits = SearchEngine(store, dated).search("tag:meeting").hits
    newest, second = (h.breakdown for h in hits[:2])
    assert newest.relevance == newest.base == newest.final == 1.0
    assert second.relevance == pytest.approx((second.fused + second.proximity) / second.normaliser)
    assert second.base == second.relevance == second.final < 1.0
    assert explain.base_formula(second).startswith(f"{second.relevance:.4f} ")


def test_a_correction_that_finds_nothing_either_does_not_claim_to_show_results(store, tmp_path, embedder):
    # "secretword" is indexed, but only in a Python file, which `ext:md` leaves out.
    folder = write_files(tmp_path / "repo", {"a.md": "# Alpha\n\nplain words\n", "b.py": "secretword = 1\n"})
    index_folder(store, folder, embedder)
    result = SearchEngine(store, embedder).search("scriptword ext:md", SearchOptions(mode="lexical"))
    assert result.hits == [] and result.corrections == {"scriptword": "secretword"}
    assert result.banner() == "No exact matches, and none for the corrected words either: scriptword → secretword"


@pytest.mark.parametrize("query", ["source:nope retro", "source:nope"])
def test_a_source_filter_naming_no_source_says_which_sources_exist(store, dated, query):
    from kenning.storage import sources as sources_repo

    names = ", ".join(s.name for s in sources_repo.list_sources(store))
    result = SearchEngine(store, dated).search(query)
    assert result.hits == []
    assert f"source:nope names no source (sources: {names})" in result.notes
    assert not SearchEngine(store, dated).search(f"source:{names.split(', ')[0]} retro").notes
