"""Pay settings: the rate per validated instance that the dashboard's pay report multiplies. Managers only."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from annotate.dashboard.models import PaySettings
from curation.errors import InvalidInput
from curation.models import Project
from curation.services.projects import require_role
from curation.states import Role


@transaction.atomic
def pay_settings_set(
    *, project: Project, actor: AbstractBaseUser, pay_per_instance: str | Decimal, currency: str = "USD"
) -> PaySettings:
    """Set the pay rate per validated instance. Managers only."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="set the pay rate")
    try:
        rate = Decimal(str(pay_per_instance))
    except InvalidOperation as exc:
        raise InvalidInput("The pay rate must be a number.") from exc
    if rate < 0 or rate >= Decimal("1000000"):
        raise InvalidInput("The pay rate must be between 0 and 999999.99.")
    currency = (currency or "USD").strip().upper()
    if len(currency) != 3 or not currency.isalpha():
        raise InvalidInput("The currency is a three-letter code such as USD.")
    record, _ = PaySettings.objects.update_or_create(
        project=project, defaults={"pay_per_instance": rate.quantize(Decimal("0.01")), "currency": currency}
    )
    return record
