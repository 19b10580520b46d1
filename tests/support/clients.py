"""A test client logged in as a persona (or anonymous), shared by the page tests."""

from __future__ import annotations

from django.test import Client

from tests.conftest import PASSWORD


def logged_in(username: str | None) -> Client:
    """A client logged in as `username` (its login must succeed); None: an anonymous client."""
    client = Client()
    if username:
        assert client.login(username=username, password=PASSWORD)
    return client
