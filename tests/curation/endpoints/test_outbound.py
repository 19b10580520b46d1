"""Outbound requests only where configured: loopback and the operator's hosts; link-local and metadata never."""

from __future__ import annotations

import ipaddress

import pytest

from curation.endpoints.client import ChatClient
from curation.endpoints.config import EndpointConfig
from curation.endpoints.models import ModelEndpoint
from curation.endpoints.outbound import GuardedBackend, OutboundPolicy, OutboundRefused
from tests.support.fault_server import Fault, FaultServer


def resolving(table: dict[str, str]):
    return lambda host, port: [ipaddress.ip_address(table[host])]


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8089/v1", "http://localhost:8089", "http://[::1]:8000", "http://127.0.0.2/v1"]
)
def test_loopback_is_allowed_by_default(url):
    assert OutboundPolicy().url_refusal(url) == ""


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://10.0.0.5:6379/", "neither loopback nor in TATCURATE_ENDPOINT_HOSTS"),
        ("http://169.254.169.254/latest/meta-data/", "link-local, metadata or reserved"),
        ("http://[fe80::1]/", "link-local, metadata or reserved"),
        ("http://[::ffff:169.254.169.254]/", "link-local, metadata or reserved"),
        ("http://100.100.100.200/", "link-local, metadata or reserved"),
        ("http://0.0.0.0:8000/", "link-local, metadata or reserved"),
    ],
)
def test_other_addresses_are_refused_by_default(url, words):
    assert words in OutboundPolicy().url_refusal(url)


def test_an_unlisted_name_is_refused_unless_it_resolves_to_loopback():
    policy = OutboundPolicy(resolve=resolving({"models.internal": "10.1.2.3", "dev.local": "127.0.0.1"}))
    assert "models.internal (resolves to 10.1.2.3)" in policy.url_refusal("http://models.internal/v1")
    assert policy.url_refusal("http://dev.local:8089/v1") == ""


def test_listed_names_wildcards_and_networks_are_allowed():
    table = {"models.internal": "10.1.2.3", "gpu1.lab.example.org": "192.0.2.7", "other.example.net": "192.0.2.8"}
    policy = OutboundPolicy.from_entries(
        ["models.internal", "*.lab.example.org", "198.51.100.0/24"], resolve=resolving(table)
    )
    assert policy.url_refusal("http://models.internal:8000/v1") == ""
    assert policy.url_refusal("https://gpu1.lab.example.org/v1") == ""
    assert policy.url_refusal("http://198.51.100.20/v1") == ""
    assert policy.url_refusal("http://other.example.net/v1") != ""


def test_metadata_ranges_are_refused_even_when_listed():
    policy = OutboundPolicy.from_entries(
        ["169.254.0.0/16", "metadata.example"], resolve=resolving({"metadata.example": "169.254.169.254"})
    )
    assert "link-local" in policy.url_refusal("http://169.254.169.254/")
    # A listed name that resolves into the range is refused too: the address decides, not the name.
    assert "resolves to 169.254.169.254" in policy.url_refusal("http://metadata.example/")


def test_the_client_refuses_before_sending_anything():
    client = ChatClient(EndpointConfig(base_url="http://169.254.169.254/v1", model="m", max_attempts=3))
    with pytest.raises(OutboundRefused, match="link-local") as refused:
        client.chat([{"role": "user", "content": "hi"}])
    assert refused.value.attempts == []


