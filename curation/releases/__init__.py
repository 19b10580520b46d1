"""Releases: cuts of accepted instances, their statistics, exports and dataset imports."""
