"""Sentence embeddings with the offline all-MiniLM-L6-v2 of BERTScore: mean-pooled last-layer states, unit length
(how sentence-transformers pools this model). Drafting measures near-duplicate questions with it."""

from __future__ import annotations

import numpy as np

from scoring.metrics.bertscore import BertScoreUnavailableError, computed_once, default_scorer, model_directory

NAME = "all-MiniLM-L6-v2 cosine"


def is_available() -> bool:
    """The model's files are on disk (checked without loading them)."""
    try:
        model_directory()
    except BertScoreUnavailableError:
        return False
    return True


@computed_once(maxsize=4096)
def sentence_embedding(text: str) -> np.ndarray:
    """A unit vector for `text`: the mean of its token states ([CLS] and [SEP] included, as sentence-transformers)."""
    scorer = default_scorer()
    states = scorer.embed(scorer.encode(text))
    pooled = states.mean(axis=0)
    norm = float(np.linalg.norm(pooled))
    return pooled / norm if norm else pooled
