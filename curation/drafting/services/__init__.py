"""Drafting writes, read top-down: prompt_versions (template versions) · drafter (one context into draft fields,
pure of the job machinery) · runs (create, start, retry, cancel, resume, finish) · reaper (work a vanished worker
left) · items (claim, draft and commit one item exactly once; imports runs and drafter)."""
