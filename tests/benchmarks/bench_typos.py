"""Typo benchmark: one seeded typo in one content word of every judged query.

For every collection (../shared/data, or the BEIR folders named), each query gets one
typo — a letter left out, two neighbours swapped, a letter doubled, or a letter
replaced by a keyboard neighbour — in one of its content words (not a stopword, at
least MIN_CHARS letters, and a word the index knows: a typo of a word the collection
never uses cannot be restored from it).  A typo that leaves the word's porter stem as
it was ("earths" → "earth") is no typo to the index, and is made again.  A typo that
makes another word the index knows is counted as not restored: known words are never
corrected.  Reported, with the default model, hybrid:

- restored: how often the fuzzy layer, a searched correction or "did you mean" gives
  back the word (same porter stem as the original);
- nDCG@10 of the clean queries, of the typo'd queries searched as typed (corrections
  only suggested), and of the typo'd queries with confident corrections searched
  (the default); the clean queries are run both ways too, since a clean query can
  hold words the index does not know.

    python tests/benchmarks/bench_typos.py [--keep DIR] [--seed N] [FOLDER ...]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
from pathlib import Path

from collections_store import collection_folders, default_embedder, indexed_store

from kenning.search.engine import SearchEngine, SearchOptions
from kenning.search.fts import TermStats
from kenning.search.metrics import ndcg_at
from kenning.search.query import parse_query, words
from kenning.storage.stemming import porter_tokens

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


def restored(result, word: str, typo: str) -> bool:
    fixed = result.corrections.get(typo)
    if fixed is None and result.suggestion:
        said = words(result.suggestion)
        fixed = next((w for w in said if w not in words(result.query)), None)
    return fixed is not None and porter_tokens(fixed) == porter_tokens(word)


def ranked_docs(result) -> list[str]:
    return list(dict.fromkeys(Path(h.path).stem for h in result.hits))


def measure(folder: Path, keep: Path, embedder, seed: int) -> None:
    store, _, queries, qrels = indexed_store(folder, keep, embedder)
    engine = SearchEngine(store, embedder)
    stats, rng = TermStats(store), random.Random(seed)
    plain = SearchOptions(limit=100, search_corrections=False)
    default = SearchOptions(limit=100)
    scores: dict[str, list[float]] = {k: [] for k in ("clean", "clean+corr", "typo", "typo+corr")}
    back = skipped = 0
    for qid, judged in qrels.items():
        if qid not in queries:
            continue
        made = typo_query(queries[qid], stats, rng)
        if made is None:
            skipped += 1
            continue
        text, word, typo = made
        scores["clean"].append(ndcg_at(ranked_docs(engine.search(queries[qid], plain)), judged, 10))
        scores["clean+corr"].append(ndcg_at(ranked_docs(engine.search(queries[qid], default)), judged, 10))
        as_typed = engine.search(text, plain)
        corrected = engine.search(text, default)
        scores["typo"].append(ndcg_at(ranked_docs(as_typed), judged, 10))
        scores["typo+corr"].append(ndcg_at(ranked_docs(corrected), judged, 10))
        back += restored(as_typed, word, typo) or restored(corrected, word, typo)
    n = len(scores["clean"])
    store.close()
    print(f"\n{folder.name}: {n} queries with a typo ({skipped} had no eligible word), seed {seed}")
    print(f"  restored by fuzzy / correction / did-you-mean: {back}/{n} = {100 * back / max(n, 1):.1f}%")
    print(
        "  nDCG@10 hybrid   clean {:.4f}  clean (corrections searched) {:.4f}".format(
            statistics.fmean(scores["clean"]), statistics.fmean(scores["clean+corr"])
        )
    )
    print(
        "                   typo'd as typed {:.4f}  typo'd (corrections searched) {:.4f}".format(
            statistics.fmean(scores["typo"]), statistics.fmean(scores["typo+corr"])
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*")
    parser.add_argument("--keep", default="/tmp/kenning-bench-collections", help="where indexed stores are kept")
    parser.add_argument("--seed", type=int, default=12)
    args = parser.parse_args()
    embedder = default_embedder()
    for folder in collection_folders(args.folders):
        measure(folder, Path(args.keep), embedder, args.seed)


if __name__ == "__main__":
    main()
