"""Signals of drafting, for apps above the domain (annotate's hidden gold adds its probes among a batch's drafts)."""

from __future__ import annotations

from django.dispatch import Signal

# Sent inside the transaction that commits a drafting item's drafts, with `run` and `batch_id` (may be None).
drafts_committed = Signal()
