def test_search_embeds_its_query_on_one_thread_with_a_session_for_few_runs(tmp_path):
    from kenning.cli.context import Context
    from kenning.embedding import QUERY_THREADS

    ctx = Context(tmp_path / "k.db")
    assert ctx.query_embedder.threads == QUERY_THREADS
    assert ctx.embedder.threads is None  # indexing uses every core
    assert ctx.query_embedder.fingerprint == ctx.embedder.fingerprint
    # The command line's process embeds one query (embedding.bundled_runner: no packing).
    assert ctx.query_embedder.few_runs and not ctx.embedder.few_runs
