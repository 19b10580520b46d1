"""Drafting writes, read top-down: prompt_versions (template versions) · drafter (one context into draft fields,
pure of the job machinery) · runs (create, start, retry, cancel, resume, finish) · jobs (the item as a job kind:
its claim, and the work a vanished worker left) · items (claim, draft and commit one item exactly once; imports
runs and drafter)."""
