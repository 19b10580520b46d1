"""The API's input step: a view's input serializer checks the body and hands back its values."""

from __future__ import annotations

from typing import Any

from rest_framework.serializers import Serializer


def valid_input(serializer_class: type[Serializer], data: Any, *, partial: bool = False) -> dict[str, Any]:
    """`data` as `serializer_class` validates it (`partial`: only the fields given, for a PATCH); a refusal raises
    ValidationError, which the API answers with 400."""
    serializer = serializer_class(data=data, partial=partial)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data
