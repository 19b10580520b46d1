"""A scoring chunk asks through the process's shared client of its endpoint: the operator's outbound list holds for
scoring as for drafting, and its kept-alive connections serve chunk after chunk."""

from __future__ import annotations

import pytest

from scoring.runs.chunks import _client
from scoring.runs.creation import run_create
from tests.scoring.run_support import endpoint_for, small_release

pytestmark = pytest.mark.django_db

LISTED = "http://192.0.2.10:8000/v1/chat/completions"  # a documentation address: checked, never connected to


def test_a_scoring_chunk_follows_the_operators_endpoint_hosts(project, personas, settings):
    settings.TATCURATE_ENDPOINT_HOSTS = ["192.0.2.0/24"]
    release = small_release(project, documents=1, questions=1)
    endpoint = endpoint_for(project, "http://127.0.0.1:9/v1")
    run = run_create(release=release, actor=personas["manager"], method="direct", endpoint=endpoint)
    assert _client(run).outbound.url_refusal(LISTED) == ""
    settings.TATCURATE_ENDPOINT_HOSTS = []
    assert "TATCURATE_ENDPOINT_HOSTS" in _client(run).outbound.url_refusal(LISTED)


def test_chunks_of_a_run_share_one_client_which_skips_the_cache_when_the_run_does(project, personas):
    release = small_release(project, documents=1, questions=1)
    endpoint = endpoint_for(project, "http://127.0.0.1:9/v1")
    fresh = run_create(release=release, actor=personas["manager"], method="direct", endpoint=endpoint, use_cache=False)
    cached = run_create(release=release, actor=personas["manager"], method="direct", endpoint=endpoint)
    assert _client(fresh) is _client(fresh)
    assert _client(fresh).cache is None and _client(cached).cache is not None
