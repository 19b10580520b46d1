"""The model endpoints shared by drafting and scoring: the bottom layer both sides use."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models

from curation.visibility import ModelEndpointQuerySet

__all__ = ["ModelEndpoint"]


class ModelEndpoint(models.Model):
    """An OpenAI-compatible chat endpoint. Holds the *name* of the environment variable with its key, never the key."""

    project = models.ForeignKey(
        "curation.Project", null=True, blank=True, on_delete=models.CASCADE, related_name="endpoints",
        help_text="Empty: available to every project",
    )  # fmt: skip
    name = models.CharField(max_length=120)
    base_url = models.URLField(max_length=500, help_text="e.g. http://127.0.0.1:8089/v1")
    model = models.CharField(max_length=200)
    api_key_env = models.CharField(
        max_length=100, blank=True, help_text="Name of the environment variable holding the API key"
    )
    timeout_s = models.FloatField(default=60.0)
    max_attempts = models.PositiveIntegerField(default=5)
    concurrency_limit = models.PositiveIntegerField(default=4, help_text="Shared by all workers (Redis) when set")
    requests_per_minute = models.PositiveIntegerField(null=True, blank=True)
    generation_params = models.JSONField(default=dict, blank=True, help_text="Default temperature, max_tokens, seed …")
    supports_tools = models.BooleanField(default=False, help_text="Native OpenAI tool calls")
    is_local_default = models.BooleanField(default=False, help_text="The embedded SmolLM2 model")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    objects = ModelEndpointQuerySet.as_manager()

    class Meta:
        # The table keeps the name it had when the model lived in `scoring`, so existing databases keep their rows.
        db_table = "scoring_modelendpoint"
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["project", "name"], name="unique_endpoint_name")]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"

    def config(self):
        """The plain EndpointConfig the shared client takes."""
        from curation.endpoints.config import EndpointConfig

        return EndpointConfig(
            base_url=self.base_url,
            model=self.model,
            api_key_env=self.api_key_env,
            timeout_s=self.timeout_s,
            max_attempts=self.max_attempts,
            concurrency_limit=self.concurrency_limit,
            requests_per_minute=self.requests_per_minute,
            generation_params=dict(self.generation_params or {}),
            supports_tools=self.supports_tools,
            # The address is part of the identity: an edited base URL must not reuse the old server's cached replies.
            identity_key=f"endpoint-{self.pk}-{hashlib.sha256(f'{self.base_url}|{self.model}'.encode()).hexdigest()[:12]}",
        )
