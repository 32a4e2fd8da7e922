"""Chunking: structure per kind, line ranges, and the byte-cap invariants."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning.ingest.chunking import DEFAULT_MAX_BYTES, TARGET_BYTES, chunk_document

KINDS = ["markdown", "text", "code:python", "code:go", "code:javascript"]


def _lines(text: str, chunk) -> str:
    """The file lines a chunk claims, to check ranges against the text itself."""
    return "\n".join(text.split("\n")[chunk.line_start - 1 : chunk.line_end])


def _para(word: str, n: int = 30) -> str:
    return " ".join(f"{word}{i}" for i in range(n))


def assert_invariants(text: str, chunks, max_bytes: int, line_offset: int = 0) -> None:
    normalised = text.replace("\r\n", "\n").replace("\r", "\n")
    total_lines = normalised.count("\n") + 1
    previous = line_offset + 1
    for i, chunk in enumerate(chunks):
        assert chunk.ord == i
        assert chunk.text.strip(), "empty chunk"
        assert len(chunk.text.encode("utf-8")) <= max_bytes
        assert chunk.kind in ("prose", "code")
        assert previous <= chunk.line_start <= chunk.line_end <= total_lines + line_offset
        previous = chunk.line_start
    wanted = [c for c in normalised if not c.isspace()]
    got = [c for chunk in chunks for c in chunk.text if not c.isspace()]
    assert got == wanted, "content lost, duplicated or reordered"


# --- markdown -------------------------------------------------------------------------

NOTE = """Preamble line.

# Search

Intro to search.

## Fusion

RRF adds reciprocal ranks.

### Weights

Per-list weights.

## Signals

Recency and git.

# Storage

