"""Model endpoints for managers: list, add, edit and test; keys stay in the environment, only their names are kept."""

from __future__ import annotations

import os
import re
import time
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import QuerySet
from django.template.defaultfilters import pluralize

from curation.endpoints.django_client import client_for, limit_is_shared, outbound_policy
from curation.endpoints.errors import (
    EndpointBadRequest,
    EndpointBusy,
    EndpointConfigError,
    EndpointError,
    EndpointMalformedResponse,
    EndpointRetriesExhausted,
    EndpointUnauthorized,
)
from curation.endpoints.models import ModelEndpoint
from curation.errors import InvalidInput, NotFound, NotPermitted
from curation.models import Project
from curation.services.projects import require_role
from curation.states import Role
from curation.visibility import is_operator

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def endpoints_visible_to(user: AbstractBaseUser, project: Project) -> QuerySet[ModelEndpoint]:
    """The project's own endpoints and the global ones, for whoever may see them (curation.visibility)."""
    return ModelEndpoint.objects.visible_to(user, project=project).order_by("project_id", "name")


def endpoint_preferred(endpoints: QuerySet[ModelEndpoint]) -> ModelEndpoint | None:
    """The endpoint a run form starts on: the first real one (by name), else the embedded model, a demonstration
    that drafts slowly and poorly and paraphrases headers no better than their own names."""
    return endpoints.order_by("is_local_default", "name").first()


def endpoint_get(*, user: AbstractBaseUser, endpoint_id: int) -> ModelEndpoint:
    """An endpoint the user may see (curation.visibility); other members are refused, everyone else learns nothing."""
    found = ModelEndpoint.objects.visible_to(user).select_related("project").filter(pk=endpoint_id).first()
    if found is not None:
        return found
    if ModelEndpoint.objects.visible_to(user, roles=None).filter(pk=endpoint_id).exists():
        raise NotPermitted("Only a manager or verifier of this project may see its model endpoints.")
    raise NotFound(f"No endpoint {endpoint_id} that you may see.")


def _clean(changes: dict[str, Any]) -> dict[str, Any]:
    """The fields the input serializer checked, with the key's variable name trimmed and refused if it is no name."""
    if "api_key_env" not in changes:
        return changes
    name = (changes["api_key_env"] or "").strip()
    if name and not _ENV_NAME.match(name):
        # Someone pasted a key where its variable name belongs; refuse it and never echo it back.
        raise InvalidInput(
            "api_key_env takes the *name* of an environment variable (letters, digits, underscores), "
            "never the key itself."
        )
    return {**changes, "api_key_env": name}


def _save_valid(endpoint: ModelEndpoint) -> ModelEndpoint:
    """Save the endpoint once its settings make a usable, permitted and unique endpoint; else InvalidInput."""
    try:
        config = endpoint.config()
    except EndpointConfigError as error:
        raise InvalidInput(str(error)) from error
    refusal = outbound_policy().url_refusal(config.chat_url)
    if refusal:
        raise InvalidInput(
            f"base_url: {refusal}. Endpoints may be on this machine (loopback) or on a host an operator lists "
            "in TATCURATE_ENDPOINT_HOSTS."
        )
    clash = ModelEndpoint.objects.filter(project_id=endpoint.project_id, name=endpoint.name).exclude(pk=endpoint.pk)
    if clash.exists():
        raise InvalidInput(f"An endpoint called {endpoint.name!r} exists already.")
    endpoint.save()
    return endpoint


