"""The /healthz section on the program sandbox: can this machine run model-written code isolated?"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from scoring.sandbox import isolation_status

_PROGRAMS = {"bwrap": "run isolated", "refused": "not run", "degraded": "run UNISOLATED"}


def sandbox_health() -> dict[str, Any]:
    """Whether bubblewrap starts here and what model-written programs get; the reason stays in runs and logs."""
    status = isolation_status(allow_unisolated=settings.TATCURATE_UNSAFE_RUN_PROGRAMS_UNISOLATED)
    is_isolated = status.isolation == "bwrap"
    return {
        "ok": is_isolated,
        "isolation": "bubblewrap" if is_isolated else "unavailable",
        "programs": _PROGRAMS[status.isolation],
    }
