"""Management commands of the scoring app."""
