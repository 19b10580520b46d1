"""Rejecting drafted questions that repeat a prompt example or an existing question (pure, no Django).

A small model asked for one question often copies an example of its prompt word for word, or asks again what the
paper already has; such a draft is rejected with its reason instead of entering the queue. Exact repeats are
caught on normalised text; near-duplicates by the cosine of sentence embeddings. The embedder is the offline
all-MiniLM-L6-v2 that BERTScore uses, registered by the scoring app (`question_embedder_register`, from its
AppConfig.ready: the core imports nothing of scoring); without one, a word-sequence ratio stands in.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np

# Cosine of mean-pooled MiniLM embeddings at or above which two questions ask the same thing. Measured: an example
# copied with one name changed ("WMT14 En-De" → "En-Fr") 0.99; the 39 default examples pairwise at most 0.79;
# "accuracy of model A" against "… of model B" 0.88 (different questions, kept). The lexical stand-in (no
# embedder installed) is difflib's ratio over words, with its own threshold.
NEAR_DUPLICATE_COSINE = 0.92
NEAR_DUPLICATE_RATIO = 0.9

_QUESTION_LINE = re.compile(r"^\s*question\s*[:：]\s*(.+?)\s*$", re.IGNORECASE | re.MULTILINE)
_NON_WORD = re.compile(r"[^\w]+")

Embedder = Callable[[str], np.ndarray]
_EMBEDDER: dict[str, Embedder] = {}


def question_embedder_register(embed: Embedder, *, name: str) -> None:
    """Install the sentence embedder near-duplicates are measured with (a unit vector per text)."""
    _EMBEDDER.clear()
    _EMBEDDER[name] = functools.lru_cache(maxsize=4096)(embed)


def question_embedder_name() -> str:
    """The installed embedder's name, or 'lexical' when none is installed."""
    return next(iter(_EMBEDDER), "lexical")


def normalised(text: str) -> str:
    """Lower case, a leading 'Question:' dropped, punctuation and spacing folded: what an exact repeat shares."""
    text = re.sub(r"^\s*question\s*[:：]\s*", "", text or "", flags=re.IGNORECASE)
    return _NON_WORD.sub(" ", text.lower()).strip()


def example_questions(template_text: str) -> list[str]:
    """Every 'Question: …' line of a prompt template (its examples, in every reasoning type's block)."""
    return [match.group(1) for match in _QUESTION_LINE.finditer(template_text or "")]


@dataclass(frozen=True)
class Duplicate:
    """Why a draft was rejected: what it repeats, how closely, and of which kind (example or existing)."""

    kind: str  # "prompt example" or "existing question"
    matched: str
    similarity: float
    measure: str  # "exact", or the embedder's name

    @property
    def reason(self) -> str:
        how = "word for word" if self.measure == "exact" else f"near-duplicate, {self.measure} {self.similarity:.2f}"
        article = "an" if self.kind[0] in "aeiou" else "a"
        return f"repeats {article} {self.kind} ({how}): {self.matched!r}"


def _similarity(a: str, b: str) -> tuple[float, float]:
    """(similarity, threshold) of two questions with the installed embedder, else the lexical ratio."""
    if _EMBEDDER:
        embed = next(iter(_EMBEDDER.values()))
        return float(np.dot(embed(normalised(a)), embed(normalised(b)))), NEAR_DUPLICATE_COSINE
    ratio = difflib.SequenceMatcher(None, normalised(a).split(), normalised(b).split()).ratio()
    return ratio, NEAR_DUPLICATE_RATIO


def duplicate_of(question: str, *, examples: Sequence[str], existing: Iterable[str]) -> Duplicate | None:
    """The first prompt example or existing question `question` repeats (exactly or nearly), else None."""
    target = normalised(question)
    if not target:
        return None
    candidates = [("prompt example", text) for text in examples] + [("existing question", t) for t in existing]
    candidates = [(kind, text) for kind, text in candidates if normalised(text)]
    for kind, text in candidates:
        if normalised(text) == target:
            return Duplicate(kind=kind, matched=text, similarity=1.0, measure="exact")
    best: Duplicate | None = None
    for kind, text in candidates:
        similarity, threshold = _similarity(question, text)
        if similarity >= threshold and (best is None or similarity > best.similarity):
            best = Duplicate(kind=kind, matched=text, similarity=similarity, measure=question_embedder_name())
    return best