@transaction.atomic
def endpoint_create(*, project: Project, actor: AbstractBaseUser, **fields: Any) -> ModelEndpoint:
    """Add an endpoint to a project. Managers only; the key is referenced by variable name, never stored."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="add model endpoints")
    return _save_valid(ModelEndpoint(project=project, created_by=actor, **_clean(fields)))


@transaction.atomic
def endpoint_update(*, endpoint: ModelEndpoint, actor: AbstractBaseUser, **changes: Any) -> ModelEndpoint:
    """Edit an endpoint. Project managers for project endpoints; operators for global ones."""
    if endpoint.project_id is not None:
        require_role(user=actor, project=endpoint.project, roles=(Role.MANAGER,), action="change model endpoints")
    elif not is_operator(actor):
        raise NotPermitted("Global endpoints are shared by every project; only an operator may change them.")
    for name, value in _clean(changes).items():
        setattr(endpoint, name, value)
    return _save_valid(endpoint)


def key_status(endpoint: ModelEndpoint) -> str:
    """'none' (no key needed), 'set' or 'missing' — whether the named variable exists on this server."""
    if not endpoint.api_key_env:
        return "none"
    return "set" if os.environ.get(endpoint.api_key_env) else "missing"


def describe_endpoint_error(error: EndpointError, *, base_url: str = "") -> tuple[str, str]:
    """(kind, sentence for a person) for an endpoint failure: down (no HTTP answer, whatever the reason), unauthorized,
    garbage, rejected, unavailable, busy, config."""
    where = f" at {base_url}" if base_url else ""
    tries = f" after {len(error.attempts)} attempt{pluralize(len(error.attempts))}" if error.attempts else ""
    if isinstance(error, EndpointUnauthorized):
        message = f"The endpoint{where} refused the credentials (HTTP {error.status}): {error.server_message}"
        return "unauthorized", message
    if isinstance(error, EndpointConfigError):
        return "config", f"The endpoint is misconfigured: {error.message}"
    if isinstance(error, EndpointBadRequest):
        return "rejected", f"The endpoint{where} rejected the request (HTTP {error.status}): {error.server_message}"
    if isinstance(error, EndpointMalformedResponse):
        return "garbage", f"The endpoint{where} answered with something that is not a chat completion{tries}: {error}"
    if isinstance(error, EndpointBusy):
        return "busy", f"No free slot for the endpoint in time: {error}"
    if isinstance(error, EndpointRetriesExhausted):
        last = error.attempts[-1] if error.attempts else None
        if last is not None and last.status is None:
            # One sentence for refused, reset, silent and timed-out connections: no test tells an open port from a
            # closed one (the attempt's own error stays in the log).
            return "down", f"The endpoint{where} is unreachable{tries}: no HTTP answer (refused, reset or timed out)."
        return "unavailable", f"The endpoint{where} kept failing{tries}: {error}"
    return "error", str(error)


def endpoint_test(*, endpoint: ModelEndpoint, actor: AbstractBaseUser) -> dict[str, Any]:
    """Send one tiny uncached request and report status, latency and reply, or the failure in plain words (the
    fields of api.EndpointTestOutputSerializer)."""
    if endpoint.project_id is not None:
        require_role(user=actor, project=endpoint.project, roles=(Role.MANAGER,), action="test model endpoints")
    started = time.monotonic()
    report = {"model": endpoint.model, "key_status": key_status(endpoint), "limit_is_shared": limit_is_shared()}
    report |= {"is_ok": False, "status": None, "latency_s": 0.0, "reply": "", "attempts": 0}
    try:
        client = client_for(endpoint)
    except EndpointConfigError as error:
        return report | {"kind": "config", "message": str(error)}
    try:
        # A seed-free, non-zero temperature keeps the test out of the response cache.
        result = client.chat(
            [{"role": "user", "content": "Reply with the single word: ready"}], max_tokens=8, temperature=0.7
        )
    except EndpointError as error:
        kind, message = describe_endpoint_error(error, base_url=endpoint.base_url)
        return report | {
            "kind": kind,
            "message": message,
            "status": error.attempts[-1].status if error.attempts else None,
            "latency_s": round(time.monotonic() - started, 3),
            "attempts": len(error.attempts),
        }
    return report | {
        "is_ok": True,
        "kind": "ok",
        "message": "The endpoint answered.",
        "model": str(result.raw.get("model") or endpoint.model),
        "status": result.attempts[-1].status if result.attempts else 200,
        "latency_s": round(result.latency_s, 3),
        "reply": result.text[:500],
        "attempts": len(result.attempts),
    }
