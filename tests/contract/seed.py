"""Writing test data through the storage interface only (no backend is special)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from kenning.core.types import ChunkDraft, Document, Source
from kenning.storage import api

if TYPE_CHECKING:
    from kenning.core.types import SourceKind

DIM = 16
FINGERPRINT = "contract-model|16|1"


def add_source(store: api.Store, name: str, *, kind: SourceKind = "folder") -> Source:
    return store.sources.add(kind=kind, root=f"/contract/{name}", name=name)


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def add_document(
    store: api.Store,
    source: Source,
    rel_path: str,
    texts: Sequence[str | tuple[str, str]],
    *,
    tags: tuple[str, ...] = (),
    is_test: bool = False,
    updated_at: float | None = 1_700_000_000.0,
    kind: str = "markdown",
    refs: dict[int, set[str]] | None = None,
) -> list[int]:
    """A document whose chunks hold texts (or (title, text) pairs); returns its chunk ids in order."""
    drafts = []
    for ord_, item in enumerate(texts):
        title, text = item if isinstance(item, tuple) else (rel_path, item)
        drafts.append(ChunkDraft(ord_, title, "prose", text, ord_ * 10 + 1, ord_ * 10 + 5))
    body = "\n".join(d.text for d in drafts)
    ext = rel_path.rsplit(".", 1)[-1] if "." in rel_path else ""
    record = Document(
        source_id=source.id,
        rel_path=rel_path,
        sha256=sha(body),
        size=len(body),
        mtime=updated_at or 0.0,
        created_at=updated_at,
        updated_at=updated_at,
        kind=kind,
        title=rel_path,
        tags=tags,
        ext=ext,
        is_test=is_test,
    )
    shas = {d.ord: sha(f"{rel_path}|{d.ord}|{d.text}") for d in drafts}
    doc_id = store.documents.replace(record, drafts, refs or {}, shas)
    return [c.id for c in store.documents.chunks(doc_id)]


def unit(vector: Sequence[float]) -> np.ndarray:
    v = np.asarray(vector, dtype=np.float32)
    return (v / np.linalg.norm(v)).astype(np.float32)


def axis_vector(axis: int, noise: float = 0.0, seed: int = 0) -> np.ndarray:
    """A unit vector near one axis of DIM dimensions."""
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(DIM).astype(np.float32) * noise
    v[axis % DIM] += 1.0
    return unit(v)


def write_vectors(store: api.Store, vectors: dict[int, np.ndarray], fingerprint: str = FINGERPRINT) -> None:
    """Give chunks current vectors (the embedding phase's writes)."""
    store.vectors.prepare(fingerprint, DIM)
    pending = {p.chunk_id: p for p in store.queue.pending_in_order(list(vectors))}
    items = [(cid, pending[cid].input_sha, vec.astype(np.float32).tobytes()) for cid, vec in vectors.items()]
    store.vectors.write(fingerprint, items)
