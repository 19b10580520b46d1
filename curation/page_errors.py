"""Maps domain errors raised under a page to what a person sees: 404, the 403 page, or a message and a way back.

The pages' counterpart of ``curation.api_errors``: views let services raise, and this one place decides.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from django.contrib import messages
from django.core.exceptions import NON_FIELD_ERRORS, PermissionDenied
from django.forms import Form
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import NoReverseMatch, reverse
from django.utils.deprecation import MiddlewareMixin
from django.utils.http import url_has_allowed_host_and_scheme
from rest_framework.serializers import Serializer
from rest_framework.settings import api_settings

from curation.errors import Conflict, DomainError, InvalidInput, NotFound, NotPermitted


def back_url(request: HttpRequest) -> str:
    """Where a refused action returns to: the page it came from when that is this site, else its project."""
    referer = request.headers.get("referer", "")
    same_site = url_has_allowed_host_and_scheme(
        referer, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    # A GET refused on the page it was linked from would redirect to itself for ever.
    if referer and same_site and not (request.method == "GET" and urlsplit(referer).path == request.path):
        return referer
    slug = (request.resolver_match.kwargs.get("slug") if request.resolver_match else None) or ""
    try:
        return reverse("project", kwargs={"slug": slug}) if slug else reverse("home")
    except NoReverseMatch:
        return reverse("home")


class DomainErrorMiddleware(MiddlewareMixin):
    """NotFound → 404, NotPermitted → 403, Conflict (a warning) and InvalidInput → a message and a redirect back."""

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        # Raised from here, Http404 and PermissionDenied reach Django's own 404 and 403 handlers.
        if isinstance(exception, NotFound):
            raise Http404(exception.message) from exception
        if isinstance(exception, NotPermitted):
            raise PermissionDenied(exception.message) from exception
        if isinstance(exception, DomainError):
            level = messages.WARNING if isinstance(exception, Conflict) else messages.ERROR
            messages.add_message(request, level, exception.message)
            return HttpResponseRedirect(back_url(request))
        return None


# What a page with a form shows on the form instead of leaving to the middleware (NotFound and NotPermitted
# always go on to the 404 and 403 pages).
FORM_ERRORS = (InvalidInput, Conflict)


def form_problems(form: Any) -> str:
    """An invalid Django form's (or the API's input serializer's) refusals in one sentence (`problems_said`), for
    pages that answer a POST with a message and a redirect."""
    return problems_said(form.errors, form.fields)


def problems_said(errors: Mapping[str, Any], fields: Mapping[str, Any]) -> str:
    """Refusals by field in one sentence. A field's label (else its name, made readable) leads its refusal unless
    the refusal already names it ("Contexts per paper must be at least 1."); a refusal of no field is said alone,
    and a nested serializer's (generation parameters, each of a list's items) after its own fields, labelled as they
    are."""
    parts = []
    for name, refused in errors.items():
        if isinstance(refused, Mapping):
            parts.append(problems_said(refused, getattr(fields.get(name), "fields", {})))
            continue
        if any(isinstance(error, Mapping) for error in refused):  # a list of nested items (review comments): by item
            item_fields = getattr(getattr(fields.get(name), "child", None), "fields", {})
            parts.extend(problems_said(error, item_fields) for error in refused if error)
            continue
        said = " ".join(str(error) for error in refused)
        field = fields.get(name)
        label = "" if name in NO_FIELD else str(getattr(field, "label", None) or name.replace("_", " ").capitalize())
        parts.append(f"{label}: {said}" if label and not said.lower().startswith(label.lower()) else said)
    return " ".join(parts)


# The keys of refusals that belong to no field: Django's, DRF's, and a service refusal's without one.
NO_FIELD = {NON_FIELD_ERRORS, api_settings.NON_FIELD_ERRORS_KEY, ""}


def page_input(form_class: type[Serializer] | type[Form], data: Any, **options: Any) -> dict[str, Any]:
    """The pages' counterpart of the API's `valid_input`: `data` as the step's input serializer (or a page's Django
    form, given its own `options`: a prefix, a choice's queryset) checks it, or InvalidInput with its refusals in one
    sentence (`form_problems`), which `service_attempt` says in a message and the middleware in a message and a
    redirect back."""
    checked = form_class(data=data, **options)
    if not checked.is_valid():
        raise InvalidInput(form_problems(checked))
    return checked.validated_data if isinstance(checked, Serializer) else checked.cleaned_data


def form_given(data: Mapping[str, Any]) -> dict[str, Any]:
    """A page's POST as the data of the API's input serializer: a field left empty keeps the serializer's default."""
    return {name: value for name, value in data.items() if value != ""}


def form_error_add(form: Any, exc: DomainError) -> None:
    """Show a refused input on the form: beside its field when the service names one, else above the form."""
    field = exc.detail.get("field")
    form.add_error(field if field in form.fields else None, exc.message)


def service_attempt(request: HttpRequest, action: Callable[[], Any], success: str = "") -> Any:
    """Run a page's service call; a refusal or conflict (FORM_ERRORS) becomes a message on the next page instead of
    an error page, and `success` a message when it went through. None when refused, else the result (or True)."""
    try:
        result = action()
    except FORM_ERRORS as exc:
        messages.error(request, exc.message)
        return None
    if success:
        messages.success(request, success)
    return result if result is not None else True
