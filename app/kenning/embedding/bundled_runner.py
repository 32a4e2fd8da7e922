"""The default model run with onnxruntime and tokenizers alone, as fastembed runs it.

Issue #27 item 4 asked that loading the bundled model import only what a local ONNX
model needs.  Inside fastembed that is impossible: every module a text model is made
of imports, at module level, huggingface_hub, httpx, requests, tqdm and loguru
(common.model_management, through text.text_embedding_base), PIL (common.types, and
fastembed.image.transform through common.preprocessor_utils) -- about 650 modules,
measured 0.5-0.8 s of a new query's 2 s and tens of MiB in every process that keeps
the model (app, service, `kenning mcp`).  A local model calls none of it.

So the default model -- one fixed, shipped set of files -- is run here, doing exactly
what fastembed's CustomTextEmbedding does for a mean-pooled, normalised model (fastembed
0.9: common.preprocessor_utils.load_tokenizer, common.onnx_model._load_onnx_model,
text.onnx_text_model.onnx_embed, common.utils.mean_pooling and normalize), so its
vectors are bit for bit those fastembed gives (tests/test_embedding.py compares them on
the same texts, and an index written by an older Kenning stays valid: the fingerprint
does not change).  Catalog models are still loaded by fastembed (fastembed_adapter).
"""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from tokenizers import AddedToken, Tokenizer

from kenning.core.logger import get_logger
from kenning.core.owndirs import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE

log = get_logger(__name__)

MODEL_FILE = "model.onnx"
# The model as onnxruntime optimises it, saved once in a folder of its own beside the model
# (per onnxruntime version: another version may optimise differently) and later loaded
# with no optimisation to do: creating the session of the int8 file is mostly that
# optimisation.  The folder holds the optimised graph (~55 kB), its weights in a file of
# their own (~90 MB: onnxruntime stores the weights it dequantised as float32), which
# onnxruntime maps into memory instead of parsing and copying them, and Kenning's note of
# what it wrote.  Measured (docs/architecture.md §11, round 9): the session's creation
# 190-210 ms CPU from the earlier single-file copy, 60-95 from this folder, and the
# process 68 MiB smaller after loading (117 against 185 MiB resident).  "Extended", not
# "all": the further level only adds layout changes for convolutions (none here), which
# onnxruntime says tie a saved file to the machine that made it.  Every path gives the
# same vectors bit for bit (tests/test_embedding.py compares them with fastembed's).
OPTIMISED_DIR = "optimised-ort{version}-mapped"  # "-mapped": this layout, whatever others write
OPTIMISED_GRAPH = "model.onnx"
OPTIMISED_WEIGHTS = "weights.bin"  # named inside the graph, relative to its folder
OPTIMISED_NOTE = "kenning.json"
# The earlier copy (one 90 MB file beside the model): removed when a folder is written.
OLD_OPTIMISED_FILE = "model.optimised-ort{version}.onnx"
# Word pieces ([CLS], twelve of the vocabulary, [SEP]) run through the session that
# optimised the model and through the copy it saved: the copy is kept only if both give
# the same output bit for bit.
_PROBE_IDS = (101, *range(2000, 2012), 102)


