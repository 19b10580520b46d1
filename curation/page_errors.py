"""Maps domain errors raised under a page to what a person sees: 404, the 403 page, or a message and a way back.

The pages' counterpart of ``curation.api_errors``: views let services raise, and this one place decides.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import NoReverseMatch, reverse
from django.utils.http import url_has_allowed_host_and_scheme

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


class DomainErrorMiddleware:
    """NotFound → 404, NotPermitted → 403, Conflict (a warning) and InvalidInput → a message and a redirect back."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

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
    """An invalid Django form's (or the API's input serializer's) refusals in one sentence, for pages that answer
    a POST with a message and a redirect. A field's label leads its refusal unless the refusal already names it
    ("Contexts per paper must be at least 1.")."""
    parts = []
    for name, errors in form.errors.items():
        field = form.fields.get(name)
        label = getattr(field, "label", None) or (name if field is not None else "form")
        said = " ".join(str(error) for error in errors)
        parts.append(said if said.lower().startswith(str(label).lower()) else f"{label}: {said}")
    return " ".join(parts)


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
