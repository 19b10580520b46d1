"""Pure metric functions (no Django) that reproduce the official TAT-QA, TAT-DQA, FinQA and SciTaT scorers."""
