"""Typo benchmark: one seeded typo in one content word of every judged query.

For every collection (../shared/data, or the BEIR folders named), each query gets one
typo — a letter left out, two neighbours swapped, a letter doubled, or a letter
replaced by a keyboard neighbour — in one of its content words (not a stopword, at
least MIN_CHARS letters, and a word the index knows: a typo of a word the collection
never uses cannot be restored from it).  A typo that leaves the word's porter stem as
it was ("earths" → "earth") is no typo to the index, and is made again.  A typo that
makes another word the index knows is counted as not restored: known words are never
corrected.  Reported, with the default model, in every mode (lexical, vector, hybrid; the
shipped defaults of `kenning eval`, so the clean rows are its figures):

- restored: how often the fuzzy layer, a searched correction or "did you mean" gives
  back the word (same porter stem as the original);
- nDCG@10 and Recall@100 of the clean queries, of the typo'd queries searched as typed
  (corrections only suggested), and of the typo'd queries with confident corrections
  searched (the default); the clean queries are run both ways too, since a clean query
  can hold words the index does not know.  Corrections are searched in the modes
  `engine.CORRECTED_MODES` names; in the others both columns are the same search.

    python tests/benchmarks/bench_typos.py [--keep DIR] [--seed N] [--modes M ...] [--json FILE] [FOLDER ...]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import re
import statistics
from pathlib import Path

from collections_store import collection_folders, default_embedder, indexed_store

from kenning import TYPE_CHECKING
from kenning.cli.evaluate import default_options, ranked_documents
from kenning.search.engine import SearchEngine
from kenning.search.fts import TermStats
from kenning.search.metrics import ndcg_at, recall_at
from kenning.search.query import parse_query, words
from kenning.storage.stemming import porter_tokens

if TYPE_CHECKING:
    from kenning.core.types import SearchMode

MIN_CHARS = 4
KINDS = ("omission", "transposition", "doubled", "neighbour")
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours() -> dict[str, str]:
    out: dict[str, str] = {}
    for r, row in enumerate(_ROWS):
        for c, ch in enumerate(row):
            near = [row[c - 1] if c else "", row[c + 1] if c + 1 < len(row) else ""]
            for other in (r - 1, r + 1):
                if 0 <= other < len(_ROWS):
                    near += [_ROWS[other][k] for k in (c - 1, c, c + 1) if 0 <= k < len(_ROWS[other])]
            out[ch] = "".join(n for n in near if n)
    return out


NEIGHBOURS = _neighbours()


def make_typo(word: str, kind: str, rng: random.Random) -> str:
    for _ in range(50):
        i = rng.randrange(len(word))
        if kind == "omission":
            typo = word[:i] + word[i + 1 :]
        elif kind == "transposition" and i + 1 < len(word):
            typo = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        elif kind == "doubled":
            typo = word[: i + 1] + word[i] + word[i + 1 :]
        elif kind == "neighbour" and word[i] in NEIGHBOURS:
            typo = word[:i] + rng.choice(NEIGHBOURS[word[i]]) + word[i + 1 :]
        else:
            continue
        if typo != word:
            return typo
    return word[:-1]


def typo_query(text: str, stats: TermStats, rng: random.Random) -> tuple[str, str, str] | None:
    """(typo'd query, original word, typo) or None when no word qualifies."""
    content = [w for w in parse_query(text).content_terms if w.isalpha() and len(w) >= MIN_CHARS]
    eligible = [w for w in dict.fromkeys(content) if stats.known(w)]
    if not eligible:
        return None
    word = rng.choice(eligible)
    for _ in range(20):
        typo = make_typo(word, rng.choice(KINDS), rng)
        if porter_tokens(typo) != porter_tokens(word):  # else the index sees no typo ("earths" → "earth")
            break
    pattern = re.compile(r"(?<![^\W_])" + re.escape(word) + r"(?![^\W_])", re.IGNORECASE)
    return pattern.sub(typo, text, count=1), word, typo


COLUMNS = ("clean", "clean+corr", "typo", "typo+corr")
MODES: tuple[SearchMode, ...] = ("lexical", "vector", "hybrid")


def restored(result, word: str, typo: str) -> bool:
    meant = porter_tokens(word)
    fixed = result.corrections.get(typo)
    if fixed is not None:
        return porter_tokens(fixed) == meant
    # "Did you mean" rewrites the question word for word (other words may be corrected too,
    # and the word meant may be written elsewhere in it): read what stands where the typo was.
    offered = zip(words(result.query), words(result.suggestion or ""))
    return any(typed == typo.lower() and porter_tokens(said) == meant for typed, said in offered)


def mode_figures(engine: SearchEngine, typoed: list[tuple[str, str, str, str, dict]], mode: SearchMode) -> dict:
    """One mode's figures over the typo'd queries: (query, typo'd query, word, typo, judged)."""
    default = default_options(mode)
    plain = dataclasses.replace(default, search_corrections=False)
    ndcg: dict[str, list[float]] = {k: [] for k in COLUMNS}
    recall: dict[str, list[float]] = {k: [] for k in COLUMNS}
    back = 0
    for query, text, word, typo, judged in typoed:
        for column, searched, options in (
            ("clean", query, plain),
            ("clean+corr", query, default),
            ("typo", text, plain),
            ("typo+corr", text, default),
        ):
            ranked = ranked_documents(engine, searched, options)
            ndcg[column].append(ndcg_at(ranked, judged, 10))
            recall[column].append(recall_at(ranked, judged, 100))
        # Corrections and suggestions do not depend on the depth: one short search each.
        shallow = dataclasses.replace(default, limit=10)
        as_typed, corrected = (
            engine.search(text, dataclasses.replace(shallow, search_corrections=False)),
            engine.search(text, shallow),
        )
        back += restored(as_typed, word, typo) or restored(corrected, word, typo)
    return {
        "restored": back,
        "ndcg@10": {k: statistics.fmean(v) for k, v in ndcg.items()},
        "recall@100": {k: statistics.fmean(v) for k, v in recall.items()},
    }


def measure(folder: Path, keep: Path, embedder, seed: int, modes: tuple[SearchMode, ...] = MODES) -> dict:
    """The collection's typo'd queries (one seeded typo each) and every mode's figures."""
    store, _, queries, qrels = indexed_store(folder, keep, embedder)
    try:
        engine = SearchEngine(store, embedder)
        stats, rng = TermStats(store), random.Random(seed)
        typoed, skipped = [], 0
        for qid, judged in qrels.items():
            if qid not in queries:
                continue
            made = typo_query(queries[qid], stats, rng)
            if made is None:
                skipped += 1
                continue
            typoed.append((queries[qid], *made, judged))
        figures = {mode: mode_figures(engine, typoed, mode) for mode in modes}
    finally:
        store.close()
    return {"collection": folder.name, "seed": seed, "queries": len(typoed), "skipped": skipped, "modes": figures}


def report(measured: dict) -> None:
    n = measured["queries"]
    print(
        f"\n{measured['collection']}: {n} queries with a typo ({measured['skipped']} had no eligible word), seed {measured['seed']}"
    )
    print("  nDCG@10 (R@100)  clean            clean, corrected  typo'd           typo'd, corrected  restored")
    for mode, fig in measured["modes"].items():
        cells = "  ".join(f"{fig['ndcg@10'][k]:.4f} ({fig['recall@100'][k]:.4f})" for k in COLUMNS)
        print(f"  {mode:<8} {cells}  {fig['restored']}/{n} = {100 * fig['restored'] / max(n, 1):.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*")
    parser.add_argument("--keep", default="/tmp/kenning-bench-collections", help="where indexed stores are kept")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args()
    embedder = default_embedder()
    measured = []
    for folder in collection_folders(args.folders):
        measured.append(measure(folder, Path(args.keep), embedder, args.seed, tuple(args.modes)))
        report(measured[-1])
        if args.json:
            args.json.write_text(json.dumps(measured, indent=1))


if __name__ == "__main__":
    main()
