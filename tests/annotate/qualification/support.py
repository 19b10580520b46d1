"""Gold instances with distinctive answers, and an exam built from them, for the qualification tests."""

from __future__ import annotations

from tests.factories import ValidatedInstanceFactory

# (question, gold answer items, gold rationale). No gold string appears in the shared test context
# (a table of models A/B with 87.3/81.0 and "Table 1 shows A beats B."), so any hit in a response is a leak.
GOLD = [
    ("Which codename did the authors give the best model?", ["Zyxquorbel"], "Rationale-Marrowlight says Zyxquorbel."),
    ("Which two datasets were used?", ["Quillfeatherset", "Brambleworthset"], "Rationale-Thistledown lists both."),
    ("What is the reported score on the held-out split?", ["73.915"], "Rationale-Cindervale: 73.915 in the text."),
    ("Where was the data collected?", ["Vexmoor basin"], "Rationale-Gorsewick names Vexmoor basin."),
]
GOLD_STRINGS = [item for _, answer, _ in GOLD for item in answer] + [rationale for _, _, rationale in GOLD]


def make_gold(project, context, reasoning_type=None) -> list:
    """Validated instances with the GOLD questions, answers and rationales (and a draft carrying the answer)."""
    return [
        ValidatedInstanceFactory(
            project=project,
            context=context,
            reasoning_type=reasoning_type,
            question=question,
            answer=answer,
            rationale=rationale,
            draft={"question": question, "answer": answer, "rationale": rationale},
            reason="gold for tests",
        )
        for question, answer, rationale in GOLD
    ]


def correct_answers(instances) -> dict[str, dict]:
    return {str(i.pk): {"answer": list(i.answer), "rationale": "I read it."} for i in instances}
