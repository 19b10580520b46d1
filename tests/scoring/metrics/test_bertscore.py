"""Offline BERTScore with all-MiniLM-L6-v2 (known embedding similarity, matching rules, naming) and the paper's
bert-base-uncased layer-12 setting from a configured directory."""

from __future__ import annotations

import json
import shutil
import threading
import time

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

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


def test_paper_setting_says_why_it_is_unavailable(tmp_path):
    with pytest.raises(bertscore.BertScoreUnavailableError, match="TATCURATE_BERT_BASE_UNCASED_DIR"):
        bertscore.paper_model_directory("")
    with pytest.raises(bertscore.BertScoreUnavailableError, match="does not exist"):
        bertscore.paper_model_directory(str(tmp_path / "nowhere"))
    (tmp_path / "config.json").write_text('{"num_hidden_layers": 12}')
    with pytest.raises(bertscore.BertScoreUnavailableError, match=r"model\.safetensors, tokenizer\.json"):
        bertscore.paper_model_directory(str(tmp_path))


def test_paper_setting_reads_a_masked_lm_checkpoint_at_layer_12(scorer, tmp_path):
    """A 12-layer BERT directory whose weights carry the masked-LM `bert.` prefix, as bert-base-uncased's do (built
    here from MiniLM's files with its 6 layers repeated), scores at layer 12 and records the paper's model."""
    source = bertscore.model_directory()
    config = json.loads((source / "config.json").read_text())
    weights = load_file(source / "model.safetensors")
    deep = {}
    for name, value in weights.items():
        if name.startswith("encoder.layer."):
            index = int(name.split(".")[2])
            rest = name.split(".", 3)[3]
            deep[f"bert.encoder.layer.{index}.{rest}"] = value
            deep[f"bert.encoder.layer.{index + 6}.{rest}"] = value
        else:
            deep[f"bert.{name}"] = value
    save_file(deep, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 12}))
    shutil.copy(source / "tokenizer.json", tmp_path / "tokenizer.json")
    paper = bertscore.paper_scorer(str(tmp_path))
    result = paper.score("results improve", "results improve")
    assert result.f1 == pytest.approx(1.0)
    assert (result.metric, result.model, result.layer) == ("bertscore_bert_base_uncased_l12", "bert-base-uncased", 12)
    different = paper.score("Bananas are yellow fruit.", "The model improves accuracy.").f1
    assert different != pytest.approx(scorer.score("Bananas are yellow fruit.", "The model improves accuracy.").f1)


def test_threads_asking_together_for_weights_or_an_embedding_get_one_computation():
    calls: list[str] = []

    @bertscore.computed_once(maxsize=8)
    def load(name: str) -> object:
        calls.append(name)
        time.sleep(0.2)  # a load that takes a moment: the other threads arrive while it runs
        return object()

    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(load("minilm"))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert calls == ["minilm"]
    assert len(results) == 8 and all(result is results[0] for result in results)
    load.cache_clear()
    load("minilm")
    assert calls == ["minilm", "minilm"]
