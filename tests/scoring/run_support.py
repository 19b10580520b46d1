"""Helpers of the scoring-run tests: a small release of real TAT-QA dev data, endpoints, a shared local model."""

from __future__ import annotations

import json
from typing import Any

from curation.datasets.services import dataset_import
from curation.endpoints.models import ModelEndpoint
from curation.releases.models import Release
from tests.scoring.metrics.shared_data import shared_data_dir


def tatqa_subset(documents: int = 1, questions: int = 4) -> list[dict[str, Any]]:
    """The first documents of TAT-QA dev with their first questions (spans, multi-span, arithmetic, scales)."""
    data = json.loads((shared_data_dir() / "tatqa" / "tatqa_dataset_dev.json").read_text(encoding="utf-8"))
    subset = data[:documents]
    for document in subset:
        document["questions"] = document["questions"][:questions]
    return subset


def small_release(project, *, documents: int = 1, questions: int = 4, name: str = "small") -> Release:
    """A release of a few real TAT-QA dev questions, cut through the real import service."""
    content = json.dumps(tatqa_subset(documents, questions)).encode()
    result = dataset_import(
        project=project, actor=None, format="tatqa", source_name=f"{name}.json", content=content, as_release=name
    )
    return result.release


def endpoint_for(project, base_url: str, *, name: str = "fault", model: str = "fault-model", **fields: Any):
    """A ModelEndpoint row for a test server."""
    fields.setdefault("timeout_s", 5.0)
    fields.setdefault("max_attempts", 4)
    fields.setdefault("concurrency_limit", 2)
    fields.setdefault("generation_params", {"temperature": 0.0, "max_tokens": 32})
    return ModelEndpoint.objects.create(project=project, name=name, base_url=base_url, model=model, **fields)


from tests.support.local_model import free_port, local_model_url  # noqa: E402,F401  (one server per session)
