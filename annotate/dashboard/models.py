"""The dashboard's one record: a project's pay rate, which the pay report multiplies by validated instances."""

from __future__ import annotations

from decimal import Decimal

from django.db import models

from curation.models import Project

__all__ = ["PaySettings"]


class PaySettings(models.Model):
    """Per-project pay rate for validated instances (SciTaT paid $1 an instance, about ten minutes of work)."""

    project = models.OneToOneField(Project, on_delete=models.CASCADE, related_name="pay_settings")
    pay_per_instance = models.DecimalField(max_digits=8, decimal_places=2, default=Decimal("1.00"))
    currency = models.CharField(max_length=3, default="USD")

    class Meta:
        verbose_name = "pay settings"
        verbose_name_plural = "pay settings"

    def __str__(self) -> str:
        return f"{self.pay_per_instance} {self.currency} per instance in {self.project}"
