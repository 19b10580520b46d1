"""Drafting of question instances: template questions over tables (LLM drafting lives beside it)."""
