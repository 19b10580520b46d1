"""Scoring-side models: the runs' models live in scoring/runs/models.py; importing them here registers them.

The model endpoints that drafting and scoring share live in the core (`curation.endpoints.models`)."""

from __future__ import annotations

from scoring.runs.models import ErrorSample, ErrorTag, Prediction, RunChunk, ScoringRun

__all__ = ["ErrorSample", "ErrorTag", "Prediction", "RunChunk", "ScoringRun"]
