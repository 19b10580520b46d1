"""Webhook tests send to receivers on this machine: the operator allows loopback by address (nothing is implicit)."""

import pytest

LOOPBACK_ALLOWED = ["127.0.0.1"]


@pytest.fixture(autouse=True)
def loopback_receivers_allowed(settings):
    settings.TATCURATE_WEBHOOK_HOSTS = LOOPBACK_ALLOWED
