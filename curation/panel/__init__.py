"""Difficulty against a panel of models: the project's panel, calibrations of a batch, each item's "k of n"."""