def test_each_connection_resolves_once_checks_every_address_and_connects_to_a_checked_one():
    answers = iter([[ipaddress.ip_address("127.0.0.1")], [ipaddress.ip_address(a) for a in ("127.0.0.1", "10.9.9.9")]])
    lookups: list[str] = []

    def resolve(host, port):
        lookups.append(host)
        return next(answers)

    backend = GuardedBackend(OutboundPolicy(resolve=resolve))
    with FaultServer() as server:
        port = int(server.base_url.rsplit(":", 1)[1].split("/")[0])
        # The name resolves nowhere for the system: only the pinned, checked address can have been connected to.
        stream = backend.connect_tcp("rebinding.invalid", port)
        assert stream.get_extra_info("socket").getpeername()[0] == "127.0.0.1" and lookups == ["rebinding.invalid"]
        stream.close()
        # Rebound so that one of its addresses is refused: nothing is connected.
        with pytest.raises(OutboundRefused, match=r"10\.9\.9\.9"):
            backend.connect_tcp("rebinding.invalid", port)
    client = ChatClient(EndpointConfig(base_url="http://127.0.0.1:9/v1", model="m"))
    assert isinstance(client._http._transport._pool._network_backend, GuardedBackend)


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://169.254.169.254/latest", "link-local, metadata or reserved"),
        ("http://10.0.0.5:5432/", "TATCURATE_ENDPOINT_HOSTS"),
    ],
)
def test_an_endpoint_outside_the_allow_list_cannot_be_saved(project, personas, api_client_for, url, words):
    client = api_client_for(personas["manager"])
    before = ModelEndpoint.objects.count()
    response = client.post(
        f"/api/projects/{project.slug}/endpoints/", {"name": "Probe", "base_url": url, "model": "m"}, format="json"
    )
    assert response.status_code == 400
    assert "base_url" in response.json()["detail"] and words in response.json()["detail"]
    assert ModelEndpoint.objects.count() == before


@pytest.mark.django_db
def test_an_operator_listed_host_can_be_saved(project, personas, api_client_for, settings):
    settings.TATCURATE_ENDPOINT_HOSTS = ["10.0.0.0/8"]
    response = api_client_for(personas["manager"]).post(
        f"/api/projects/{project.slug}/endpoints/",
        {"name": "Lab", "base_url": "http://10.0.0.5:8000/v1", "model": "m"},
        format="json",
    )
    assert response.status_code == 201, response.content
    saved = ModelEndpoint.objects.get(pk=response.json()["id"])
    assert (saved.project, saved.base_url, saved.model) == (project, "http://10.0.0.5:8000/v1", "m")


@pytest.mark.django_db
def test_the_test_button_shows_status_and_a_parsed_message_never_the_body(project, personas, api_client_for):
    page = b"<html><body>internal admin console SECRET-TOKEN-123 " + b"x" * 2000 + b"</body></html>"
    with FaultServer(default=Fault(status=404, body=page)) as server:
        endpoint = ModelEndpoint.objects.create(
            project=project, name="Not a model", base_url=server.base_url, model="m", max_attempts=1
        )
        body = api_client_for(personas["manager"]).post(f"/api/endpoints/{endpoint.pk}/test/").json()
    assert body["is_ok"] is False and body["status"] == 404
    assert "SECRET-TOKEN" not in str(body) and "Not Found" in body["message"]


@pytest.mark.django_db
def test_the_test_button_shows_a_short_parsed_error_message(project, personas, api_client_for):
    error = {"error": {"message": "model 'm' not found " + "padding " * 100, "type": "invalid_request_error"}}
    with FaultServer(default=Fault(status=400, body=error)) as server:
        endpoint = ModelEndpoint.objects.create(
            project=project, name="Wrong model", base_url=server.base_url, model="m", max_attempts=1
        )
        body = api_client_for(personas["manager"]).post(f"/api/endpoints/{endpoint.pk}/test/").json()
    assert "HTTP 400" in body["message"] and "model 'm' not found" in body["message"]
    assert len(body["message"]) < 400


@pytest.mark.django_db
def test_the_test_button_refuses_an_endpoint_left_outside_the_list(project, personas, api_client_for):
    # Saved while the operator allowed it (or written by the admin); the list no longer includes it.
    endpoint = ModelEndpoint.objects.create(project=project, name="Old", base_url="http://10.0.0.5:8000/v1", model="m")
    body = api_client_for(personas["manager"]).post(f"/api/endpoints/{endpoint.pk}/test/").json()
    assert body["is_ok"] is False and "TATCURATE_ENDPOINT_HOSTS" in body["message"] and body["attempts"] == 0
