"""Writes of the annotation side, one module per noun."""
