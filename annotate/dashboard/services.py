"""Pay settings: the rate per validated instance that the dashboard's pay report multiplies. Managers only."""

from __future__ import annotations

from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotate.dashboard.models import PaySettings
from curation.models import Project
from curation.services.projects import require_role
from curation.states import Role


@transaction.atomic
def pay_settings_set(
    *, project: Project, actor: AbstractBaseUser, pay_per_instance: str | Decimal, currency: str = "USD"
) -> PaySettings:
    """Set the pay rate per validated instance (its range and the currency's form are the input's:
    `PaySettingsSerializer`, which the API and the dashboard's form share). Managers only."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="set the pay rate")
    rate = Decimal(str(pay_per_instance)).quantize(Decimal("0.01"))
    record, _ = PaySettings.objects.update_or_create(
        project=project, defaults={"pay_per_instance": rate, "currency": currency.upper()}
    )
    return record
