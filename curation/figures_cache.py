"""The one cache of a project's whole-project figures (the dashboard's, the project page's status counts): reused
until an instance of the project changes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings as django_settings
from django.core.cache import cache

from curation.models import Instance, Project


def project_figures(project: Project, name: str, compute: Callable[[], Any], *params: Any) -> Any:
    """Figures of a project computed once per change of its instances and reused meanwhile (at most
    TATCURATE_FIGURES_CACHE_S seconds, for what moves without an instance write: work-time pings, exam attempts).

    The one place whole-project figures are cached (the dashboard's, what the drafts cost, the project page's
    status counts). Every write of an instance (each transition, edit, claim, assignment, through any door) sets
    its `updated_at`, so the project's latest `updated_at` (one index probe) names the state the figures were
    computed from; a new one is a new key. Callers check the viewer's role before calling."""
    timeout = django_settings.TATCURATE_FIGURES_CACHE_S
    latest = Instance.objects.filter(project=project).order_by("-updated_at").values_list("updated_at", flat=True)
    stamp = latest.first()
    if not timeout or stamp is None:
        return compute()
    key = ":".join(["figures", str(project.pk), name, stamp.isoformat(), *(str(p) for p in params)])
    return cache.get_or_set(key, compute, timeout)
