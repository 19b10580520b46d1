"""Template drafter: questions over tables whose answers are computed by executed tool programs."""

from __future__ import annotations

import re
import statistics
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from curation.drafting.templates import TEMPLATES, asked_keys, draft_template_questions
from curation.latex import extract_paper
from curation.table_shape import shape_from_extracted, shape_from_rows
from curation.toolkit.numbers import clean_cell, format_number
from curation.toolkit.tools import ToolBox
from scoring.metrics.toolcalls import result_contains

# Every cell uses a different way of writing numbers; EXPECTED holds the values a person reads.
RESULTS = {
    "label": "tab:results",
    "caption": "Scores by year",
    "rows": [
        ["Model", "2019", "2020", "Cost"],
        ["Alpha", "**85.1**", "1,234", "$1,200"],
        ["Beta", "77.0†", "(3.0)", "$300"],
        ["Gamma", "85.3 ± 0.4", "\\textbf{66.6}$^*$", "$950"],
        ["Delta", "−2.5", "70.0‡", "$1,050"],
        ["Epsilon", "12.0¹", "1,000.5", "$ 80"],
    ],
}
EXPECTED = {
    "Alpha": {"2019": 85.1, "2020": 1234.0, "Cost": 1200.0},
    "Beta": {"2019": 77.0, "2020": -3.0, "Cost": 300.0},
    "Gamma": {"2019": 85.3, "2020": 66.6, "Cost": 950.0},
    "Delta": {"2019": -2.5, "2020": 70.0, "Cost": 1050.0},
    "Epsilon": {"2019": 12.0, "2020": 1000.5, "Cost": 80.0},
}
ROWS = list(EXPECTED)
# The same table with the row that shows its rows are parts of one whole: only such a table's columns are summed.
TOTALLED = {**RESULTS, "rows": [*RESULTS["rows"], ["Total", "256.9", "2,368.1", "$3,580"]]}
SUMS = ("pair_sum", "column_sum", "proportion_of_total")
CELLS = {row[0]: dict(zip(RESULTS["rows"][0], row, strict=True)) for row in RESULTS["rows"][1:]}
SUBTYPES = {"arithmetic_calculation", "comparison", "aggregation", "ranking", "counting", "span_lookup", "table_lookup"}


def _expected_answer(draft: dict) -> list[str]:
    slots = draft["slots"]
    column = slots.get("column")
    value = {row: EXPECTED[row][column] for row in ROWS} if column else {}
    template = draft["template_id"]
    if template == "cell_difference":
        return [format_number(value[slots["row_a"]] - value[slots["row_b"]])]
    if template == "cell_ratio":
        ratio = value[slots["row_a"]] / value[slots["row_b"]]
        # A ratio below one keeps two significant digits (0.054, not 0.05); a half is rounded up (1,050 / 80: 13.13).
        half_up = float(Decimal(str(ratio)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))
        return [f"{ratio:.2g}" if abs(ratio) < 1 else format_number(half_up)]
    if template == "pair_sum":
        return [format_number(value[slots["row_a"]] + value[slots["row_b"]])]
    if template == "change_between_columns":
        row = EXPECTED[slots["row"]]
        return [format_number(row[slots["column_b"]] - row[slots["column_a"]])]
    if template == "percentage_change":
        row = EXPECTED[slots["row"]]
        before, after = row[slots["column_a"]], row[slots["column_b"]]
        return [format_number((after - before) / before * 100) + "%"]
    if template == "proportion_of_total":
        return [format_number(value[slots["row"]] / sum(value.values()) * 100) + "%"]
    if template == "compare_two_rows":
        a, b = value[slots["row_a"]], value[slots["row_b"]]
        higher = slots["row_a"] if a > b else slots["row_b"]
        lower = slots["row_b"] if higher == slots["row_a"] else slots["row_a"]
        return [higher if slots["direction"] == "higher" else lower]
    if template == "largest_increase":
        changes = {row: EXPECTED[row][slots["column_b"]] - EXPECTED[row][slots["column_a"]] for row in ROWS}
        return [max(changes, key=changes.get)]
    if template == "extreme_row":
        return [(max if slots["direction"] == "highest" else min)(value, key=value.get)]
    if template == "extreme_value":
        # Read off, not computed: a span, the extreme cell as the table writes it ("(3.0)", never "-3").
        row = (max if slots["direction"] == "highest" else min)(value, key=value.get)
        return [clean_cell(CELLS[row][column])]
    if template == "column_sum":
        return [format_number(sum(value.values()))]
    if template == "column_mean":
        return [format_number(statistics.mean(value.values()))]
    if template == "subset_mean":
        return [format_number(statistics.mean(value[row] for row in slots["subset"]))]
    if template == "rank_position":
        return [str(sorted(value.values(), reverse=True).index(value[slots["row"]]) + 1)]
    if template == "top_k":
        return sorted(value, key=value.get, reverse=True)[: slots["k"]]
    if template == "count_beyond_row":
        reference = value[slots["row"]]
        if slots["direction"] == "higher":
            return [str(sum(1 for number in value.values() if number > reference))]
        return [str(sum(1 for number in value.values() if number < reference))]
    if template == "above_mean":
        return ["yes" if value[slots["row"]] > statistics.mean(value.values()) else "no"]
    if template == "rows_above_mean":
        return [row for row in ROWS if value[row] > statistics.mean(value.values())]
    raise AssertionError(f"no independent check for {template}")


def test_at_least_twelve_templates_with_two_to_four_phrasings_covering_the_subtypes():
    assert len(TEMPLATES) >= 12
    assert len({template.template_id for template in TEMPLATES}) == len(TEMPLATES)
    for template in TEMPLATES:
        assert 2 <= len(template.phrasings) <= 4, template.template_id
        assert template.subtype in SUBTYPES
    assert {template.subtype for template in TEMPLATES} == SUBTYPES


def test_numeric_answers_match_an_independent_computation_on_every_parsing_case():
    drafts = draft_template_questions([RESULTS], seed=3, per_template=50)
    assert not {draft["template_id"] for draft in drafts} & set(SUMS)  # nothing shows these columns add up
    drafts += draft_template_questions([TOTALLED], seed=3, per_template=50, template_ids=SUMS)
    checked = [draft for draft in drafts if draft["template_id"] not in ("span_lookup", "table_lookup")]
    assert {draft["template_id"] for draft in checked} == {
        template.template_id for template in TEMPLATES if template.subtype not in ("span_lookup", "table_lookup")
    }
    for draft in checked:
        assert draft["is_answerable"]
        assert draft["answer"] == _expected_answer(draft), (draft["question"], draft["slots"])


def test_known_answers_for_hand_picked_questions():
    drafts = draft_template_questions([RESULTS], seed=0, per_template=500)
    drafts += draft_template_questions([TOTALLED], seed=0, per_template=500, template_ids=SUMS)
    by_slots = {(draft["template_id"], repr(sorted(draft["slots"].items()))): draft for draft in drafts}

    def find(template_id: str, **slots: object) -> dict:
        key = (template_id, repr(sorted({**slots, "table": "tab:results"}.items())))
        return by_slots[key]

    assert find("cell_difference", column="Cost", row_a="Alpha", row_b="Beta")["answer"] == ["900"]
    assert find("largest_increase", column_a="2019", column_b="2020")["answer"] == ["Alpha"]
    assert find("extreme_row", column="2019", direction="lowest")["answer"] == ["Delta"]
    assert find("rank_position", column="2020", row="Gamma")["answer"] == ["4"]
    assert find("count_beyond_row", column="Cost", row="Delta", direction="higher")["answer"] == ["1"]
    assert find("column_sum", column="Cost", whole="Total")["answer"] == ["3580"]
    assert find("proportion_of_total", column="Cost", row="Gamma", whole="Total")["answer"] == ["26.54%"]
    assert find("top_k", column="2019", k=3)["answer"] == ["Gamma", "Alpha", "Beta"]
    assert find("percentage_change", row="Alpha", column_a="2019", column_b="2020")["answer"] == ["1350.06%"]


def test_extreme_value_answers_the_cell_as_written_and_a_mean_the_computed_number():
    scores = {
        "label": "tab:s",
        "caption": "Scores",
        "rows": [["Model", "Acc"], ["A", "71.0"], ["B", "65.0"], ["C", "70.5"]],
    }
    drafts = draft_template_questions([scores], seed=0, per_template=5, template_ids=["extreme_value", "column_mean"])
    (extreme,) = [draft for draft in drafts if draft["template_id"] == "extreme_value"]
    (mean,) = [draft for draft in drafts if draft["template_id"] == "column_mean"]
    # The highest (or lowest) is read off the table: its cell "71.0", not the number 71; the mean is computed.
    assert extreme["answer"] == ["71.0" if extreme["slots"]["direction"] == "highest" else "65.0"]
    assert mean["answer"] == ["68.83"]