SQLite file.
"""


def test_markdown_heading_paths_and_lines():
    chunks = chunk_document(NOTE, "markdown", "notes/design.md")
    assert [c.title for c in chunks] == [
        "design",
        "Search",
        "Search > Fusion",
        "Search > Fusion > Weights",
        "Search > Signals",
        "Storage",
    ]
    for chunk in chunks:
        assert _lines(NOTE, chunk) == chunk.text
    assert chunks[2].text == "## Fusion\n\nRRF adds reciprocal ranks."
    assert (chunks[2].line_start, chunks[2].line_end) == (7, 9)
    assert_invariants(NOTE, chunks, DEFAULT_MAX_BYTES)


def test_line_offset_shifts_ranges():
    chunks = chunk_document(NOTE, "markdown", "design.md", line_offset=4)
    assert (chunks[2].line_start, chunks[2].line_end) == (11, 13)


def test_no_headings_titles_with_file_stem():
    chunks = chunk_document("Just some words.\n", "markdown", "a/b/My Note.md")
    assert [(c.title, c.text, c.kind) for c in chunks] == [("My Note", "Just some words.", "prose")]


def test_repeated_identical_headings_stay_separate():
    text = "# Log\n\n## Notes\n\nfirst day\n\n## Notes\n\nsecond day\n"
    chunks = chunk_document(text, "markdown", "log.md")
    assert [c.title for c in chunks] == ["Log > Notes", "Log > Notes"]
    assert "first day" in chunks[0].text and "second day" in chunks[1].text
    assert chunks[0].line_start < chunks[1].line_start


def test_bodiless_heading_joins_its_first_child():
    chunks = chunk_document("# Project\n\n## Install\n\npip install kenning\n", "markdown", "r.md")
    assert len(chunks) == 1
    assert chunks[0].title == "Project > Install"
    assert chunks[0].text.startswith("# Project")


def test_setext_headings_and_closing_hashes():
    text = "Title\n=====\n\nintro\n\nPart ##\n-------\n\nbody\n\n## Closed ##\n\nend\n"
    assert [c.title for c in chunk_document(text, "markdown", "s.md")] == [
        "Title",
        "Title > Part ##",
        "Title > Closed",
    ]


def test_list_item_before_dashes_is_not_a_heading():
    text = "- item\n---\n\nafter\n"
    assert {c.title for c in chunk_document(text, "markdown", "l.md")} == {"l"}


def test_headings_inside_fences_are_ignored_and_fence_kept_whole():
    code = "```python\n# not a heading\n\n\ndef f():\n    return 1\n```"
    text = f"# Real\n\n{_para('intro', 60)}\n\n{code}\n\n{_para('outro', 60)}\n"
    chunks = chunk_document(text, "markdown", "f.md")
    assert all(c.title == "Real" for c in chunks)
    holders = [c for c in chunks if "# not a heading" in c.text]
    assert len(holders) == 1 and code in holders[0].text
    assert_invariants(text, chunks, DEFAULT_MAX_BYTES)


def test_chunk_that_is_one_fence_is_code():
    fence = "~~~sql\n" + "\n".join(f"SELECT {i} FROM t WHERE x = {i};" for i in range(25)) + "\n~~~"
    text = f"# Query\n\n{_para('context', 100)}\n\n{fence}\n"
    chunks = chunk_document(text, "markdown", "q.md")
    assert [c.kind for c in chunks] == ["prose", "code"]
    assert chunks[1].text == fence
    assert chunks[0].text.startswith("# Query\n\ncontext0")  # heading glued to its paragraph


def test_oversized_fence_is_split_within_the_cap():
    fence = "```\n" + "\n".join(f"line {i} " + "x" * 60 for i in range(200)) + "\n```"
    chunks = chunk_document(fence, "markdown", "big.md")
    assert len(chunks) > 1 and all(c.kind == "code" for c in chunks)
    assert_invariants(fence, chunks, DEFAULT_MAX_BYTES)


def test_big_section_splits_at_paragraphs_evenly():
    paragraphs = [_para(f"p{i}w", 25) for i in range(6)]  # ~200 bytes each
    text = "# Big\n\n" + "\n\n".join(paragraphs) + "\n"
    chunks = chunk_document(text, "markdown", "b.md", max_bytes=800)
    assert len(chunks) == 2
    assert all(c.title == "Big" for c in chunks)
    for chunk in chunks:  # whole paragraphs only
        assert all(p in chunk.text or p not in text for p in chunk.text.split("\n\n"))
    assert_invariants(text, chunks, 800)


# --- code -----------------------------------------------------------------------------

PY = '''"""Fusion of ranked lists."""

import math


def rrf_fuse(lists, k=60):
    """Reciprocal rank fusion over several ranked lists of chunk ids."""
    scores = {}
    for ranked in lists:
        for rank, chunk_id in enumerate(ranked, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True)
class Foo:
    """A container with enough text in it to stand as its own chunk."""

    name: str
    weight: float = 1.0

    def describe(self) -> str:
        return f"{self.name} weighs {self.weight} in the final fused ranking"


if __name__ == "__main__":
    print(rrf_fuse([[1, 2], [2, 3]]))
'''


def test_python_top_level_definitions():
    chunks = chunk_document(PY, "code:python", "app/search/fusion.py")
    titles = [c.title for c in chunks]
    assert "app/search/fusion.py: rrf_fuse" in titles
    assert "app/search/fusion.py: class Foo" in titles
    foo = chunks[titles.index("app/search/fusion.py: class Foo")]
    assert foo.text.startswith("@dataclass(frozen=True)\nclass Foo:")  # decorator attached
    assert "__main__" not in foo.text
    fuse = chunks[titles.index("app/search/fusion.py: rrf_fuse")]
    assert fuse.text.startswith("def rrf_fuse(") and fuse.line_start == 6
    assert all(c.kind == "code" for c in chunks)
    for chunk in chunks:
        assert _lines(PY, chunk) == chunk.text
    assert_invariants(PY, chunks, DEFAULT_MAX_BYTES)


def test_big_python_class_splits_at_methods():
    methods = "\n\n".join(
        f"    def method_{i}(self):\n" + "\n".join(f"        x{j} = {j} * {i}" for j in range(20)) for i in range(6)
    )
    text = f'class Store:\n    """Storage."""\n\n{methods}\n'
    titles = [c.title for c in chunk_document(text, "code:python", "s.py")]
    assert titles[0] == "s.py: class Store"
    assert "s.py: Store.method_3" in titles


def test_small_definitions_share_a_chunk_named_after_them():
    text = "def a():\n    return 1\n\n\ndef b():\n    return 2\n"
    chunks = chunk_document(text, "code:python", "m.py")
    assert [c.title for c in chunks] == ["m.py: a, b"]


def test_go_functions_with_receivers():
    body = "\n".join(f'\tx{i} := compute({i}, "some argument text")' for i in range(12))
    text = (
        'package server\n\nimport "fmt"\n\n'
        f"// Start runs the server.\nfunc (s *Server) Start(port int) error {{\n{body}\n\treturn nil\n}}\n\n"
        f"type Server struct {{\n{body}\n}}\n\n"
        f"func helper() {{\n{body}\n}}\n"
    )
    chunks = chunk_document(text, "code:go", "srv/server.go")
    titles = [c.title for c in chunks]
    assert "srv/server.go: Start" in titles
    assert "srv/server.go: type Server" in titles
    assert "srv/server.go: helper" in titles
    start = chunks[titles.index("srv/server.go: Start")]
    assert start.text.startswith("// Start runs the server.")
    assert_invariants(text, chunks, DEFAULT_MAX_BYTES)


def test_code_without_definitions_splits_at_blank_lines():
    blocks = ["\n".join(f"key_{b}_{i}: value" for i in range(30)) for b in range(4)]
    text = "\n\n".join(blocks) + "\n"
    chunks = chunk_document(text, "code:yaml", "conf.yaml")
    assert len(chunks) > 1 and all(c.title == "conf.yaml" for c in chunks)
    assert_invariants(text, chunks, DEFAULT_MAX_BYTES)


# --- text -----------------------------------------------------------------------------


def test_text_paragraphs_grouped_and_titled():
    text = "\n\n".join(_para(f"t{i}x", 20) for i in range(20)) + "\n"
    chunks = chunk_document(text, "text", "docs/notes.txt")
    assert 1 < len(chunks) < 20
    assert all(c.title == "notes.txt" and c.kind == "prose" for c in chunks)
    assert all(len(c.text.encode()) <= TARGET_BYTES for c in chunks)
    assert_invariants(text, chunks, DEFAULT_MAX_BYTES)


def test_rst_title():
    chunks = chunk_document("Kenning\n=======\n\nA knowledge base.\n", "text", "README.rst")
    assert chunks[0].title == "Kenning"


def test_empty_and_blank_texts_have_no_chunks():
    for kind in KINDS:
        assert chunk_document("", kind, "e") == []
        assert chunk_document(" \n\n\t\n", kind, "e") == []


# --- the cap, whatever the input -------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_huge_single_line_is_fast_and_capped(kind):
    text = ("wörd " * 250_000) + "x" * 3_000_000 + "🎉" * 100_000
    started = time.perf_counter()
    chunks = chunk_document(text, kind, "huge")
    assert time.perf_counter() - started < 30.0  # a linear-time guard, not a speed target (benchmarks hold those)
    assert_invariants(text, chunks, DEFAULT_MAX_BYTES)


def test_ten_megabyte_file_is_chunked_in_linear_time():
    # Not a speed target (those live in benchmarks): the bound is ~30x the quiet-machine
    # time, so only a quadratic step (minutes on 10 MB) fails it on a loaded machine.
    unit = NOTE + PY + "\n"
    text = unit * (10_000_000 // len(unit))
    for kind in ("markdown", "code:python"):
        started = time.perf_counter()
        chunks = chunk_document(text, kind, "big")
        assert time.perf_counter() - started < 60.0, kind
        assert all(len(c.text.encode()) <= DEFAULT_MAX_BYTES for c in chunks)


def test_cut_never_splits_a_code_point_or_separates_combining_marks():
    text = "e\u0301" * 2000  # "é" as base + combining acute
    chunks = chunk_document(text, "text", "c.txt", max_bytes=64)
    for chunk in chunks:
        assert len(chunk.text.encode()) <= 64
        assert chunk.text[0] == "e" and chunk.text[-1] == "\u0301"
    assert_invariants(text, chunks, 64)


def test_lone_surrogates_are_replaced():
    chunks = chunk_document("bad \ud800 char\n", "markdown", "s.md")
    assert chunks[0].text == "bad \ufffd char"
    chunks[0].text.encode("utf-8")


def test_crlf_input_counts_lines_like_the_reader():
    chunks = chunk_document("# A\r\n\r\nx\r\n# B\r\ny", "markdown", "c.md")
    assert [(c.line_start, c.line_end) for c in chunks] == [(1, 3), (4, 5)]


def test_tiny_cap_rejected():
    with pytest.raises(ValueError):
        chunk_document("x", "text", "t", max_bytes=3)


_alphabet = st.characters(blacklist_categories=("Cs",))
_markdownish = st.lists(
    st.one_of(
        st.text(_alphabet, max_size=80),
        st.sampled_from(
            [
                "# H",
                "## Sub",
                "```",
                "~~~",
                "---",
                "===",
                "",
                " ",
                "    code",
                "def f():",
                "class A:",
                "@d",
                "}",
                "func (r *R) M() {",
                "- item",
                "# H",
                "\t",
            ]
        ),
        st.text(st.sampled_from("ab 世界🎉\u0301\t"), min_size=100, max_size=3000),
    ),
    max_size=40,
).map("\n".join)

_settings = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@_settings
@given(
    text=st.one_of(st.text(_alphabet, max_size=400), _markdownish),
    kind=st.sampled_from(KINDS),
    max_bytes=st.sampled_from([4, 64, 200, DEFAULT_MAX_BYTES]),
    offset=st.integers(0, 5),
)
def test_property_cap_no_loss_valid_ranges(text, kind, max_bytes, offset):
    chunks = chunk_document(text, kind, "p/x.md", line_offset=offset, max_bytes=max_bytes)
    assert_invariants(text, chunks, max_bytes, offset)
    for chunk in chunks:
        # The claimed lines hold the chunk's text (a cut line holds a part of it).
        assert chunk.text in _lines(
            text.replace("\r\n", "\n").replace("\r", "\n"),
            type(chunk)(0, "", "", "", chunk.line_start - offset, chunk.line_end - offset),
        )


@settings(max_examples=10, deadline=None)
@given(line=st.text(_alphabet, min_size=1, max_size=50), repeat=st.integers(1000, 20000), kind=st.sampled_from(KINDS))
def test_property_huge_single_lines(line, repeat, kind):
    text = (line.replace("\n", " ").replace("\r", " ")) * repeat
    chunks = chunk_document(text, kind, "h", max_bytes=200)
    assert_invariants(text, chunks, 200)
