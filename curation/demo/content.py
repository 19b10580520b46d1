"""A small, invented paper (tables and text) and drafts over it, used by `manage.py demo`."""

from __future__ import annotations

PAPER = {
    "title": "Sparse Adapters for Low-Resource Dependency Parsing",
    "tables": [
        {
            "label": "tab:main",
            "number": "1",
            "caption": "Labelled attachment score (LAS) on the test sets of four low-resource treebanks.",
            "cells": [
                ["Method", "Params (M)", "Wolof", "Faroese", "Tagalog", "Yoruba", "Avg."],
                ["Full fine-tuning", "560", "78.4", "80.1", "71.9", "69.2", "74.9"],
                ["Adapters", "12.4", "77.0", "79.6", "72.5", "68.0", "74.3"],
                ["LoRA", "8.1", "76.2", "78.8", "71.0", "67.7", "73.4"],
                ["Sparse adapters (ours)", "3.2", "79.1", "80.6", "73.8", "70.4", "76.0"],
            ],
        },
        {
            "label": "tab:ablation",
            "number": "2",
            "caption": "Ablation on Wolof: effect of sparsity level on LAS and training time per epoch.",
            "cells": [
                ["Sparsity", "LAS", "Time (min)"],
                ["50%", "78.2", "14.0"],
                ["75%", "78.9", "11.5"],
                ["90%", "79.1", "9.8"],
                ["95%", "77.6", "9.1"],
            ],
        },
    ],
    "paragraphs": [
        ("Introduction", "Dependency parsers for low-resource languages are usually adapted from a large "
         "multilingual encoder. Full fine-tuning updates every weight, which is costly and overfits small treebanks.", []),
        ("Results", "Table 1 compares sparse adapters with full fine-tuning, dense adapters and LoRA on four "
         "treebanks. Sparse adapters train only 3.2M parameters yet reach the best average LAS, and they beat "
         "full fine-tuning on every language.", ["tab:main"]),
        ("Results", "The gain is largest on Tagalog, where the training treebank has fewer than 1,000 sentences; "
         "we attribute this to the regularising effect of sparsity (Table 1).", ["tab:main"]),
        ("Ablation", "Table 2 varies the sparsity level on Wolof. LAS rises up to 90% sparsity and drops at 95%, "
         "while training time keeps falling; we therefore use 90% in all other experiments.", ["tab:ablation"]),
        ("Conclusion", "Sparse adapters match or exceed full fine-tuning for low-resource parsing while training "
         "two orders of magnitude fewer parameters.", []),
    ],
}

# (paragraph index, reasoning subtype code, question, rationale, answer, form, source)
DRAFTS = [
    (1, "arithmetic_calculation", "By how many LAS points does the sparse adapter beat full fine-tuning on average?",
     "Average LAS is 76.0 for sparse adapters and 74.9 for full fine-tuning; 76.0 - 74.9 = 1.1.", ["1.1"], "short",
     "table"),
    (1, "ranking", "Which method has the second-best average LAS?",
     "Averages: 76.0 sparse, 74.9 full, 74.3 adapters, 73.4 LoRA. Second is full fine-tuning.", ["Full fine-tuning"],
     "short", "table"),
    (2, "comparison", "On which language is the gain of sparse adapters over full fine-tuning largest?",
     "Gains: Wolof 0.7, Faroese 0.5, Tagalog 1.9, Yoruba 1.2. Tagalog is largest.", ["Tagalog"], "short",
     "table-text"),
    (3, "descriptive_analysis", "How does the sparsity level affect LAS and training time on Wolof?",
     "LAS rises from 78.2 to 79.1 up to 90% and falls to 77.6 at 95%; time falls from 14.0 to 9.1 minutes.",
     ["LAS improves up to 90% sparsity and drops at 95%, while training time decreases steadily, so 90% is the "
      "best trade-off."], "free", "table-text"),
    (1, "counting", "On how many treebanks does LoRA score below 75 LAS?",
     "LoRA: 76.2, 78.8, 71.0, 67.7. Two are below 75.", ["2"], "short", "table"),
    (3, "arithmetic_calculation", "How many minutes per epoch are saved by going from 50% to 90% sparsity?",
     "14.0 - 9.8 = 4.2 minutes.", ["4.2"], "short", "table"),
]