def test_span_lookup_answers_the_cell_without_markup():
    drafts = draft_template_questions([RESULTS], seed=1, per_template=100, template_ids=["span_lookup"])
    gamma_2020 = [d for d in drafts if d["slots"]["row"] == "Gamma" and d["slots"]["column"] == "2020"]
    assert gamma_2020 and gamma_2020[0]["answer"] == ["66.6"]
    assert all(draft["reasoning_subtype"] == "span_lookup" for draft in drafts)
    # A table of marks (the research questions each paper answers, as a thesis prints them) has no value to look up.
    marks = {"label": "tab:rq", "rows": [["", "P1", "P2"], ["RQ1", "•", ""], ["RQ2", "✓", "Yes"]]}
    assert [d["answer"] for d in draft_template_questions([marks], per_template=10, template_ids=["span_lookup"])] == [
        ["Yes"]
    ]


def test_output_is_plain_dicts_with_provenance():
    draft = draft_template_questions([RESULTS], seed=0, template_ids=["cell_ratio"])[0]
    assert set(draft) >= {
        "question", "answer", "answer_form", "answer_source", "reasoning_subtype", "template_id",
        "phrasing_index", "essential_actions", "relevant_tables", "is_answerable",
    }  # fmt: skip
    assert draft["answer_form"] == "short" and draft["answer_source"] == "table"
    assert draft["relevant_tables"] == ["tab:results"]
    template = next(t for t in TEMPLATES if t.template_id == "cell_ratio")
    assert 0 <= draft["phrasing_index"] < len(template.phrasings)
    tools = [action["tool"] for action in draft["essential_actions"]]
    # Discovery (the tables, then each row and the column read), then the program.
    discovery = ["list_tables", "search_row_names", "search_column_names", "search_row_names"]
    assert tools == [*discovery, "get_cell", "get_cell", "divide"]


def test_essential_actions_replay_to_the_same_results():
    toolbox = ToolBox([RESULTS])
    for draft in draft_template_questions([RESULTS], seed=5, per_template=3):
        assert draft["essential_actions"], draft["template_id"]
        for action in draft["essential_actions"]:
            outcome = toolbox.execute(action["tool"], action["arguments"])
            if action["tool"].startswith("search_"):
                # A search stores the name it must find; replaying it finds that name among its hits.
                assert outcome.ok and result_contains(outcome.result, action["result"]), action
            else:
                assert outcome.ok and outcome.result == action["result"]


def test_deterministic_for_a_seed():
    first = draft_template_questions([RESULTS], seed=11)
    assert first == draft_template_questions([RESULTS], seed=11)
    assert first != draft_template_questions([RESULTS], seed=12)


WITH_GAP = {
    "label": "tab:gap",
    "caption": "A table with a missing cell",
    "rows": [["Method", "Score"], ["A", "10"], ["B", "-"], ["C", "30"], ["D", "40"]],
}


def test_missing_cells_are_skipped_by_default():
    drafts = draft_template_questions([WITH_GAP], seed=0, per_template=100)
    assert drafts and all(draft["is_answerable"] for draft in drafts)
    for draft in drafts:
        assert all(action["result"] != "-" for action in draft["essential_actions"] if action["tool"] == "get_cell")
    assert not any(draft["template_id"] in ("column_sum", "column_mean", "extreme_row") for draft in drafts)


def test_missing_cells_can_be_kept_as_unanswerable():
    drafts = draft_template_questions([WITH_GAP], seed=0, include_unanswerable=True)
    unanswerable = [draft for draft in drafts if not draft["is_answerable"]]
    assert {draft["template_id"] for draft in unanswerable} >= {"column_mean", "cell_difference"}
    for draft in unanswerable:
        assert draft["answer"] == []
        assert draft["question"]
    column_mean = next(draft for draft in unanswerable if draft["template_id"] == "column_mean")
    column = next(action for action in column_mean["essential_actions"] if action["tool"] == "get_column")
    assert column["result"]["B"] == "-"


def test_mixed_units_are_never_combined():
    table = {
        "label": "tab:size",
        "caption": "Sizes",
        "rows": [["Model", "Params"], ["A", "125M"], ["B", "1.5B"], ["C", "340M"], ["D", "7B"]],
    }
    drafts = draft_template_questions([table], seed=0, per_template=100)
    for draft in drafts:
        cells = [action["result"] for action in draft["essential_actions"] if action["tool"] == "get_cell"]
        assert len({cell[-1] for cell in cells}) <= 1, draft["question"]
    templates = {draft["template_id"] for draft in drafts}
    assert "cell_difference" in templates  # 125M vs 340M is fine
    assert not templates & {"column_sum", "column_mean", "extreme_row", "rank_position", "top_k"}


def test_summary_rows_are_left_out_of_aggregates():
    table = {
        "label": "tab:money",
        "caption": "Revenue",
        "rows": [["Segment", "Revenue"], ["North", "100"], ["South", "200"], ["East", "300"], ["Total", "600"]],
    }
    drafts = draft_template_questions([table], seed=0, per_template=100)
    (total,) = [draft for draft in drafts if draft["template_id"] == "column_sum"]
    assert total["answer"] == ["600"] and total["slots"]["whole"] == "Total"  # its Total row is no fourth segment
    assert total["rationale"].endswith("300 for East under Revenue. Their sum is 600.")
    (mean,) = [draft for draft in drafts if draft["template_id"] == "column_mean"]
    assert mean["answer"] == ["200"]  # of the three segments: a total is no segment
    lookups = [draft["slots"]["row"] for draft in drafts if draft["template_id"] == "span_lookup"]
    assert lookups and "Total" not in lookups  # "What Revenue is reported for Total?": the sum asks for it
    printed = [["Segment", "Revenue"], ["North", "100"], ["South", "200"], ["East", "300"], ["Average", "200"]]
    means = draft_template_questions(
        [{"label": "tab:m", "rows": printed}], per_template=100, template_ids=["column_mean"]
    )
    assert means == []  # the table prints it: asked, it is a look-up
    shares = [draft for draft in drafts if draft["template_id"] == "extreme_row"]
    assert {draft["answer"][0] for draft in shares} <= {"East", "North"}


