"""The default reasoning-type taxonomy: SciTaT table 4 (types, subtypes, descriptions, shares in percent)."""

from __future__ import annotations

from itertools import count

# (type code, type name, type share, [(subtype code, subtype name, description, share)])
# SciTaT's text says 13 subtypes; its table 4 lists 12 rows (Tabulation has no subtypes), which we follow.
DEFAULT_TAXONOMY: list[tuple[str, str, float, list[tuple[str, str, str, float]]]] = [
    (
        "look_up",
        "Look Up",
        4.7,
        [
            ("table_lookup", "Table Look Up", "Find which table holds the information asked for.", 2.7),
            ("span_lookup", "Span Look Up", "Find a span of a table or a paragraph.", 2.0),
        ],
    ),
    (
        "numerical_reasoning",
        "Numerical Reasoning",
        46.0,
        [
            ("arithmetic_calculation", "Arithmetic Calculation", "Compute a value from numbers in the context.", 11.1),
            ("comparison", "Comparison", "Compare values with each other.", 8.2),
            ("aggregation", "Aggregation", "Combine several data points into one figure.", 3.9),
            ("ranking", "Ranking", "Put items in order by some value.", 7.0),
            ("counting", "Counting", "Count the items that meet a condition.", 9.2),
            (
                "domain_knowledge_calculation",
                "Domain Knowledge Calculation",
                "A calculation that needs knowledge of the field.",
                6.5,
            ),
        ],
    ),
    (
        "data_analysis",
        "Data Analysis",
        40.9,
        [
            (
                "descriptive_analysis",
                "Descriptive Analysis",
                "Summarise or interpret data to find patterns and trends.",
                23.3,
            ),
            ("anomaly_detection", "Anomaly Detection", "Find values that deviate and explain why.", 7.0),
            ("causal_analysis", "Causal Analysis", "Explain cause and effect behind the results.", 10.6),
        ],
    ),
    (
        "tabulation",
        "Tabulation",
        8.4,
        [("tabulation", "Tabulation", "Bring tables or parts of tables into a standard format.", 8.4)],
    ),
]


def seed_taxonomy(project, reasoning_type_model) -> None:
    """Create the default taxonomy for `project` unless it has one."""
    if reasoning_type_model.objects.filter(project=project).exists():
        return
    order = count()
    for code, name, share, subtypes in DEFAULT_TAXONOMY:
        # Tabulation has no subtypes of its own: the type carries the description.
        own = next((description for sub_code, _, description, _ in subtypes if sub_code == code), "")
        parent = reasoning_type_model.objects.create(
            project=project, code=code, name=name, description=own, target_proportion=share, order=next(order)
        )
        for sub_code, sub_name, description, sub_share in subtypes:
            if sub_code != code:
                reasoning_type_model.objects.create(
                    project=project,
                    parent=parent,
                    code=sub_code,
                    name=sub_name,
                    description=description,
                    target_proportion=sub_share,
                    order=next(order),
                )
