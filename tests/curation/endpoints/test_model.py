"""ModelEndpoint → EndpointConfig: the identity (cache namespace, shared semaphore) follows the address."""

from __future__ import annotations

from curation.endpoints.models import ModelEndpoint


def test_editing_the_base_url_changes_the_identity(db):
    endpoint = ModelEndpoint.objects.create(name="e", base_url="http://127.0.0.1:9001/v1", model="m")
    before = endpoint.config().identity
    endpoint.base_url = "http://127.0.0.1:9002/v1"
    assert endpoint.config().identity != before
    endpoint.base_url = "http://127.0.0.1:9001/v1"
    assert endpoint.config().identity == before


def test_the_key_is_named_never_stored(db):
    endpoint = ModelEndpoint.objects.create(name="e", base_url="http://x.example/v1", model="m", api_key_env="X_KEY")
    assert endpoint.config().api_key_env == "X_KEY"
    assert "X_KEY" not in str(endpoint.config().identity)
