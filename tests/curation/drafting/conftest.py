"""Fixtures of the drafting tests: a batch of contexts over numeric tables, and endpoints on a fault server."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from curation.endpoints.models import ModelEndpoint
from curation.models import Batch, Context, ReasoningType
from tests.factories import BatchFactory, ShortContextFactory, TableFactory
from tests.support.fault_server import Fault, FaultServer, completion_body

RESULTS_ROWS = [
    ["Model", "Dev", "Test", "Params (M)"],
    ["BERT-base", "84.1", "83.2", "110"],
    ["RoBERTa", "87.6", "86.9", "125"],
    ["ALBERT", "81.3", "80.0", "12"],
    ["Ours", "**88.9**", "87.7†", "118"],
]


def make_contexts(project, batch: Batch, count: int, *, one_paper: bool = False) -> list[Context]:
    """`count` short contexts in `batch`, each one paragraph citing a numeric table: each of its own paper, or
    (`one_paper`) all of one paper with its one table."""
    comparison = ReasoningType.objects.get(project=project, code="comparison")
    numeric = {"number": "2", "caption": "Accuracy on the task.", "cells": RESULTS_ROWS}
    shared = None
    if one_paper:
        shared = TableFactory(
            paper__project=project, paper__title="One paper, many paragraphs", label="tab:results", **numeric
        )
    contexts = []
    for index in range(count):
        table = shared or TableFactory(
            paper__project=project, paper__title=f"Drafting paper {index}", label=f"tab:results{index}", **numeric
        )
        text = (
            f"Table 2 shows result {index}."
            if one_paper
            else "Table 2 shows that our model beats RoBERTa with fewer parameters."
        )
        context = ShortContextFactory(
            paper=table.paper, paragraph__text=text, paragraph__mentioned_tables=[table], tables=[table],
            reasoning_type=comparison, batch=batch,
        )  # fmt: skip
        contexts.append(context)
    return contexts


def _chat_replies_forget() -> None:
    """Drop the cached chat replies. On Redis only their keys: the database also holds the broker's queues, which
    a FLUSHDB (cache.clear) would empty under the Celery workers other xdist workers' tests are waiting on."""
    from django.conf import settings
    from django.core.cache import cache

    backend = getattr(cache, "_cache", None)
    if not settings.REDIS_URL or not hasattr(backend, "get_client"):  # a test may swap the cache for another
        cache.clear()
        return
    client = backend.get_client(write=True)
    for key in client.scan_iter(match=cache.make_key("tatcurate:chat:*"), count=1000):
        client.delete(key)


@pytest.fixture(autouse=True)
def _empty_response_cache() -> Iterator[None]:
    # Endpoint identities are "endpoint-<pk>" and SQLite reuses pks after a rollback: a cached reply of an
    # earlier test's endpoint would answer for this one.
    _chat_replies_forget()
    yield
    _chat_replies_forget()


@pytest.fixture
def drafting_batch(project) -> Batch:
    return BatchFactory(project=project, name="Drafting batch")


@pytest.fixture
def drafting_contexts(project, drafting_batch) -> list[Context]:
    return make_contexts(project, drafting_batch, 3)


def scripted_reply(request: dict) -> Fault:
    """A well-behaved model: a question for the question prompt, Reason/Answer for the answer prompt."""
    prompt = request["messages"][-1]["content"]
    if prompt.rstrip().endswith("Reason:"):
        return Fault(body=completion_body("Ours has 88.9 and RoBERTa 87.6 on Dev.\nAnswer: Ours"))
    return Fault(body=completion_body("Sure! Question: Which model is best on Dev, Ours or RoBERTa?"))


@pytest.fixture
def model_server() -> Iterator[FaultServer]:
    with FaultServer(responder=scripted_reply) as server:
        yield server


def endpoint_on(project, base_url: str, *, name: str = "Fault model", **fields: object) -> ModelEndpoint:
    fields.setdefault("max_attempts", 1)
    fields.setdefault("timeout_s", 5.0)
    fields.setdefault("generation_params", {"temperature": 0.0, "max_tokens": 64})
    return ModelEndpoint.objects.create(project=project, name=name, base_url=base_url, model="fault-model", **fields)


def garbage() -> Fault:
    return Fault(status=200, body=json.dumps({"nonsense": True}).encode())
