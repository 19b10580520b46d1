"""Offline BERTScore with all-MiniLM-L6-v2: known embedding similarity, matching rules, naming."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.metrics import bertscore


@pytest.fixture(scope="module")
def scorer():
    try:
        return bertscore.default_scorer()
    except bertscore.BertScoreUnavailableError as error:
        pytest.skip(str(error))


def sentence_vector(scorer, text):
    hidden = scorer.embed(scorer.encode(text))
    mean = hidden.mean(axis=0)
    return mean / np.linalg.norm(mean)


def test_forward_pass_reproduces_the_published_sentence_similarity(scorer):
    # sentence-transformers' documented example for all-MiniLM-L6-v2 (mean pooling, last layer): 0.943.
    similarity = sentence_vector(scorer, "That is a happy person") @ sentence_vector(
        scorer, "That is a very happy person"
    )
    assert similarity == pytest.approx(0.943, abs=0.001)


def test_tokenizer_does_not_pad(scorer):
    assert len(scorer.encode("hello world")) == 4


def test_identical_texts_score_one_and_empty_texts_zero(scorer):
    assert scorer.score("results improve", "results improve").f1 == pytest.approx(1.0)
    assert scorer.score("", "results improve").f1 == 0.0
    assert scorer.score("results improve", "  ").f1 == 0.0


def test_related_text_scores_higher_than_unrelated(scorer):
    reference = "The proposed model improves accuracy over the baseline."
    related = scorer.score("Our model is more accurate than the baseline.", reference).f1
    unrelated = scorer.score("Bananas are yellow fruit.", reference).f1
    assert related > unrelated


def test_precision_and_recall_are_greedy_matches_in_each_direction(scorer):
    result = scorer.score("the cat", "the cat chased a dog through the garden")
    # The short candidate is covered by the reference; the reference is not covered by the candidate.
    assert result.precision > result.recall
    assert result.f1 == pytest.approx(2 * result.precision * result.recall / (result.precision + result.recall))


def test_results_record_metric_model_and_layer(scorer):
    result = scorer.score("a", "b")
    assert result.metric == "bertscore_minilm_l6" != bertscore.PAPER_METRIC_NAME
    assert result.model == "sentence-transformers/all-MiniLM-L6-v2"
    assert result.layer == 6
    assert scorer.info()["idf"] is False


def test_paper_setting_needs_bert_score_and_a_local_model():
    with pytest.raises(bertscore.BertScoreUnavailableError):
        bertscore.score_with_bert_score(["a"], ["b"], model_path="/nonexistent/bert-base-uncased")
