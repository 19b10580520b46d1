"""Scoring runs: a model (or an uploaded predictions file) answering a release's questions, chunk by chunk on the
workers, and the figures, exports, comparisons and pages built from them."""