def test_only_rows_the_table_shows_to_be_parts_of_a_whole_are_summed_and_the_draft_names_that_evidence():
    def sums(*rows: list[str]) -> dict[str, set]:
        table = {"label": "tab:t", "rows": [["Name", "Value"], *rows]}
        drafts = draft_template_questions([table], seed=0, per_template=50, template_ids=SUMS)
        return {template: {d["slots"]["whole"] for d in drafts if d["template_id"] == template} for template in SUMS}

    parts = [["North", "100.4"], ["South", "200.3"], ["East", "300"]]
    assert sums(*parts, ["Total", "600.7"]) == {template: {"Total"} for template in SUMS}
    assert sums(*parts, ["Total sales", "600.7"])["column_sum"] == {"Total sales"}
    # "Totals:" as conflicts_totals_row.tex writes it (it was a fourth row, listed above the mean and summed again).
    assert sums(*parts, ["Totals:", "600.7"])["column_sum"] == {"Totals:"}
    assert sums(*parts, ["Total", "601"]) == {template: set() for template in SUMS}  # off by more than its precision
    assert sums(*parts) == {template: set() for template in SUMS}  # accuracies, costs or p-values: nothing tells
    # Shares of 100% (rounding aside) add up, in pairs: their total is the whole itself, and a share of it the cell.
    shares = sums(["Useful", "33.3%"], ["Neutral", "33.3%"], ["Not useful", "33.3%"])
    assert shares == {"pair_sum": {"100%"}, "column_sum": set(), "proportion_of_total": set()}
    # A market's regions, as a report prints them: their shares' Total row says 100%, which a total asked for repeats.
    regions = [["North America", "40.3%"], ["Europe", "26.8%"], ["Asia-Pacific", "23.2%"], ["Rest of World", "9.7%"]]
    assert sums(*regions, ["Total", "100%"]) == shares
    assert sums(["BERT", "85.1%"], ["RoBERTa", "88.0%"], ["GPT-2", "71.9%"]) == {template: set() for template in SUMS}
    two_parts = sums(["Deletion", "18,010"], ["Substitution", "1,407"], ["Total", "19,417"])
    assert two_parts["pair_sum"] == set()  # the only pair of parts is the Total row itself
    # A curation breakdown as a paper prints it: its Total row adds up every column, its Total column among them.
    splits = [["Split", "Fall", "Non-fall", "Total"], ["Train", "2,620", "1,628", "4,248"],
              ["Val", "655", "407", "1,062"], ["Test", "323", "208", "531"],
              ["Total", "3,598", "2,243", "5,841"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:curation", "rows": splits}], per_template=50, template_ids=SUMS)
    assert {draft["slots"]["column"] for draft in drafts} == {"Fall", "Non-fall", "Total"}
    assert _one(drafts, "column_sum", column="Total")["answer"] == ["5841"]


def test_ties_do_not_become_questions():
    table = {
        "label": "tab:tie",
        "caption": "Tie",
        "rows": [["Model", "Score"], ["A", "90"], ["B", "90"], ["C", "50"], ["D", "40"]],
    }
    drafts = draft_template_questions([table], seed=0, per_template=100)
    highest = [d for d in drafts if d["template_id"] == "extreme_row" and d["slots"]["direction"] == "highest"]
    assert highest == []
    assert not any(
        d["template_id"] == "compare_two_rows" and {d["slots"]["row_a"], d["slots"]["row_b"]} == {"A", "B"}
        for d in drafts
    )


def test_table_lookup_needs_several_tables_and_names_the_right_one():
    other = {"label": "tab:other", "caption": "Other", "rows": [["Model", "Speed"], ["Zeta", "3"], ["Eta", "4"]]}
    assert not draft_template_questions([RESULTS], template_ids=["table_lookup"])
    drafts = draft_template_questions([RESULTS, other], seed=2, per_template=10, template_ids=["table_lookup"])
    assert drafts
    for draft in drafts:
        assert draft["answer"] == [draft["slots"]["table"]]  # unnamed tables: the label is all there is
        assert draft["reasoning_subtype"] == "table_lookup"
    named = draft_template_questions(
        [{**RESULTS, "name": "Table 2"}, {**other, "name": "Table 5"}],
        seed=2,
        per_template=10,
        template_ids=["table_lookup"],
    )
    assert named and {tuple(draft["answer"]) for draft in named} <= {("Table 2",), ("Table 5",)}
    for draft in named:
        assert draft["answer"] == [{"tab:results": "Table 2", "tab:other": "Table 5"}[draft["slots"]["table"]]]


def test_header_paraphrase_hook_is_used():
    seen: list[str] = []

    def phrases(header: str) -> list[str]:
        seen.append(header)
        return {"Cost": ["running cost", "cost of operation"]}.get(header, [])

    drafts = draft_template_questions(
        [RESULTS], seed=0, template_ids=["extreme_row"], per_template=20, header_phrases=phrases
    )
    cost = [draft for draft in drafts if draft["slots"]["column"] == "Cost"]
    assert cost and all("running cost" in d["question"] or "cost of operation" in d["question"] for d in cost)
    assert "Cost" in seen


def test_unknown_template_id_is_rejected():
    with pytest.raises(ValueError):
        draft_template_questions([RESULTS], template_ids=["nope"])


def test_no_tables_no_questions():
    assert draft_template_questions([]) == []


# What a person reads: numbers as the table writes them, "Table N", header names only, a rationale per step.
WRITTEN = {
    "label": "tab:acc",
    "name": "Table 3",
    "rows": [
        ["Model", "Acc", "Size"],
        ["A", "12.5%", "1,200"],
        ["B", "10%", "2,000"],
        ["C", "7.5%", "5,000,000,000,000,000"],
        ["D", "3%", "4,900,000,000,000,000"],
    ],
}
OTHER = {"label": "tab:other", "name": "Table 4", "rows": [["Model", "Speed"], ["Zeta", "3"], ["Eta", "4"]]}


def _one(drafts: list[dict], template_id: str, **slots: object) -> dict:
    (draft,) = [
        d for d in drafts if d["template_id"] == template_id and all(d["slots"].get(k) == v for k, v in slots.items())
    ]
    return draft


def test_percentages_keep_their_sign_and_huge_values_have_no_float_digits():
    drafts = draft_template_questions([WRITTEN], seed=0, per_template=500)
    difference = _one(drafts, "cell_difference", column="Acc", row_a="A", row_b="D")
    assert difference["answer"] == ["9.5%"]
    assert difference["rationale"] == "Table 3 gives 12.5% for A and 3% for D under Acc. 12.5% minus 3% is 9.5%."
    assert _one(drafts, "cell_ratio", column="Acc", row_a="D", row_b="A")["answer"] == ["0.24"]  # a ratio has no %
    mean = _one(drafts, "column_mean", column="Size")
    assert mean["answer"] == ["2.475e15"]
    assert "4,900,000,000,000,000 for D" in mean["rationale"]
    for draft in drafts:
        assert not re.search(r"\d{16,}", " ".join([draft["question"], *draft["answer"], draft["rationale"]])), draft


def test_sums_in_the_rationale_group_thousands_as_the_table_does():
    rows = [["Item", "Cost"], ["Rent", "1,250"], ["Food", "2,300.5"], ["Bus", "75"], ["Total", "3,625.5"]]
    table = {"label": "tab:c", "rows": rows}
    (total,) = draft_template_questions([table], template_ids=["column_sum"])
    assert (
        total["rationale"]
        == "tab:c gives 1,250 for Rent, 2,300.5 for Food and 75 for Bus under Cost. Their sum is 3,625.5."
    )


def test_questions_name_tables_as_the_paper_does_and_the_toolbox_keeps_its_labels():
    drafts = draft_template_questions([WRITTEN, OTHER], seed=1, per_template=3)
    named = [d for d in drafts if d["template_id"] != "table_lookup"]
    assert named and all(" in Table 3" in d["question"] or " in Table 4" in d["question"] for d in named)
    assert not any("tab:" in d["question"] or "tab:" in d["rationale"] for d in drafts)
    for draft in drafts:
        assert {action["arguments"].get("table") for action in draft["essential_actions"]} <= {
            None,
            "tab:acc",
            "tab:other",
        }


def test_data_values_are_never_asked_about_as_column_names():
    # A header row that is really data (a misdetected header) and a table flagged as having no header.
    misread = {
        "label": "tab:m",
        "rows": [["BERT", "81.3", "79.1%"], ["ELMo", "78.2", "75.0%"], ["GloVe", "70.1", "69%"]],
    }
    headerless = {"label": "tab:h", "has_header": False, "rows": [["Learning rate", "0.001"], ["Batch size", "32"]]}
    assert draft_template_questions([misread], per_template=50) == []
    assert draft_template_questions([headerless], per_template=50) == []
    years = {"label": "tab:y", "rows": [["Firm", "2019", "2020"], ["X", "1", "2"], ["Y", "3", "5"], ["Z", "4", "9"]]}
    assert {
        d["slots"].get("column_a") for d in draft_template_questions([years], template_ids=["largest_increase"])
    } == {"2019"}


def test_every_answerable_draft_has_a_rationale_of_one_sentence_per_step():
    drafts = draft_template_questions([RESULTS], seed=5, per_template=3)
    for draft in drafts:
        assert draft["rationale"].endswith("."), draft
        assert draft["rationale"].startswith("tab:results gives") or draft["template_id"] == "table_lookup"


def test_a_context_assigned_a_reasoning_type_is_drafted_only_that_type():
    default = draft_template_questions([RESULTS], seed=0)
    assert (
        default[0]["reasoning_subtype"] == "arithmetic_calculation"
        and len({d["reasoning_subtype"] for d in default}) > 2
    )
    comparison = draft_template_questions([RESULTS], seed=0, subtypes=["comparison"])
    assert comparison and {d["reasoning_subtype"] for d in comparison} == {"comparison"}
    assert {d["question"] for d in comparison} == {
        d["question"] for d in default if d["reasoning_subtype"] == "comparison"
    }
    # A type and its subtypes, in the assigned order.
    both = draft_template_questions([RESULTS], seed=0, subtypes=["ranking", "counting"])
    kinds = [d["reasoning_subtype"] for d in both]
    assert set(kinds) == {"ranking", "counting"} and kinds.index("counting") > max(
        i for i, kind in enumerate(kinds) if kind == "ranking"
    )


def test_twenty_templates_with_the_boolean_and_list_answers_the_meta_paper_asks_for():
    assert len(TEMPLATES) == 20
    drafts = draft_template_questions(
        [RESULTS], seed=7, per_template=50, template_ids=["above_mean", "rows_above_mean"]
    )
    assert {d["template_id"] for d in drafts} == {"above_mean", "rows_above_mean"}
    boolean = [d for d in drafts if d["template_id"] == "above_mean"]
    assert {tuple(d["answer"]) for d in boolean} == {("yes",), ("no",)}
    for draft in drafts:
        tools = [action["tool"] for action in draft["essential_actions"]]
        assert tools[:2] == ["list_tables", "search_column_names"], tools  # the discovery step stays essential
        assert tools[2:4] == ["get_column", "mean"] and set(tools[4:]) == {"greater_than"}
        replay = ToolBox([RESULTS])
        for action in draft["essential_actions"][2:]:
            assert result_contains(replay.call(action["tool"], action["arguments"]), action["result"])


# chrisdonahue/sheetsage, table hooktheory_test (three-decimal F1 scores), and the first column of
# Dz298/ICRA23_universal_drone_controller's table, whose header is empty.
ONSET_F1 = {
    "label": "tab:hooktheory_test",
    "caption": "HookTheory test set performance of different combinations of representations.",
    "rows": [["", "d", "Onset F1"], ["Mel", "229", "0.514"], ["MT3", "512", "0.550"], ["Mel, MT3", "741", "0.548"]],
}


def test_a_computed_answer_keeps_the_precision_its_cells_are_written_in():
    drafts = draft_template_questions([ONSET_F1], seed=0, per_template=50, template_ids=["cell_difference"])
    f1 = [draft for draft in drafts if draft["slots"]["column"] == "Onset F1"]
    assert f1
    for draft in f1:
        values = {row[0]: float(row[2]) for row in ONSET_F1["rows"][1:]}
        expected = values[draft["slots"]["row_a"]] - values[draft["slots"]["row_b"]]
        assert draft["answer"] == [format_number(expected, decimals=3)], draft["rationale"]


def test_an_unnamed_first_column_counts_entries():
    questions = [draft["question"] for draft in draft_template_questions([ONSET_F1], seed=0, per_template=20)]
    assert any("entries" in question for question in questions)
    assert not any("entrys" in question for question in questions)


def test_a_header_ending_in_an_abbreviation_ends_the_sentence_once():
    # PREDICT-EPFL/piqp, table time: median solve time in milliseconds, "Multi." for the multistage backend.
    timings = {
        "label": "tab:time",
        "caption": "Median solve time in milliseconds.",
        "rows": [["Instance", "Dense", "Multi."], ["Quadratic, n=128", "0.630", "0.255"], ["nql30", "--", "85.242"]],
    }
    drafts = draft_template_questions([timings], seed=0, per_template=5)
    assert any("under Multi." in draft["rationale"] for draft in drafts)
    assert not any(".." in draft["rationale"] for draft in drafts)


def test_rows_are_named_by_the_columns_that_identify_them_and_those_are_not_asked_about():
    # embedders_dilemma's table (benchmarks/papers/templates): a rotated group label, then the model name.
    embedders = {
        "label": "tab:e",
        "rows": [
            ["", "Model", "Params", "Cls (8)", "Cost"],
            ["LLM", "Gemini 3.1 Pro", "–", "85.2", "$154"],
            ["LLM", "Kimi-K2.6", "–", "84.5", "$111"],
            ["LLM", "Gemini 3.1 Flash Lite", "–", "82.9", "$7"],
            ["Embedding", "Jina-v5-S", "596M", "90.4", "$0.03"],
            ["Embedding", "SFR-2", "7.1B", "90.8", "$0.14"],
        ],
    }
    drafts = draft_template_questions([embedders], per_template=50)
    questions = " ".join(draft["question"] for draft in drafts)
    assert "Gemini 3.1 Flash Lite" in questions
    assert "LLM" not in questions and "Embedding" not in questions
    assert "Model" not in questions  # the name column is no value of a row
    assert any(draft["question"].startswith("How many models") for draft in drafts)


@pytest.mark.parametrize(
    ("entity", "plural", "one"),
    [("Approach", "approaches", "approach"), ("Model", "models", "model"), ("Strategy", "strategies", "strategy"),
     ("Box", "boxes", "box"), ("Days", "days", "day"), ("Series", "series", "series"),
     ("Contractual Obligations", "contractual obligations", "contractual obligation"),
     ("Process Technologies", "process technologies", "process technology")],
)  # fmt: skip
def test_questions_name_the_rows_in_the_plural_english_gives_them_and_one_of_them_in_the_singular(entity, plural, one):
    table = {
        "label": "tab:t",
        "caption": "Scores",
        "rows": [[entity, "Acc"], ["A", "1.0"], ["B", "2.0"], ["C", "3.0"], ["D", "5.0"]],
    }
    drafts = draft_template_questions([table], seed=0, per_template=1, template_ids=["column_mean"])
    assert [draft["question"] for draft in drafts] == [f"What is the average Acc across all {plural}?"]
    # "Which contractual obligations reports the highest Total?" had named one row by its header's plural.
    extremes = draft_template_questions([table], seed=1, per_template=2, template_ids=["extreme_row"])
    asked = [draft["question"] for draft in extremes if draft["question"].startswith("Which")]
    assert asked and all(question.startswith(f"Which {one} ") for question in asked), asked


# Two tables set side by side under one caption, each half naming its rows again (the programmable-kv paper's
# Table 4, 19PINE-AI): a two-row header, and a second "model" column that repeats the row names.
SIDE_BY_SIDE = {
    "label": "tab:deepmech",
    "rows": [
        ["(i) Dissociation", "(i) Dissociation", "(ii) Specificity", "(ii) Specificity", "(ii) Specificity"],
        ["model", "notes", "model", "top-8", "rand-8"],
        ["Qwen3-8B", "1.004", "Qwen3-8B", "0.78", "0.009"],
        ["Qwen3-4B", "1.009", "Qwen3-4B", "0.74", "0.035"],
        ["Llama-3.1-8B", "0.998", "Llama-3.1-8B", "0.79", "0.005"],
    ],
    "header_rows": 2,
}


def test_a_layered_header_names_the_rows_by_its_lowest_level_and_a_repeated_name_column_is_no_value():
    drafts = draft_template_questions([SIDE_BY_SIDE], seed=0, per_template=50)
    questions = [draft["question"] for draft in drafts]
    assert any("models" in question for question in questions)
    assert not any("Dissociation - models" in question for question in questions)
    assert not any(draft["slots"].get("column", "").endswith("model") for draft in drafts)


def test_a_small_ratio_keeps_two_significant_digits():
    # The programmable-kv paper's Table 6: recompute of each method, as a share of a full reprefill.
    frontier = {
        "label": "tab:frontier",
        "rows": [["method", "recompute"], ["full reprefill", "100%"], ["in_place edit", "0.6%"], ["erratum", "12.0%"]],
    }
    drafts = draft_template_questions([frontier], seed=0, per_template=50, template_ids=["cell_ratio"])
    answers = {(d["slots"]["row_a"], d["slots"]["row_b"]): d["answer"] for d in drafts}
    assert answers[("in_place edit", "full reprefill")] == ["0.006"]  # two decimals would say 0.01
    assert answers[("in_place edit", "erratum")] == ["0.05"]
    assert answers[("erratum", "full reprefill")] == ["0.12"]


def test_a_question_asked_before_is_not_drafted_again_the_template_takes_its_next_candidate():
    first = draft_template_questions([RESULTS], seed=0, per_template=1)
    asked = set().union(*(asked_keys(d["question"], d["template_id"], d["slots"]) for d in first))
    second = draft_template_questions([RESULTS], seed=0, per_template=1, asked=asked)
    assert second and not {d["question"] for d in first} & {d["question"] for d in second}
    # A whole-column question is one question however it is phrased.
    columns = {(d["template_id"], d["slots"].get("column")) for d in first if d["template_id"] == "column_mean"}
    assert columns and not columns & {(d["template_id"], d["slots"].get("column")) for d in second}


# Laid out as the event-study tables of a World Cup thesis (github.com/saiboT-Damaske/The-Effect-of-Winning-a-World-Cup,
# no license stated); the numbers are made up. Its standard errors stand in parentheses under their own header.
EVENT_STUDY = {
    "label": "tab:event",
    "rows": [
        ["", "Coefficient", "Std. Error"],
        ["Host", "-0.52", "(0.48)"],
        ["k = -2", "-0.61", "(0.43)"],
        ["k = +1", "0.45*", "(0.25)"],
        ["k = +3", "0.23", "(0.34)"],
    ],
}


def test_standard_errors_in_parentheses_are_spreads_not_negative_numbers():
    drafts = draft_template_questions([EVENT_STUDY], seed=0, per_template=500)
    difference = _one(drafts, "cell_difference", column="Std. Error", row_a="Host", row_b="k = -2")
    assert difference["answer"] == ["0.05"]
    assert _one(drafts, "column_mean", column="Std. Error")["answer"] == ["0.38"]  # (0.48 + 0.43 + 0.25 + 0.34) / 4
    assert not [draft for draft in drafts if draft["template_id"] in SUMS]  # a sum of standard errors means nothing
    assert _one(drafts, "extreme_row", column="Std. Error", direction="highest")["answer"] == ["Host"]
    assert _one(drafts, "extreme_value", column="Std. Error", direction="lowest")["answer"] == ["(0.25)"]
    # The coefficients keep their signs.
    assert _one(drafts, "cell_difference", column="Coefficient", row_a="k = +1", row_b="Host")["answer"] == ["0.97"]


# Rows of Table 1 of github.com/dianamonea/Shannon-production-schedule (latex_tables/all_tables.tex, MIT license):
# "LaCAM*" is LaCAM*, not a footnote on LaCAM, but both read "LaCAM" once the mark goes.
SOLVERS = {
    "label": "tab:main_comparison",
    "rows": [
        ["Method", "Succ.", "Time"],
        ["CBS", "55.0", "85.2"],
        ["EECBS", "72.0", "52.3"],
        ["LaCAM", "97.0", "6.2"],
        ["LaCAM*", "95.0", "7.5"],
        ["SCRIMP$^\\dagger$", "85.0", "12.5"],
    ],
}
# A panel laid out as a thesis's summary statistics (made-up numbers): each variable again under each period.
PANEL = {
    "label": "tab:summary",
    "rows": [
        ["", "Winner", "Non-winner"],
        ["1962–1980", "", ""],
        ["GDP", "1320", "550"],
        ["Exports", "150", "45"],
        ["Population", "54.4", "26.2"],
        ["2000–2021", "", ""],
        ["GDP", "3130", "1390"],
        ["Exports", "860", "320"],
        ["Population", "85.1", "66.8"],
        ["Countries", "6", "42"],
    ],
}


def test_rows_a_reader_cannot_tell_apart_are_named_by_no_question_or_answer():
    for table in (SOLVERS, PANEL):
        drafts = draft_template_questions([table], seed=0, per_template=500)
        assert drafts
        for draft in drafts:
            words = " ".join([draft["question"], *draft["answer"]])
            assert not re.search(r"\(\d\)", words), words  # "LaCAM (2)", "Exports (2)": names the paper never uses
            assert not re.search(r"\bLaCAM\b|\bGDP\b|\bExports\b|\bPopulation\b", words), words
    # The rows still count where a whole column is averaged.
    means = draft_template_questions([SOLVERS], template_ids=["column_mean"], seed=0, per_template=5)
    mean = _one(means, "column_mean", column="Succ.")
    assert mean["answer"] == ["80.8"]  # (55 + 72 + 97 + 95 + 85) / 5
    assert "97.0 for LaCAM, 95.0 for LaCAM* and 85.0 for SCRIMP" in mean["rationale"]


def test_a_regression_tables_fit_statistics_are_no_entries_beside_its_coefficients():
    # The event-time rows are one variable at points of an axis: they are compared, averaged and ranked.
    fit = [["Observations", "8,637", ""], ["Within R$^2$", "0.42", ""]]
    table = {**EVENT_STUDY, "rows": [EVENT_STUDY["rows"][0], *EVENT_STUDY["rows"][2:], *fit]}
    drafts = draft_template_questions([table], seed=0, per_template=500)
    assert {"column_mean", "extreme_row", "cell_difference"} <= {draft["template_id"] for draft in drafts}
    assert _one(drafts, "column_mean", column="Coefficient")["answer"] == [
        "0.023"
    ]  # (-0.61 + 0.45 + 0.23) / 3, two digits kept
    for draft in drafts:
        if draft["template_id"] != "span_lookup":
            assert not re.search(r"Observations|Within", " ".join([draft["question"], *draft["answer"]])), draft
            assert "8,637" not in draft["rationale"], draft["rationale"]
    # A within-R² written with its subscript (tests/curation/latex/fixtures/**/panel_fixed_effects.tex) is one too.
    panel = [["", "Q", "S"], ["β_sent", "0.124***", "0.098**"], ["R^2_w", "0.031", "0.024"], ["N", "12,040", "12,040"],
             ["R2", "0.052", "0.049"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:fe", "rows": panel}], seed=0, per_template=50)
    assert drafts and {draft["template_id"] for draft in drafts} == {"span_lookup"}  # β_sent is all that is left


def test_a_regression_tables_variables_are_not_compared_coefficient_with_coefficient():
    # tests/curation/latex/fixtures/**/esttab_dependent_variable_title.tex, as extracted: a bandwidth beside a
    # coefficient had been "By how much does Bandwidth exceed Passive (scaled)?", answered 99.949.
    header = ["", "Sample years = 1998-2002 - (1)", "Sample years = 1998-2002 - (2)", "Sample years = 2003-2006 - (3)"]
    rows = [header, ["Passive (scaled)", "0.051**", "0.047**", "0.012"], ["Bandwidth", "100", "200", "100"],
            ["Observations", "1,204", "2,310", "1,190"], ["Mean", "0.61", "0.62", "0.66"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:passive", "rows": rows}], seed=0, per_template=50)
    assert {draft["template_id"] for draft in drafts} == {"span_lookup"}
    assert {draft["slots"]["row"] for draft in drafts} >= {"Passive (scaled)", "Bandwidth"}  # each still looked up
    # So with the Host row beside the event-time rows: Host is another variable, and "all entries" would leave it out.
    table = {**EVENT_STUDY, "rows": [*EVENT_STUDY["rows"], ["Observations", "8,637", ""]]}
    assert {draft["template_id"] for draft in draft_template_questions([table], seed=0, per_template=50)} == {
        "span_lookup"
    }
    # Without a fit reported, the same rows are a results table's entries, compared as before.
    assert "cell_difference" in {draft["template_id"] for draft in draft_template_questions([EVENT_STUDY], seed=0)}


def test_a_column_of_years_is_ordered_and_subtracted_never_divided_or_averaged():
    # Laid out as the board survey of a thesis (tests/curation/latex/fixtures/**/mora_thesis_landscape_longtable.tex):
    # "What is the average Released across all names?" had been answered 2012.96.
    rows = [["Name", "Released", "Price"], ["Arduino", "2005", "$20"], ["RaspberryPi", "2012", "$35"],
            ["Bitalino", "2013", "$149"], ["Airboard", "2015", "$39"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:boards", "rows": rows}], seed=0, per_template=50)
    on_years = {draft["template_id"] for draft in drafts if draft["slots"].get("column") == "Released"}
    assert {"cell_difference", "extreme_row", "rank_position", "count_beyond_row"} <= on_years
    assert not on_years & {"cell_ratio", "column_mean", "subset_mean", "above_mean", "rows_above_mean"}
    assert _one(drafts, "column_mean", column="Price")["answer"] == ["60.75"]  # amounts are averaged as before
    assert _one(drafts, "cell_difference", column="Released", row_a="Airboard", row_b="Arduino")["answer"] == ["10"]


def test_a_number_in_scientific_notation_keeps_its_precision_in_a_computed_answer():
    # Energy by stage (made-up numbers), one written as a learning rate is in a paper's Table 5, with their total.
    rows = [["Stage", "Energy (kWh)"], ["Training", "0.1"], ["Inference", "1e-3"], ["Storage", "0.5"]]
    table = {"label": "tab:energy", "rows": [*rows, ["Total", "0.601"]]}
    drafts = draft_template_questions([table], seed=0, per_template=50, template_ids=["pair_sum"])
    total = _one(drafts, "pair_sum", row_a="Inference", row_b="Training")
    assert total["answer"] == ["0.101"]  # two decimals would drop the learning rate: 0.1
    assert total["rationale"].endswith("Their sum is 0.101.")


def test_a_fit_statistic_is_asked_about_by_the_name_the_paper_gives_it():
    # The lag-robustness table of the World Cup thesis (see EVENT_STUDY), made-up numbers: "Within R^2" is R².
    table = {
        "label": "tab:lags",
        "rows": [["", "Lag 5", "Lag 6"], ["k = +1", "0.456*", "0.451*"], ["Within R$^2$", "0.426", "0.429"]],
    }
    drafts = draft_template_questions([table], seed=0, per_template=50, template_ids=["span_lookup"])
    lookup = _one(drafts, "span_lookup", row="Within R", column="Lag 5")  # the tool box's name for the row
    assert "Within R²" in lookup["question"] and not re.search(r"Within R\b(?!²)", lookup["question"])
    assert lookup["rationale"] == "tab:lags gives 0.426 for Within R² under Lag 5." and lookup["answer"] == ["0.426"]
    # Its change from one model to the next compares two fits, not two points: no change is drafted of it.
    changes = draft_template_questions([table], seed=0, per_template=50, template_ids=["change_between_columns"])
    assert [draft["slots"]["row"] for draft in changes] == ["k = +1"]


def test_a_column_named_r_squared_is_asked_about_as_r_squared_and_no_ratio_rounds_to_one():
    # Table 3 of an ablation (tests/curation/latex/fixtures/constructs/phystnet_tabularx_tabularstar.tex): the tool
    # box names its "R^2" column "R", and a question about the R of each variant would ask another thing.
    rows = [["Variant", "RMSE", "R^2"], ["PhyST-Net", "6742.61", "0.7494"], ["w/o AGSP", "7209.00", "0.7135"],
            ["w/o K-AMC", "6841.35", "0.7420"], ["w/o R-STMF", "7212.29", "0.7133"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:ablation", "rows": rows}], seed=0, per_template=50)
    asked = [draft for draft in drafts if "R" in {draft["slots"].get("column"), draft["slots"].get("column_a")}]
    assert asked and all("R²" in draft["question"] for draft in asked)
    mean = _one(drafts, "column_mean", column="R")
    assert mean["rationale"].startswith("tab:ablation gives 0.7494 for PhyST-Net") and "under R²." in mean["rationale"]
    ratios = [draft for draft in drafts if draft["template_id"] == "cell_ratio"]
    assert ratios and all(draft["answer"] not in (["1"], ["-1"]) for draft in ratios)  # 7,209.00 to 7,212.29: "1"
    assert not [
        draft for draft in ratios if {draft["slots"]["row_a"], draft["slots"]["row_b"]} == {"w/o AGSP", "w/o R-STMF"}
    ]


def test_only_columns_at_two_points_of_one_axis_make_a_change_and_a_numbered_model_or_a_named_dataset_do_not():
    from curation.drafting.templates import _comparable_columns

    points = [
        "2019",
        "2020",
        "Q4 2019",  # a report's newest first: the change is asked from the earlier point
        "Q4 2018",
        "Epoch 1",
        "Epoch 5",
        "50B - Mix %",
        "300B - Mix %",
        "d=138",
        "d=447",
    ]
    names = ["CIFAR-10 - p", "CIFAR-100 - p", "(1)", "(2)", "Punishment - (3)", "Punishment - (4)", "Task 1", "Task 2",
             "Col2", "Col3", "τ1", "τ2", "ResNet-50", "ResNet-101"]  # fmt: skip
    expected = [(first, second) for first, second in zip(points[::2], points[1::2], strict=True)]
    expected[1] = ("Q4 2018", "Q4 2019")  # asked from the earlier point, as a reader reads a change
    assert _comparable_columns(points + names) == expected
    assert _comparable_columns(["300B - Mix %", "50B - Mix %"]) == [("50B - Mix %", "300B - Mix %")]
    assert _comparable_columns(["January 31, 2019", "January 31, 2018"]) == [("January 31, 2018", "January 31, 2019")]


def test_a_row_named_only_by_a_citation_is_named_by_no_question_answer_or_rationale():
    # As the World Cup thesis (see EVENT_STUDY) compares its counts with a paper's, "\citet{Mello2024}" extracted as
    # "[Mello2024]"; the numbers are made up.
    table = {
        "label": "tab:obs",
        "rows": [
            ["", "Winners", "Total"],
            ["[Mello2024]", "1,290", "8,640"],
            ["This study", "1,290", "8,630"],
            ["Pilot study", "1,100", "7,900"],
        ],
    }
    drafts = draft_template_questions([table], seed=0, per_template=50)
    assert drafts
    for draft in drafts:
        words = " ".join([draft["question"], *draft["answer"]])
        assert "Mello" not in words, words
        assert not re.search(r"for\s*(?:under\b|and\b|,)", draft["rationale"]), draft["rationale"]
    mean = _one(drafts, "column_mean", column="Total")
    assert mean["rationale"].startswith("tab:obs gives 8,640 for Mello2024, 8,630 for This study")


def test_a_row_name_holding_a_comma_is_quoted_where_names_are_listed_and_answered_as_the_cell():
    # Feature combinations named as in Sheet Sage's Table 1 (chrisdonahue/sheetsage): "the average d of Mel, MT3 and
    # Mel, MT3, Jukebox" named three rows or two.
    features = {
        "label": "tab:features",
        "caption": "Input features",
        "rows": [
            ["Features", "d", "Onset F1"],
            ["Mel", "229", "0.514"],
            ["MT3", "512", "0.550"],
            ["Jukebox", "4800", "0.615"],
            ["Mel, MT3", "741", "0.548"],
            ["Mel, MT3, Jukebox", "5541", "0.623"],
        ],
    }
    drafts = draft_template_questions([features], seed=0, per_template=4)
    combined = {"Mel, MT3", "Mel, MT3, Jukebox"}
    for draft in drafts:
        unquoted = re.sub(r'"[^"]*"', "", draft["question"] + " " + draft["rationale"])
        assert not any(name in unquoted for name in combined), draft["question"]
        for name in combined & set(draft["answer"]):
            assert f'"{name}"' not in draft["answer"]  # the answer is the cell as written
    subsets = [draft for draft in drafts if draft["template_id"] == "subset_mean"]
    assert any(set(draft["slots"]["subset"]) & combined for draft in subsets) or not subsets
    assert any('"Mel, MT3' in draft["question"] for draft in drafts)


def test_a_question_puts_the_article_a_header_is_said_with_before_it():
    def asked(column: str) -> set[str]:
        rows = [["Model", column], ["A", "10"], ["B", "20"], ["C", "30"], ["D", "25"]]
        drafts = draft_template_questions([{"label": "tab:a", "rows": rows}], per_template=50)
        return {d["question"] for d in drafts if d["template_id"] in ("count_beyond_row", "above_mean")}

    for column, article in (("Examples", "an"), ("MAE", "an"), ("F1", "an"), ("BLEU", "a"), ("Tokens", "a")):
        questions = [question for question in asked(column) if f" {column} " in question and "report" in question]
        assert questions and all(f"report {article} {column} " in question for question in questions), questions


FIXTURES = Path(__file__).parent / "latex" / "fixtures"


def test_a_row_whose_values_are_cells_merged_across_columns_is_a_label_or_a_setting_not_an_entry():
    # The solvers' table of a real paper: its footer gives each solver's processor and clock across that solver's
    # two columns. "Does GHz or Gaskell67-32x5-1 report a higher HCC-500K - E_BKS (%)?" had compared a clock with a gap,
    # and the processor's "Opteron 275" was a span look-up's answer.
    (table,) = extract_paper(FIXTURES / "constructs" / "neolrp_sideways_barreto.tex").tables
    tool_table = shape_from_extracted(table).tool_input()
    drafts = draft_template_questions([tool_table], seed=0, per_template=500)
    said = [" ".join([draft["question"], *draft["answer"], draft["rationale"]]) for draft in drafts]
    assert drafts and not [words for words in said if re.search(r"\bGHz\b|Processor|Opteron|Xeon", words)]
    # Without those rows, the column means are the instances' own: (0.00 + 1.24 + … + 0.41) / 13.
    assert _one(drafts, "column_mean", column="HCC-500K - E_BKS (%)")["answer"] == ["0.25"]
    # So is a panel's label, whose merged cell repeats under each column: "What is the 2019 of Panel B?" "Panel B".
    (panels,) = extract_paper(FIXTURES / "headers" / "booktabs_panels.tex").tables
    lookups = draft_template_questions([shape_from_extracted(panels).tool_input()], seed=0, per_template=50)
    assert lookups and not [draft for draft in lookups if "Panel" in " ".join([draft["question"], *draft["answer"]])]


# Altria's smokeless volumes (FinQA dev, ../shared/data/finqa, MIT: MO/2012/page_44.pdf), headers shortened to years:
# "copenhagen and skoal" is the sum of the two rows above it, and the scale note heads the names.
SMOKELESS = {
    "label": "tab:smokeless",
    "rows": [
        ["( cans and packs in millions )", "2012", "2011", "2010"],
        ["copenhagen", "392.5", "354.2", "327.5"],
        ["skoal", "288.4", "286.8", "274.4"],
        ["copenhagen and skoal", "680.9", "641.0", "601.9"],
        ["other", "82.4", "93.6", "122.5"],
        ["total smokeless products", "763.3", "734.6", "724.4"],
    ],
}


def test_a_subtotal_is_no_peer_of_its_own_parts_and_a_scale_note_names_no_entity():
    drafts = draft_template_questions([SMOKELESS], seed=0, per_template=100)
    peers = ("compare_two_rows", "extreme_row", "column_mean", "rank_position", "count_beyond_row", "rows_above_mean")
    for draft in drafts:
        words = " ".join([draft["question"], *draft["answer"]])
        assert "in millions" not in words and "( cans" not in words, words  # "How many ( cans … )s have …"
        if draft["template_id"] in peers:
            assert "copenhagen and skoal" not in words, words  # it was averaged with its own parts
    assert _one(drafts, "column_mean", column="2011")["answer"] == ["244.87"]  # (354.2 + 286.8 + 93.6) / 3
    # The parts' sum is backed by the total, as the evidence says.
    assert {draft["slots"]["whole"] for draft in drafts if draft["template_id"] == "pair_sum"} == {
        "total smokeless products"
    }
    # A change is asked from the earlier year, though the report prints 2012 first.
    change = _one(drafts, "percentage_change", row="other", column_a="2011", column_b="2012")
    assert change["answer"] == ["-11.97%"]  # (82.4 - 93.6) / 93.6
    assert not [draft for draft in drafts if draft["slots"].get("column_a") in ("2012",)]


def test_how_many_times_is_asked_of_two_positive_amounts_and_a_repeated_header_is_not_asked_about():
    # Cable subscribers (TAT-QA dev, ../shared/data/tatqa, CC BY 4.0), made one header row: net additions can be losses,
    # and "489 is how many times (4,697)?" had been answered -0.1. The statutory table repeats its "2009" header.
    rows = [["", "Customers", "Net additions", "Net additions 2018"], ["Internet", "446,137", "21,189", "21,417"],
            ["Video", "312,555", "(4,697)", "(6,760)"], ["Telephony", "142,754", "489", "5,594"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:units", "rows": rows}], seed=0, per_template=100)
    ratios = [draft for draft in drafts if draft["template_id"] == "cell_ratio"]
    assert ratios and not [draft for draft in ratios if "Video" in draft["question"] and "Net" in draft["question"]]
    assert not [draft for draft in ratios if draft["answer"][0].startswith("-")]
    repeated = [["", "2009", "2009", "2008"], ["statutory net income", "904", "1,210", "880"],
                ["statutory capital", "5,885", "6,103", "5,702"], ["dividends", "120", "96", "80"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:statutory", "rows": repeated}], seed=0, per_template=100)
    assert drafts and not [draft for draft in drafts if "2009" in draft["question"]]  # "2009 (2)" is in no paper


def test_a_row_of_years_is_a_header_row_read_into_the_body_not_an_entry():
    # A report's table whose second header row the import did not count (TAT-QA dev, CC BY 4.0, shortened): "Which has
    # a lower June 30,: '($ in millions)' or 'Accrued pension liabilities'?" compared the year 2018 with 3.4.
    rows = [["", "June 30,", ""], ["($ in millions)", "2019", "2018"], ["Accrued income taxes", "4.2", "3.9"],
            ["Accrued pension liabilities", "3.4", "3.1"], ["Deferred revenue", "12.8", "11.0"],
            ["Total accrued liabilities", "20.4", "18.0"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:accrued", "rows": rows}], seed=0, per_template=100)
    assert drafts and not [
        draft for draft in drafts if "in millions" in " ".join([draft["question"], *draft["answer"]])
    ]
    assert _one(drafts, "column_mean", column="June 30,")["answer"] == ["6.8"]  # (4.2 + 3.4 + 12.8) / 3
    # So is a row named only by the scale: "Which value does the table give for the Acquisitions of (In Millions)?"
    rows = [["", "Dec 29, 2018", "Acquisitions"], ["(In Millions)", "", ""], ["Goodwill", "5,842", "1,310"],
            ["Other intangibles", "1,201", "544"], ["Trade names", "380", "95"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:goodwill", "rows": rows}], seed=0, per_template=100)
    assert drafts and not [draft for draft in drafts if "Millions" in draft["question"]]


def test_rows_whose_names_state_different_units_are_not_compared_with_each_other():
    # Cal-Maine's selected data (TAT-QA dev, CC BY 4.0, shortened): "What is the difference in June 2, 2018 between
    # 'Gross profit (in thousands)' and 'Feed cost per dozen produced'?" subtracts a cost per dozen from thousands.
    rows = [
        ["Fiscal Year ended", "June 1, 2019", "June 2, 2018"],
        ["Gross profit (in thousands)", "285,116", "244,127"],
        ["Feed cost per dozen produced", "0.5", "0.45"],
        ["Dozens sold (in thousands)", "1,134,018", "1,049,952"],
    ]
    drafts = draft_template_questions([{"label": "tab:selected", "rows": rows}], seed=0, per_template=100)
    asked = {draft["template_id"] for draft in drafts}
    assert asked and not asked & {"cell_difference", "cell_ratio", "compare_two_rows", "column_mean", "extreme_row"}
    change = _one(drafts, "percentage_change", row="Feed cost per dozen produced")  # each row is still its own series
    assert (change["slots"]["column_a"], change["answer"]) == ("June 2, 2018", ["11.11%"])  # (0.5 - 0.45) / 0.45


def test_a_column_named_by_a_period_is_asked_about_as_a_value_at_that_period():
    # A report's table (TAT-QA test, CC BY 4.0, shortened) with its periods under their group label, as the shape
    # counts its header rows: "What is the Years Ended December 31, of Net loss?" had been answered from 2018.
    rows = [
        ["", "Years Ended December 31,", "", ""],
        ["", "2019", "2018", "2017"],
        ["Net loss", "$(19,898)", "$(26,199)", "$(9,187)"],
        ["Revenue", "41,320", "38,017", "30,996"],
        ["Gross profit", "25,100", "21,870", "17,411"],
    ]
    table = shape_from_rows(rows).tool_input("tab:loss")
    drafts = draft_template_questions([table], seed=0, per_template=50)
    lookup = _one(drafts, "span_lookup", row="Net loss", column="Years Ended December 31, - 2019")
    assert "value in 2019" in lookup["question"] and "Years Ended" not in lookup["question"]
    periods = {"column_a": "Years Ended December 31, - 2018", "column_b": "Years Ended December 31, - 2019"}
    change = _one(drafts, "percentage_change", row="Revenue", **periods)
    assert change["answer"] == ["8.69%"]  # (41,320 - 38,017) / 38,017
    assert re.search(r"(from|between) 2018 (to|and) 2019\?", change["question"]), change["question"]
    dated = [["Company", "12/31/2011", "12/31/2012"], ["Cadence", "100.0", "125.1"], ["NASDAQ", "100.0", "117.5"],
             ["S&P 400", "100.0", "111.2"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:index", "rows": dated}], seed=0, per_template=50)
    assert "value at 12/31/2012" in _one(drafts, "span_lookup", row="Cadence", column="12/31/2012")["question"]


def test_no_percentage_change_into_a_negative_value_and_a_dash_is_a_nil_part_of_a_subtotal():
    rows = [["", "2018", "2019"], ["Operating income", "11.4", "(35.8)"], ["Other income", "17", "6,726"]]
    drafts = draft_template_questions([{"label": "tab:ops", "rows": rows}], seed=0, per_template=50)
    changes = [draft for draft in drafts if draft["template_id"] == "percentage_change"]
    assert [draft["slots"]["row"] for draft in changes] == ["Other income"]  # 11.4 to (35.8) is no "-414.04%"
    # Deferred tax assets (TAT-QA test, CC BY 4.0, shortened): the gross is the sum of the rows above, one of them nil.
    assets = [["", "2019", "2018"], ["Net operating losses", "1,204", "1,090"], ["Tax credits", "—", "312"],
              ["Accrued liabilities", "845", "790"], ["Gross deferred tax assets", "2,049", "2,192"],
              ["Valuation allowance", "(512)", "(498)"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:dta", "rows": assets}], seed=0, per_template=100)
    peers = ("compare_two_rows", "extreme_row", "column_mean", "rank_position", "cell_ratio", "cell_difference")
    assert not [draft for draft in drafts if draft["template_id"] in peers and "Gross" in draft["question"]]


def test_nothing_is_drafted_whose_answer_the_question_already_gives():
    # A stock-performance table (FinQA test, MIT, shortened): every index is 100 in its base year, and a statutory rate
    # stays 35.0%: "the lowest value at 12/31/2011" and "the change from 2018 to 2019: 0%" say nothing.
    index = [["Company", "12/31/2011", "12/31/2012"], ["Cadence", "100.0", "125.1"], ["NASDAQ", "100.0", "117.5"],
             ["S&P 400", "100.0", "111.2"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:index", "rows": index}], seed=0, per_template=50)
    extremes = [draft for draft in drafts if draft["template_id"] == "extreme_value"]
    assert extremes and {draft["slots"]["column"] for draft in extremes} == {"12/31/2012"}
    rates = [["", "2018", "2019"], ["Statutory rate", "35.0%", "35.0%"], ["State taxes", "1.2%", "1.9%"]]
    drafts = draft_template_questions([{"label": "tab:rates", "rows": rates}], seed=0, per_template=50)
    changes = [draft for draft in drafts if draft["template_id"] in ("change_between_columns", "percentage_change")]
    assert changes and {draft["slots"]["row"] for draft in changes} == {"State taxes"}


def test_a_roll_forwards_balances_and_movements_are_not_compared_with_each_other():
    # Restricted stock (FinQA test, MIT, shortened): "Does 'granted' report a value above the mean of 243.11?" had
    # averaged the non-vested balances with the grants and vestings that move them.
    rows = [["", "Shares", "Weighted-average fair value"], ["Non-vested at December 31, 2011", "518", "$38"],
            ["Granted", "430", "$42"], ["Vested", "(159)", "$37"], ["Forfeited", "(76)", "$40"],
            ["Non-vested at December 31, 2012", "713", "$41"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:stock", "rows": rows}], seed=0, per_template=50)
    assert {draft["template_id"] for draft in drafts} <= {"span_lookup"}
    assert _one(drafts, "span_lookup", row="Granted", column="Shares")["answer"] == ["430"]


def test_a_sections_title_row_is_no_entry_so_whole_column_questions_are_drafted():
    # Revenue by country under region titles (TAT-QA dev, CC BY 4.0, shortened): "Americas:" has no values, and as an
    # entry it left every whole-column template idle ("nothing fits extreme_row, column_mean, rank_position …").
    rows = [["", "2019", "2018"], ["Americas:", "", ""], ["United States", "1,020", "980"],
            ["The Philippines", "410", "395"], ["Canada", "150", "161"], ["Total Americas", "1,580", "1,536"],
            ["EMEA:", "", ""], ["Germany", "220", "240"], ["Other", "95", "88"],
            ["Total EMEA", "315", "328"], ["Total", "1,895", "1,864"]]  # fmt: skip
    idle: list[str] = []
    drafts = draft_template_questions([{"label": "tab:geo", "rows": rows}], seed=0, per_template=5, idle=idle)
    assert {"extreme_row", "column_mean", "rank_position", "top_k"} <= {draft["template_id"] for draft in drafts}
    assert not {"extreme_row", "column_mean", "rank_position", "top_k"} & set(idle)
    mean = _one(drafts, "column_mean", column="2019")
    assert mean["answer"] == ["379"]  # the five countries: (1,020 + 410 + 150 + 220 + 95) / 5, no total, no title
    assert not [draft for draft in drafts if re.search(r"Americas:|EMEA:", draft["question"])]


POPULATION = {"extreme_row", "extreme_value", "column_mean", "subset_mean", "rank_position", "top_k"}
POPULATION |= {"count_beyond_row", "above_mean", "rows_above_mean", "largest_increase"}


def test_a_reports_lines_are_ranked_or_averaged_only_where_the_table_shows_them_to_be_peers():
    # A cash-flow bridge (TAT-QA dev, CC BY 4.0, shortened): "Which entry has the highest 2019 - €m?" ranked cash from
    # operations with the capital spent and the tax paid, and "the mean of the entries" averaged them.
    bridge = [["", "2019", "2018"], ["", "€m", "€m"], ["Cash generated by operations", "14,182", "13,860"],
              ["Capital additions", "(7,227)", "(7,321)"], ["Restructuring payments", "195", "250"],
              ["Operating free cash flow", "7,150", "6,789"], ["Taxation", "(1,040)", "(1,010)"]]  # fmt: skip
    # Revenue by segment (TAT-QA dev, shortened): the elimination takes from the segments, no peer of theirs.
    segments = [["OPERATING REVENUES", "Q4 2019", "Q4 2018"], ["Bell Wireless", "2,493", "2,407"],
                ["Bell Wireline", "3,138", "3,137"], ["Bell Media", "879", "850"],
                ["Inter-segment eliminations", "(194)", "(179)"],
                ["Total operating revenues", "6,316", "6,215"]]  # fmt: skip
    # One revenue broken down twice: a region beside a product is no peer.
    breakdowns = [["", "2019", "2018"], ["EMEA", "2,265", "2,478"], ["Americas", "1,351", "1,264"],
                  ["Asia Pacific", "5,940", "5,922"], ["Total revenues", "9,556", "9,664"],
                  ["Products", "9,381", "9,461"], ["Services", "175", "203"],
                  ["Total revenues", "9,556", "9,664"]]  # fmt: skip
    # Lines under a scale note with no total at all: nothing shows what they are parts of.
    lines = [["£m", "2019", "2018"], ["Net investment in finance leases", "0.8", "1.2"],
             ["Amounts owed by members", "0.3", "0.5"], ["Amounts owed to members", "0.9", "0.1"]]  # fmt: skip
    for rows in (bridge, segments, breakdowns, lines):
        table = shape_from_rows(rows).tool_input("tab:report")
        drafts = draft_template_questions([table], seed=0, per_template=20)
        assert drafts and not POPULATION & {draft["template_id"] for draft in drafts}, rows[1]
    # Each line is still its own series, and two lines are still compared.
    drafts = draft_template_questions([shape_from_rows(bridge).tool_input("tab:bridge")], seed=0, per_template=20)
    pair = {"row_a": "Cash generated by operations", "row_b": "Restructuring payments"}
    assert _one(drafts, "cell_difference", column="2019 - €m", **pair)["answer"] == ["13987"]
    assert {draft["template_id"] for draft in drafts} >= {"change_between_columns", "compare_two_rows"}
    # Regions adding up to their total, in dollars, are peers: ranked and averaged.
    regions = [["", "31 March 2019", "31 March 2018"], ["", "$M", "$M"], ["Americas", "273.6", "288.2"],
               ["EMEA", "413.0", "434.2"], ["APJ", "98.7", "103.6"], ["", "785.3", "826.0"]]  # fmt: skip
    drafts = draft_template_questions([shape_from_rows(regions).tool_input("tab:regions")], seed=0, per_template=20)
    assert {"extreme_row", "column_mean", "rank_position", "column_sum"} <= {draft["template_id"] for draft in drafts}
    mean = _one(drafts, "column_mean", column="31 March 2019 - $M")
    assert mean["answer"] == ["261.77"]  # (273.6 + 413.0 + 98.7) / 3, its total printed unnamed below them


def test_a_currency_written_on_a_columns_first_and_total_rows_only_is_one_unit_with_its_plain_amounts():
    # Revenue by country (TAT-QA dev, CC BY 4.0, shortened): "$300,853" over "90,795" had been refused as mixed units.
    rows = [["(In thousands)", "2019", "2018"], ["United States", "$300,853", "$288,843"],
            ["Mexico", "90,795", "12,186"], ["Germany", "78,062", "167,251"],
            ["Other international", "60,351", "60,997"], ["Total", "$530,061", "$529,277"]]  # fmt: skip
    drafts = draft_template_questions([shape_from_rows(rows).tool_input("tab:country")], seed=0, per_template=20)
    assert _one(drafts, "column_mean", column="2019")["answer"] == ["132515.25"]  # 530,061 / 4
    assert _one(drafts, "extreme_row", column="2018", direction="highest")["answer"] == ["United States"]
    # Two currencies are still two units.
    rows = [["", "Fee"], ["Alpha", "$5"], ["Beta", "€3"], ["Gamma", "4"]]
    drafts = draft_template_questions([{"label": "tab:fees", "rows": rows}], seed=0, per_template=20)
    assert not [draft for draft in drafts if "Alpha" in draft["question"] and "Beta" in draft["question"]]


def test_a_reports_quarters_are_points_of_one_axis_so_its_prices_are_ranked():
    # Common stock prices by quarter (TAT-QA dev, CC BY 4.0): dollars and no total, but the rows are one axis.
    rows = [["", "Low", "High"], ["First Quarter", "$ 5.99", "$ 8.40"], ["Second Quarter", "$ 4.79", "$ 6.48"],
            ["Third Quarter", "$ 2.66", "$ 4.63"], ["Fourth Quarter", "$ 1.88", "$ 3.39"]]  # fmt: skip
    drafts = draft_template_questions([{"label": "tab:prices", "rows": rows}], seed=0, per_template=20)
    assert _one(drafts, "extreme_row", column="High", direction="lowest")["answer"] == ["Fourth Quarter"]
    assert _one(drafts, "column_mean", column="Low")["answer"] == ["3.83"]  # (5.99 + 4.79 + 2.66 + 1.88) / 4


def test_a_tax_rate_reconciliation_all_in_percent_is_a_bridge_whose_lines_are_not_averaged():
    # An effective tax rate reconciliation (TAT-QA dev, CC BY 4.0, shortened): the rate is the sum of the lines above
    # it, credits negative, so "the average of the state rate, the housing credit and the ESOP dividend" means nothing.
    rows = [["Years Ended December 31,", "2019", "2018", "2017"],
            ["Statutory federal income tax rate", "21.0%", "21.0%", "35.0%"],
            ["State and local income tax rate", "3.7", "3.7", "1.6"],
            ["Affordable housing credit", "(0.4)", "(0.6)", "(0.6)"],
            ["Employee benefits including ESOP dividend", "(0.3)", "(0.3)", "(0.5)"],
            ["Non-deductible goodwill", "0.1", "4.7", "1.0"],
            ["Effective income tax rate", "24.1%", "28.5%", "36.5%"]]  # fmt: skip
    drafts = draft_template_questions([shape_from_rows(rows).tool_input("tab:rate")], seed=0, per_template=20)
    assert drafts and not POPULATION & {draft["template_id"] for draft in drafts}
    # The rate is no line beside its own parts.
    assert not [draft for draft in drafts if "Effective" in draft["question"] and draft["template_id"] == "cell_ratio"]


def test_a_reports_asset_and_liability_are_not_differenced_nor_its_percentage_changes_averaged():
    # A balance sheet (TAT-QA test, CC BY 4.0, shortened): "Investment property minus the bonds" was answered 1,157.3,
    # reading the liability's brackets as a sign, where a reader subtracts 480.5.
    sheet = [["", "2019", "2018"], ["", "£m", "£m"], ["Investment property", "676.8", "841.8"],
             ["Borrowings – 4.125% bonds", "(480.5)", "(479.6)"],
             ["Other net liabilities", "(27.7)", "(30.1)"]]  # fmt: skip
    drafts = draft_template_questions([shape_from_rows(sheet).tool_input("tab:sheet")], seed=0, per_template=50)
    pairs = [draft for draft in drafts if draft["template_id"] in ("cell_difference", "compare_two_rows", "pair_sum")]
    assert pairs and all("Investment" not in draft["question"] for draft in pairs)  # the two liabilities still are
    # Segments with their percentage changes: a mean of 2.5%, 2.1%, 6.5% and 50.0% is no change of anything; three rows
    # of three averaged is the column's mean asked again.
    rows = [["", "2019", "2018", "% CHANGE"], ["External service revenues", "6,427", "6,269", "2.5%"],
            ["Inter-segment service revenues", "49", "48", "2.1%"],
            ["External product revenues", "2,660", "2,497", "6.5%"],
            ["Inter-segment product revenues", "6", "4", "50.0%"],
            ["Total revenues", "9,142", "8,818", "3.7%"]]  # fmt: skip
    drafts = draft_template_questions([shape_from_rows(rows).tool_input("tab:bell")], seed=0, per_template=50)
    means = [draft for draft in drafts if draft["template_id"] in ("column_mean", "above_mean", "subset_mean")]
    assert means and all(draft["slots"]["column"] != "% CHANGE" for draft in means)
    regions = [["", "2019"], ["Americas", "196.9"], ["Asia Pacific", "7.4"], ["EMEA", "11.5"], ["Total", "215.8"]]
    drafts = draft_template_questions([shape_from_rows(regions).tool_input("tab:three")], seed=0, per_template=50)
    asked = {draft["template_id"] for draft in drafts}
    assert "column_mean" in asked and "subset_mean" not in asked
    # "What do the value in 2019 values of …" and "… than Inter-segment service revenues's" read badly.
    assert not [draft for draft in drafts if "values of" in draft["question"] or "s's" in draft["question"]]
