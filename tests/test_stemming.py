"""The word index's tokenizer called directly gives the terms the index itself stores.

storage.stemming.tokenize calls FTS5's porter unicode61 tokenizer directly (the team
store's writer tokenizes every chunk with it); the terms must be exactly those a row
of the scratch FTS5 table holds, or the two backends would rank differently."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.storage import stemming


def _outcome(tokenize, text: str) -> object:
    """The terms, or the error raised (text that is not UTF-8 is refused either way)."""
    try:
        return tokenize(text)
    except UnicodeError as exc:
        return type(exc)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_any_text_gives_the_terms_the_index_stores(text):
    assert stemming.tokenize(text) == stemming._tokenize_through_table(text)


def test_the_awkward_cases_give_the_terms_the_index_stores():
    cases = [
        "",
        "a\x00b nul\x00 inside",
        "lone \ud800 surrogate",  # not UTF-8: through the table
        "x" * 40_000 + " tail words",  # a term longer than FTS5 keeps whole
        "é" * 20_000,
        "Running runners' e-mail addresses: foo@bar.com ÉCOLE naïve 東京都 x_y 3.14 αβγ",
        "\u200b\u00ad soft\u00adhyphen zero\u200bwidth ﬁ ligature Ⅻ ①",
    ]
    for text in cases:
        assert _outcome(stemming.tokenize, text) == _outcome(stemming._tokenize_through_table, text), text[:40]


def test_real_text_gives_the_terms_the_index_stores():
    root = Path(sysconfig.get_paths()["stdlib"]) / "email"
    files = sorted(root.rglob("*.py"))[:40]
    assert files
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert stemming.tokenize(text) == stemming._tokenize_through_table(text), path.name


def test_the_scratch_table_is_made_only_for_text_that_goes_through_it():
    # A fresh interpreter: this module's other tests have made the table already.
    probe = (
        "from kenning.storage import stemming\n"
        "assert stemming.tokenize('parse arguments') == ('pars', 'argument')\n"
        "assert stemming.porter_stems(['running', 'Runners'])['Runners'] == ('runner',)\n"
        "assert not stemming._with_table, 'the tokenizer made the scratch table'\n"
        "assert stemming.porter_stems(['e-mail'])['e-mail'] == ('e', 'mail')\n"  # a row of the table
        "assert stemming._with_table\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