class BundledRunner:
    """The bundled model's session and tokenizer, with the part of fastembed's text model
    interface the adapter calls (passage_embed, query_embed, token_count)."""

    def __init__(self, model_dir: Path, threads: int | None = None, *, few_runs: bool = False) -> None:
        """few_runs: the process embeds a query or two and ends (a command-line search):
        the session is made without packing the weights for fast runs (see _options)."""
        # The tokenizer is read on a thread of its own while the session is made, which
        # releases the GIL (35-50 ms of a new query's start-up, when a second core is free).
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kenning-tokenizer") as beside:
            tokenizer = beside.submit(load_tokenizer, model_dir)
            self.session = _session(model_dir, self._options(threads, few_runs))
            self.tokenizer = tokenizer.result()
        self._input_names = {node.name for node in self.session.get_inputs()}

    @staticmethod
    def _options(threads: int | None, few_runs: bool = False) -> ort.SessionOptions:
        options = ort.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = threads
        # onnxruntime's threads spin after every run by default; on two cores that steals
        # the CPU from the vector scan that follows a query embedding.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        if few_runs:
            # Packing the weights into the layout of onnxruntime's fast matrix products is
            # most of creating the session from the optimised copy (measured 60-95 against
            # 12-14 ms CPU), and pays for itself only over many runs: unpacked, one query
            # runs 4-15 ms slower (8 to 256 word pieces), the first run ~14 ms.  The
            # products then add in another order: vectors within 1e-7 of the packed
            # session's (1 - cosine <= 6e-8 measured; tests/test_embedding.py holds 1e-6).
            options.add_session_config_entry("session.disable_prepacking", "1")
        return options

    def passage_embed(self, texts: Iterable[str], batch_size: int = 256) -> Iterator[np.ndarray]:
        items = list(texts)
        for start in range(0, len(items), batch_size):
            yield from self._embed(items[start : start + batch_size])

    def query_embed(self, texts: Iterable[str]) -> Iterator[np.ndarray]:
        return self.passage_embed(texts)  # the default model has no query prefix

    def token_count(self, text: str) -> int:
        return sum(sum(encoding.attention_mask) for encoding in self.tokenizer.encode_batch([text]))

    def _embed(self, batch: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(batch)
        input_ids = np.array([e.ids for e in encoded])
        attention_mask = np.array([e.attention_mask for e in encoded])
        inputs: dict[str, np.ndarray] = {"input_ids": np.array(input_ids, dtype=np.int64)}
        if "attention_mask" in self._input_names:
            inputs["attention_mask"] = np.array(attention_mask, dtype=np.int64)
            attention_mask = inputs["attention_mask"]
        if "token_type_ids" in self._input_names:
            inputs["token_type_ids"] = np.array([np.zeros(len(e), dtype=np.int64) for e in input_ids], dtype=np.int64)
        output: np.ndarray = self.session.run(None, inputs)[0]
        pooled = _normalize(_mean_pooling(output, attention_mask))
        return pooled.astype(output.dtype, copy=False) if np.issubdtype(output.dtype, np.floating) else pooled


def _session(model_dir: Path, options: ort.SessionOptions) -> ort.InferenceSession:
    """The model's session: from the optimised copy when Kenning's note says it is this
    model's and this onnxruntime's, else from the model file, writing the copy for the
    next process (best effort: a read-only or full disk only costs the optimisation
    again).  The copy is a file in the user's cache: anything that does not match the
    note, or does not load, is put aside and made again, never the model's failure."""
    folder = model_dir / OPTIMISED_DIR.format(version=ort.__version__)
    expected = _expected_note(model_dir)
    if _matches_note(folder, expected):
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            return _load(folder / OPTIMISED_GRAPH, options)
        except Exception:  # a damaged copy (onnxruntime raises assorted types): made again
            pass
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    if folder.exists() or folder.is_symlink():
        _discard(folder)
    return _optimise(model_dir, folder, options, expected)


def _optimise(model_dir: Path, folder: Path, options: ort.SessionOptions, note: dict[str, Any]) -> ort.InferenceSession:
    """A session optimising the model file, saving the result into `folder` when it
    gives the first session's vectors: written in a private temporary folder and renamed
    into place whole (two processes doing it at once both end with a whole copy)."""
    model = model_dir / MODEL_FILE
    try:
        written = model_dir / f".{folder.name}.{os.getpid()}.{time.monotonic_ns()}.tmp"
        os.mkdir(written, PRIVATE_DIR_MODE)
        os.chmod(written, PRIVATE_DIR_MODE)
    except OSError:  # a read-only cache: optimised in memory every time
        return _load(model, options)
    options.optimized_model_filepath = str(written / OPTIMISED_GRAPH)
    options.add_session_config_entry("session.optimized_model_external_initializers_file_name", OPTIMISED_WEIGHTS)
    options.add_session_config_entry("session.optimized_model_external_initializers_min_size_in_bytes", "1024")
    try:
        session = _load(model, options)
    except Exception:
        _discard(written)
        options.optimized_model_filepath = ""
        return _load(model, options)
    try:
        _keep_if_same(session, written, folder, note, _packing(options))
    finally:
        _discard(written)  # gone already when it was renamed into place
    return session


def _keep_if_same(
    session: ort.InferenceSession, written: Path, folder: Path, note: dict[str, Any], packing: bool
) -> None:
    """Rename the copy saved in `written` to `folder` with its note, if it computes what
    `session` computes (packing: whether `session` packed its weights: the product's order
    depends on it); then remove other versions' copies."""
    check = ort.SessionOptions()
    check.intra_op_num_threads = check.inter_op_num_threads = 1
    check.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    if not packing:
        check.add_session_config_entry("session.disable_prepacking", "1")
    try:
        saved = _load(written / OPTIMISED_GRAPH, check)
        if not np.array_equal(_probe(session), _probe(saved)):
            log.warning("the optimised model saved in %s computes otherwise: not kept", written)
            return
        del saved
        for name in (OPTIMISED_GRAPH, OPTIMISED_WEIGHTS):
            path = written / name
            os.chmod(path, PRIVATE_FILE_MODE)  # user-only, like the folder's other files
            note[name] = path.stat().st_size
        with open(written / OPTIMISED_NOTE, "w", encoding="utf-8") as file:
            json.dump(note, file)
        os.chmod(written / OPTIMISED_NOTE, PRIVATE_FILE_MODE)
        os.rename(written, folder)  # fails if another process renamed its copy first: theirs stays
    except Exception as exc:  # a full disk, a race lost, onnxruntime refusing its own file
        log.info("the optimised model saved in %s is not kept: %s", written, exc)
        return
    model_dir = folder.parent
    for older in [
        *model_dir.glob(OPTIMISED_DIR.format(version="*")),
        *model_dir.glob(OLD_OPTIMISED_FILE.format(version="*")),
    ]:
        if older != folder:
            _discard(older)  # another onnxruntime version's, or the earlier single file


def _packing(options: ort.SessionOptions) -> bool:
    try:
        return str(options.get_session_config_entry("session.disable_prepacking")) != "1"
    except RuntimeError:  # not set
        return True


def _probe(session: ort.InferenceSession) -> np.ndarray:
    """The session's output for a fixed input, as any session of this model is fed."""
    ids = np.array([_PROBE_IDS], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    names = {node.name for node in session.get_inputs()}
    output: np.ndarray = session.run(None, {name: value for name, value in feed.items() if name in names})[0]
    return output


def _expected_note(model_dir: Path) -> dict[str, Any]:
    """What Kenning's note in a copy made from this model file by this onnxruntime says:
    the model folder's name (it names the weights' checksum: models.BundledFiles), the
    model file's size and onnxruntime's version."""
    try:
        size = os.stat(model_dir / MODEL_FILE).st_size
    except OSError:
        size = -1
    return {"model": model_dir.name, "source_size": size, "onnxruntime": ort.__version__}


def _matches_note(folder: Path, expected: dict[str, Any]) -> bool:
    """True when folder is a real folder of this user's holding a copy whose note is the
    expected one and whose files are this user's regular files of the sizes it names."""
    try:
        if not _own(os.lstat(folder), stat.S_ISDIR):
            return False
        note_path = folder / OPTIMISED_NOTE
        if not _own(os.lstat(note_path), stat.S_ISREG):
            return False
        with open(note_path, encoding="utf-8") as file:
            note = json.loads(file.read(65536))
        if not isinstance(note, dict) or any(note.get(key) != value for key, value in expected.items()):
            return False
        for name in (OPTIMISED_GRAPH, OPTIMISED_WEIGHTS):
            info = os.lstat(folder / name)
            if not _own(info, stat.S_ISREG) or note.get(name) != info.st_size:
                return False
    except (OSError, ValueError):
        return False
    return True


def _own(info: os.stat_result, kind: Any) -> bool:
    uid = getattr(os, "getuid", None)
    return bool(kind(info.st_mode)) and (uid is None or info.st_uid == uid())


def _discard(path: Path) -> None:
    """Remove a copy (a folder, a file, a link), as far as possible."""
    try:
        if path.is_dir() and not path.is_symlink():
            import shutil  # only when a copy is put aside (shutil imports bz2 and lzma)

            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass


def _load(path: Path, options: ort.SessionOptions) -> ort.InferenceSession:
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


def _mean_pooling(embeddings: np.ndarray, attention_mask: np.ndarray) -> np.ndarray:
    """The average of the real tokens' rows, summed in float64 (as fastembed does)."""
    summed = np.sum(embeddings, axis=1, where=attention_mask[:, :, np.newaxis].astype(bool), dtype=np.float64)
    counts = np.sum(attention_mask, axis=1, keepdims=True)
    pooled: np.ndarray = summed / np.maximum(counts, 1e-9)
    return pooled


def _normalize(rows: np.ndarray) -> np.ndarray:
    norm = np.maximum(np.linalg.norm(rows, ord=2, axis=1, keepdims=True), 1e-12)
    normalized: np.ndarray = rows / norm
    return normalized


def load_tokenizer(model_dir: Path) -> Tokenizer:
    """tokenizer.json set up as fastembed sets it up: truncated at the stricter of
    tokenizer_config.json's limits, special tokens added, padded to the batch's longest."""
    config = _json(model_dir / "config.json", optional=True)
    tokenizer_config = _json(model_dir / "tokenizer_config.json")
    tokens_map = _json(model_dir / "special_tokens_map.json", optional=True)
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    truncation = tokenizer.truncation or {}
    tokenizer.enable_truncation(
        max_length=_max_context(tokenizer_config, model_dir),
        direction=tokenizer_config.get("truncation_side") or truncation.get("direction", "right"),
    )
    for value in tokens_map.values():
        for token in value if isinstance(value, list) else [value]:
            if isinstance(token, str):
                tokenizer.add_special_tokens([token])
            elif isinstance(token, dict):
                tokenizer.add_special_tokens([AddedToken(**token)])
    padding = tokenizer.padding or {}
    pad_token = padding.get("pad_token") or tokenizer_config.get("pad_token")
    if pad_token is None:
        raise ValueError(f"Could not find a pad token for {model_dir}")
    pad_id = padding.get("pad_id", config.get("pad_token_id"))
    if pad_id is None:
        pad_id = tokenizer.token_to_id(pad_token)
    if pad_id is None:
        raise ValueError(f"Could not resolve an id for the pad token {pad_token!r} in {model_dir}")
    tokenizer.enable_padding(
        direction=tokenizer_config.get("padding_side") or padding.get("direction", "right"),
        pad_id=pad_id,
        pad_type_id=padding.get("pad_type_id", 0),
        pad_token=pad_token,
        pad_to_multiple_of=padding.get("pad_to_multiple_of"),
        length=None,
    )
    return tokenizer


def _max_context(tokenizer_config: dict[str, Any], model_dir: Path) -> int:
    limits = [
        value
        for value in (tokenizer_config.get("model_max_length"), tokenizer_config.get("max_length"))
        if isinstance(value, int) and not isinstance(value, bool) and 0 < value <= sys.maxsize
    ]
    if not limits:
        raise ValueError(f"Could not determine the maximum context length for {model_dir}")
    return min(limits)


def _json(path: Path, *, optional: bool = False) -> dict[str, Any]:
    if optional and not path.exists():
        return {}
    with open(path, encoding="utf-8") as file:
        loaded: dict[str, Any] = json.load(file)
    return loaded
