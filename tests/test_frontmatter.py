"""Front matter: metadata extraction, tolerance of bad YAML, line offsets."""

from __future__ import annotations

import datetime as dt

import pytest

from kenning.ingest.frontmatter import parse_front_matter, to_epoch

UTC = dt.timezone.utc


def _epoch(*parts) -> float:
    return dt.datetime(*parts, tzinfo=UTC).timestamp()


def test_title_tags_dates_and_body():
    text = (
        "---\n"
        "title: Ranking notes\n"
        "tags: [Search, '#RRF', search]\n"
        "date: 2024-03-01\n"
        "updated: 2024-03-05T10:30:00Z\n"
        "---\n"
        "# Heading\n"
        "Body.\n"
    )
    fm = parse_front_matter(text)
    assert fm.title == "Ranking notes"
    assert fm.tags == ("search", "rrf")
    assert fm.date == _epoch(2024, 3, 1)
    assert fm.updated == _epoch(2024, 3, 5, 10, 30)
    assert fm.body == "# Heading\nBody.\n"
    assert fm.body_line_offset == 6
    assert fm.meta["title"] == "Ranking notes"
    # Line numbers stay true: body line 1 is file line offset + 1.
    assert text.split("\n")[fm.body_line_offset] == "# Heading"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("tags: 'alpha, Beta  #gamma'", ("alpha", "beta", "gamma")),
        ("tags: alpha #a YAML comment", ("alpha",)),
        ("tags: solo", ("solo",)),
        ("tags:\n  - One\n  - two three", ("one", "two", "three")),
        ("tag: single", ("single",)),
        ("tags: 2024", ("2024",)),
        ("tags: {a: 1}", ()),
        ("tags:", ()),
        ("tags: #Project #ops", ("project", "ops")),  # a YAML comment, but meant as tags
        ("tags: # a remark", ()),
    ],
)
def test_tag_forms(raw, expected):
    assert parse_front_matter(f"---\n{raw}\n---\nbody").tags == expected


@pytest.mark.parametrize(
    ("raw", "key", "expected"),
    [
        ("created: 2023-01-02", "date", _epoch(2023, 1, 2)),
        ("date: 2023-01-02 08:00:00", "date", _epoch(2023, 1, 2, 8)),
        ("date: '2023-01-02T08:00:00+02:00'", "date", _epoch(2023, 1, 2, 6)),
        ("date: '2023-01-02'", "date", _epoch(2023, 1, 2)),
        ("modified: 2023-05-06", "updated", _epoch(2023, 5, 6)),
        ("lastmod: '2023-05-06T00:00:00Z'", "updated", _epoch(2023, 5, 6)),
        ("date: not a date", "date", None),
        ("date: 1700000000", "date", 1700000000.0),
    ],
)
def test_date_forms(raw, key, expected):
    fm = parse_front_matter(f"---\n{raw}\n---\n")
    assert getattr(fm, key) == expected


@pytest.mark.parametrize("day", ["2024-13-45", "2024-02-30", "2024-02-30 10:00:00", "99999-01-01"])
def test_an_impossible_date_loses_only_the_date(day):
    text = f"---\ntitle: Bad date\ntags: [ops]\ndate: {day}\nupdated: 2024-03-05\n---\nbody\n"
    fm = parse_front_matter(text)
    assert fm.title == "Bad date" and fm.tags == ("ops",) and fm.body == "body\n"
    assert fm.date is None and fm.updated == _epoch(2024, 3, 5)


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: [unclosed\n---\nbody\n",  # malformed YAML
        "---\n- a list\n- not a mapping\n---\nbody\n",
        "---\njust a string\n---\nbody\n",
        "---\n\tbad: tab indentation\n---\n",
        # Prose between two rules, not metadata: a colon line among sentences reads as no key.
        "---\nNote: this is: important.\nRemember to vacuum the tables.\n---\nbody\n",
    ],
)
def test_malformed_or_non_mapping_keeps_whole_text(text):
    fm = parse_front_matter(text)
    assert fm.meta == {} and fm.body == text and fm.body_line_offset == 0
    assert fm.title is None and fm.tags == () and fm.date is None


@pytest.mark.parametrize(
    "text",
    [
        "# No front matter\n---\ntitle: x\n---\n",
        "---\ntitle: never closed\n",
        " ---\ntitle: x\n---\n",
        "",
    ],
)
def test_no_front_matter(text):
    fm = parse_front_matter(text)
    assert fm.meta == {} and fm.body == text and fm.body_line_offset == 0


def test_dots_close_and_offsets_without_trailing_newline():
    fm = parse_front_matter("---\ntitle: T\n...")
    assert fm.title == "T" and fm.body == "" and fm.body_line_offset == 3
    fm = parse_front_matter("---\ntitle: T\n...\n\nText")
    assert fm.body == "\nText" and fm.body_line_offset == 3


def test_empty_block_is_front_matter():
    fm = parse_front_matter("---\n---\nbody")
    assert fm.meta == {} and fm.body == "body" and fm.body_line_offset == 2


def test_non_string_keys_and_title():
    fm = parse_front_matter("---\n1: one\ntitle: 42\n---\n")
    assert fm.meta["1"] == "one" and fm.title == "42"


def test_to_epoch_rejects_bools_and_garbage():
    assert to_epoch(True) is None
    assert to_epoch(["2024-01-01"]) is None
    assert to_epoch(dt.datetime(2024, 1, 1, 12)) == _epoch(2024, 1, 1, 12)


def test_an_unquoted_colon_loses_nothing():
    text = (
        "---\n"
        "title: Postgres: tuning notes\n"
        "# a comment\n"
        "tags:\n"
        "  - db\n"
        "  - 'Perf'\n"
        "summary: a long value\n"
        "  continued on the next line\n"
        'keywords: [vacuum, "wal"]\n'
        "date: 2024-03-01\n"
        "---\n"
        "Body.\n"
    )
    fm = parse_front_matter(text)
    assert fm.title == "Postgres: tuning notes"
    assert fm.tags == ("db", "perf", "vacuum", "wal")
    assert fm.date == _epoch(2024, 3, 1)
    assert fm.body == "Body.\n" and fm.body_line_offset == 11
    assert fm.problem is not None and "line by line" in fm.problem
    assert "Postgres" not in fm.problem  # PyYAML's words and a line number, never the note's text


def test_valid_yaml_reports_no_problem():
    assert parse_front_matter("---\ntitle: 'a: b'\n---\n").problem is None


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("tags: a: b", ("a:", "b")),  # the whole value, split as tags always are
        ("tags: [one, two: three]", ("one", "two:", "three")),
        ("tags: {x: [", ()),  # needs real YAML: that key alone is dropped
    ],
)
def test_line_wise_tags(raw, expected):
    fm = parse_front_matter(f"---\ntitle: T: t\n{raw}\n---\n")
    assert fm.title == "T: t" and fm.tags == expected
