"""Datasets from outside: pure readers of TAT-QA, TAT-DQA, FinQA and SciTaT files, and the import service."""
