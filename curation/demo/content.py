"""The demo paper (LaTeX under paper/, invented numbers) and hand-written drafts over it, used by `manage.py demo`."""

from __future__ import annotations

from pathlib import Path

PAPER_SOURCE = Path(__file__).resolve().parent / "paper"  # LaTeX written for the demo, ingested like any paper

# (start of the paragraph, reasoning subtype code, question, rationale, answer, form, source)
DRAFTS = [
    (
        "Table 1 compares",
        "arithmetic_calculation",
        "By how many LAS points does the sparse adapter beat full fine-tuning on average?",
        "Average LAS is 76.0 for sparse adapters and 74.9 for full fine-tuning; 76.0 - 74.9 = 1.1.",
        ["1.1"],
        "short",
        "table",
    ),
    (
        "Table 1 compares",
        "ranking",
        "Which method has the second-best average LAS?",
        "Averages: 76.0 sparse, 74.9 full, 74.3 adapters, 73.4 LoRA. Second is full fine-tuning.",
        ["Full fine-tuning"],
        "short",
        "table",
    ),
    (
        "The gain is largest",
        "comparison",
        "On which language is the gain of sparse adapters over full fine-tuning largest?",
        "Gains: Wolof 0.7, Faroese 0.5, Tagalog 1.9, Yoruba 1.2. Tagalog is largest.",
        ["Tagalog"],
        "short",
        "table-text",
    ),
    (
        "Table 2 varies",
        "descriptive_analysis",
        "How does the sparsity level affect LAS and training time on Wolof?",
        "LAS rises from 78.2 to 79.1 up to 90% and falls to 77.6 at 95%; time falls from 14.0 to 9.1 minutes.",
        [
            "LAS improves up to 90% sparsity and drops at 95%, while training time decreases steadily, so 90% is the "
            "best trade-off."
        ],
        "free",
        "table-text",
    ),
    (
        "Table 1 compares",
        "counting",
        "On how many treebanks does LoRA score below 75 LAS?",
        "LoRA: 76.2, 78.8, 71.0, 67.7. Two are below 75.",
        ["2"],
        "short",
        "table",
    ),
    (
        "Table 2 varies",
        "arithmetic_calculation",
        "How many minutes per epoch are saved by going from 50% to 90% sparsity?",
        "14.0 - 9.8 = 4.2 minutes.",
        ["4.2"],
        "short",
        "table",
    ),
]
