"""Write services of the scoring app (runs, predictions, error tags, templates)."""
