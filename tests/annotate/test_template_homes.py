"""Each package's pages render from its own template folder: batches from annotate/batches/, the dashboard from
annotate/dashboard/ (review keeps only review pages and the navigation they share)."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("path", "folder"),
    [("/p/test-project/batches/", "annotate/batches/"), ("/p/test-project/dashboard/", "annotate/dashboard/")],
)
def test_the_batches_and_dashboard_pages_render_from_their_packages_folders(personas, path, folder):
    client = Client()
    assert client.login(username="manager", password=PASSWORD)
    response = client.get(path)
    assert response.status_code == 200
    names = [template.name for template in response.templates if template.name]
    assert names[0].startswith(folder), names
    shared = {"annotate/review/_nav.html", "annotate/review/_badge.html"}  # the review navigation every page shows
    assert not [name for name in names if name.startswith("annotate/review/") and name not in shared], names
