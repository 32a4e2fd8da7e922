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
import sys
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from tokenizers import AddedToken, Tokenizer

from kenning.core.owndirs import PRIVATE_FILE_MODE

MODEL_FILE = "model.onnx"
# The model as onnxruntime optimises it, written once beside it (per onnxruntime version:
# another version may optimise differently) and later loaded with no optimisation to do:
# creating the session of the int8 file is mostly that optimisation (290-390 ms of a new
# query's start-up on this machine, about a third less from this file).  "Extended", not
# "all": the further level only adds layout changes for convolutions (none here), which
# onnxruntime says tie a saved file to the machine that made it; both give the same
# vectors bit for bit (tests/test_embedding.py compares both paths with fastembed's).
# The file is ~90 MB: onnxruntime stores the weights it dequantised as float32.
OPTIMISED_FILE = "model.optimised-ort{version}.onnx"


class BundledRunner:
    """The bundled model's session and tokenizer, with the part of fastembed's text model
    interface the adapter calls (passage_embed, query_embed, token_count)."""

    def __init__(self, model_dir: Path, threads: int | None = None) -> None:
        # The tokenizer is read on a thread of its own while the session is made, which
        # releases the GIL (35-50 ms of a new query's start-up, when a second core is free).
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="kenning-tokenizer") as beside:
            tokenizer = beside.submit(load_tokenizer, model_dir)
            self.session = _session(model_dir, self._options(threads))
            self.tokenizer = tokenizer.result()
        self._input_names = {node.name for node in self.session.get_inputs()}

    @staticmethod
    def _options(threads: int | None) -> ort.SessionOptions:
        options = ort.SessionOptions()
        if threads is not None:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = threads
        # onnxruntime's threads spin after every run by default; on two cores that steals
        # the CPU from the vector scan that follows a query embedding.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
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
    """The model's session: from the optimised copy when there is one, else from the model
    file, writing the copy for the next process (best effort: a read-only or full disk
    only costs the optimisation again)."""
    optimised = model_dir / OPTIMISED_FILE.format(version=ort.__version__)
    if optimised.is_file():
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        try:
            return _load(optimised, options)
        except Exception:  # a damaged copy (onnxruntime raises assorted types): made again
            _remove(optimised)
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    written = optimised.with_name(f".{optimised.name}.{os.getpid()}.tmp")
    options.optimized_model_filepath = str(written)
    try:
        session = _load(model_dir / MODEL_FILE, options)
    except Exception:
        _remove(written)
        options.optimized_model_filepath = ""
        return _load(model_dir / MODEL_FILE, options)
    try:
        os.chmod(written, PRIVATE_FILE_MODE)  # user-only, like the folder's other files
        os.replace(written, optimised)  # whole or not at all, whoever else writes it meanwhile
    except OSError:
        _remove(written)
    else:
        for older in model_dir.glob(OPTIMISED_FILE.format(version="*")):
            if older != optimised:
                _remove(older)  # another onnxruntime version's
    return session


def _load(path: Path, options: ort.SessionOptions) -> ort.InferenceSession:
    return ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


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
