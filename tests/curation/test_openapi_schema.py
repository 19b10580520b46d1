"""The OpenAPI schema: it validates with no generator warning, and every operation says what it does for its user
(a summary or a description; drf-spectacular takes the description from the view's docstring)."""

from __future__ import annotations

from typing import Any

from django.core.management import call_command
from django.urls import path
from drf_spectacular.generators import SchemaGenerator
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

HTTP_METHODS = {"get", "post", "put", "patch", "delete"}


def undescribed_operations(schema: dict[str, Any]) -> list[str]:
    """`METHOD path` of every operation with neither a summary nor a description."""
    return [
        f"{method.upper()} {route}"
        for route, operations in schema["paths"].items()
        for method, operation in operations.items()
        if method in HTTP_METHODS and not (operation.get("summary") or operation.get("description") or "").strip()
    ]


def test_every_api_operation_has_a_summary_or_a_description():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    assert len(schema["paths"]) > 50  # the whole API, not an empty URL map
    assert undescribed_operations(schema) == []


def test_an_api_view_without_a_docstring_is_reported():
    class UndocumentedApi(APIView):
        def get(self, request):
            return Response({})

    class DocumentedApi(APIView):
        """Say hello."""

        def get(self, request):
            return Response({})

    patterns = [path("api/bare/", UndocumentedApi.as_view()), path("api/hello/", DocumentedApi.as_view())]
    schema = SchemaGenerator(patterns=patterns).get_schema(request=None, public=True)
    assert undescribed_operations(schema) == ["GET /api/bare/"]


def test_the_schema_validates_without_warnings(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    assert "/api/auth/token/" in out.read_text()


def serializer_classes(base: type) -> list[type]:
    return [cls for sub in base.__subclasses__() for cls in (sub, *serializer_classes(sub))]


def test_a_person_a_row_may_lack_is_nullable_in_the_schema():
    """A read-only relation to a nullable foreign key (a system event's actor, an open discussion's verifier, an upload
    run's endpoint, a first release's predecessor) may be null in a response, so the schema must say so: a client
    generated from it would reject the response otherwise (the API fuzz met it now and then on an instance's
    history). DRF drops `allow_null` from a read-only field it builds, so each is declared."""
    SchemaGenerator().get_schema(request=None, public=True)  # imports every API module, so every serializer
    lying = []
    for cls in serializer_classes(serializers.ModelSerializer):
        model = getattr(getattr(cls, "Meta", None), "model", None)
        if model is None or cls.__module__.startswith(("rest_framework", "tests")):
            continue
        for name, field in cls().fields.items():
            if not isinstance(field, serializers.RelatedField) or "." in (field.source or ""):
                continue
            model_field = next((f for f in model._meta.fields if f.name == (field.source or name)), None)
            if model_field is not None and model_field.null and not field.allow_null:
                lying.append(f"{cls.__module__}.{cls.__name__}.{name}")
    assert lying == [], lying
