"""Metrics, model endpoints, prompting methods, sandboxed execution and scoring runs."""
