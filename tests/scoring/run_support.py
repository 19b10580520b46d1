"""Helpers of the scoring-run tests: a small release of real TAT-QA dev data, endpoints, a shared local model."""

from __future__ import annotations

import json
import socket
from typing import Any

from curation.models import Release
from curation.services.datasets import dataset_import
from scoring.models import ModelEndpoint
from tests.scoring.metrics.shared_data import shared_data_dir

_local_model_url: str | None = None


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def local_model_url() -> str:
    """One SmolLM2 server for the whole test session (started on a free port the first time it is asked for)."""
    global _local_model_url
    if _local_model_url is None:
        from scoring.local_model import ensure_running

        _local_model_url = ensure_running(free_port(), timeout_s=180)
    return _local_model_url
