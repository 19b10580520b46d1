"""Suggested answer type and scale (TAT-QA's kinds) from the answer's own source, each with its evidence."""

from __future__ import annotations

import pytest

from curation.answer_types import Suggestion, suggest_answer_type, suggest_scale
from curation.table_shape import shape_from_rows


@pytest.mark.parametrize(
    ("question", "rationale", "answer", "expected"),
    [
        ("Which model is best?", "Table 1: A has 87.3.", ["A"], "span"),
        ("Which models beat the baseline?", "", ["A", "B"], "multi-span"),
        ("By how much does A beat B?", "87.3 - 81.0 = 6.3", ["6.3"], "arithmetic"),
        ("What is the average?", "(2 + 4) / 2", ["3"], "arithmetic"),
        ("What is the change?", "4.7% - 5.3%", ["-0.6"], "arithmetic"),
        ("What is the change?", "-1.9-(-2.2)", ["0.3"], "arithmetic"),
        ("What is A's accuracy?", "Table 1 gives A 87.3.", ["87.3"], "span"),
        ("How many models exceed 80?", "A and B exceed 80.", ["2"], "count"),
        ("How many points does A gain?", "87.3 - 81.0 = 6.3", ["6.3"], "arithmetic"),
        ("How many employees are there?", "", ["1200"], None),
        ("Which model?", "", ["", " "], None),
    ],
)
def test_answer_type_follows_the_answer_and_what_the_rationale_computes(question, rationale, answer, expected):
    suggestion = suggest_answer_type(question=question, rationale=rationale, answer=answer)
    assert suggestion.value == expected
    assert suggestion.evidence


TABLE = shape_from_rows(
    [
        ["Model", "Params (M)", "Acc (%)", "Rank"],
        ["A", "110", "87.3", "1"],
        ["B", "340", "81.0", "2"],
    ],
    caption="Results (%) of the models.",
)


def _scale(answer, rationale="", question="What is it?", notes=(), tables=(TABLE,), answer_type=None):
    return suggest_scale(
        question=question, rationale=rationale, answer=answer, tables=tables, notes=notes, answer_type=answer_type
    )


def test_a_cell_read_takes_its_column_unit_with_the_evidence():
    params = _scale(["340"])
    assert (params.value, params.evidence) == ("million", "column 'Params (M)' → million")
    assert _scale(["87.3"]).value == "percent"
    assert _scale(["6.3"], rationale="87.3 - 81.0").value == "percent"


def test_the_captions_percent_alone_never_makes_a_count_rank_or_difference_percent():
    assert _scale(["2"], answer_type="count").value == ""
    rank = _scale(["2"], question="Which rank does B hold?")
    assert rank.value != "percent"
    difference = _scale(["1"], rationale="2 - 1")
    assert difference.value is None and "no unit" in difference.evidence


def test_the_tables_or_the_texts_scale_note_applies_to_its_cells():
    table = shape_from_rows([["", "2019"], ["Sales", "1,496.5"], ["Cost", "1,202.9"]])
    noted = shape_from_rows([["(in thousands)", "2019"], ["Sales", "1,496.5"]])
    assert _scale(["1,496.5"], tables=[noted]).value == "thousand"
    assert _scale(["1,496.5"], tables=[table], notes=["All amounts in millions."]).value == "million"
    assert _scale(["293.6"], rationale="1,496.5 - 1,202.9", tables=[table], notes=["(in millions)"]).value == "million"


def test_absent_or_conflicting_evidence_preselects_nothing():
    table = shape_from_rows([["", "2019"], ["Sales", "$1,496.5"]])
    assert _scale(["1,496.5"], tables=[table]).value is None
    assert _scale(["1,496.5"], tables=[table], notes=["in thousands", "in millions"]).value is None
    assert _scale(["9.99"]).value is None
    assert _scale(["1.24"], rationale="1,496.5 / 1,202.9", tables=[table]).value is None
    assert _scale([]).value is None


def test_percent_from_the_derivation_and_none_for_text_years_and_written_units():
    assert _scale(["24.4"], rationale="(1,496.5 - 1,202.9) / 1,202.9 * 100").value == "percent"
    assert (
        _scale(["24.4"], rationale="(1,496.5 - 1,202.9) / 1,202.9", question="What is the percentage change?").value
        == "percent"
    )
    assert _scale(["2019"]).value == ""
    assert _scale(["Model A"]).value == ""
    assert _scale(["12.5%"]).value == ""
    assert _scale(["$85.1 million"]).value == ""
    per_share = shape_from_rows([["(in thousands)", "2019"], ["Earnings per share", "2.41"]])
    assert _scale(["2.41"], tables=[per_share]).value == ""


def test_a_note_that_excepts_per_share_amounts_scales_the_amounts_and_not_the_per_share_section():
    # A loss-per-share table of TAT-QA test (../shared/data/tatqa, CC BY 4.0), shortened: the amounts had been given
    # no scale (the note's "per share" read as theirs) and the per-share values the note's thousand.
    table = shape_from_rows([
        ["", "", "Years Ended December 31,", ""],
        ["", "2019", "2018", "2017"],
        ["", "", "(in thousands, except per share amounts)", ""],
        ["Numerator:", "", "", ""],
        ["Net loss", "$(19,898)", "$(26,199)", "$(9,187)"],
        ["Net loss per share:", "", "", ""],
        ["Basic", "$(0.28)", "$(0.38)", "$(0.14)"],
    ])  # fmt: skip
    amount = _scale(["$(26,199)"], tables=[table])
    assert (amount.value, amount.evidence) == (
        "thousand",
        "column '(in thousands, except per share amounts)' → thousand",
    )
    per_share = _scale(["$(0.38)"], tables=[table])
    assert (per_share.value, per_share.evidence) == (
        "",
        "section 'Net loss per share:' is a per-unit value or a duration → None",
    )


def test_a_stub_cell_that_is_only_a_scale_note_scales_the_table_but_a_column_unit_only_its_column():
    table = shape_from_rows([["", "F19", "F18"], ["$ MILLION", "53 WEEKS", "52 WEEKS"], ["Sales", "1,671", "1,612"]])
    average = _scale(["1641.5"], rationale="(1,671 + 1,612) / 2", tables=[table])
    assert (average.value, average.evidence) == ("million", "an average of cells: the table's note → million")
    assert (
        _scale(["$(426)"], tables=[shape_from_rows([["In thousands", "2019"], ["Cash", "$(426)"]])]).value == "thousand"
    )
    assert _scale(["81.0"], rationale="", tables=[TABLE]).value == "percent"  # 'Params (M)' is not the table's


def test_a_per_share_question_has_no_scale_unless_it_asks_for_a_percentage():
    table = shape_from_rows([["(in thousands)", "2019"], ["Net income", "2.41"]])
    assert _scale(["2.41"], question="What is the earnings per diluted share?", tables=[table]).value == ""
    change = _scale(["3.1"], rationale="(2.41 - 2.34) / 2.34 * 100", question="What is the change in EPS per share?")
    assert change.value == "percent"


def test_counts_of_years_and_durations_have_no_scale_even_under_a_scale_note():
    table = shape_from_rows(
        [["(in millions)", "Lives (Years)", "Cost"], ["Land", "20", "300"], ["Services", "5", "5,100"]]
    )
    assert _scale(["20"], tables=[table]).value == ""
    assert _scale(["1"], question="How many years did Services exceed $5,000 million?", tables=[table]).value == ""
    assert _scale(["5,100"], tables=[table]).value == "million"


def test_a_percent_sign_inside_a_name_asks_for_no_percentage_and_ranks_and_counted_rows_have_no_scale():
    table = shape_from_rows(
        [["Feature", "Share (%)", "Mean"], ["Readmission (%)", "12.1", "3.5"], ["Observations", "48", "410"]]
    )
    rank = _scale(["2"], question="What is the rank of Readmission (%) by Mean?", tables=[table])
    assert (rank.value, rank.evidence) == ("", "a rank has no scale")
    assert _scale(["48"], tables=[table]).value == ""  # the Observations row counts, under a (%) column
    ratio = _scale(["3.46"], rationale="12.1 / 3.5", question="Divide the Mean of Readmission (%) by 3.5?")
    assert ratio.value is None


def test_a_difference_of_percentages_is_percent_as_tatqa_gold_has_it_and_of_amounts_never():
    # TAT-QA dev and test gold give scale percent to 30 of 32 differences of two percentage cells ("4.7% - 5.3%").
    assert _scale(["6.3"], rationale="87.3 - 81.0", question="What is the difference between the two").value == (
        "percent"
    )
    # "Percent Change" spans "Actual" and "Constant" only; the 2018 amounts to its right are millions.
    oracle = shape_from_rows(
        [
            ["", "", "Percent Change", ""],
            ["(Dollars in millions)", "2019", "Actual", "Constant", "2018"],
            ["Americas", "$18,410", "2%", "3%", "$18,030"],
            ["Asia Pacific", "5,004", "3%", "7%", "4,848"],
        ]
    )
    difference = _scale(["13182"], rationale="18,030 - 4,848", tables=[oracle])
    assert (difference.value, difference.evidence) == ("million", "computed from cells: the table's note → million")


def test_the_year_a_question_asks_for_has_no_scale_though_the_rationale_computes_percentages():
    which = _scale(["2019"], question="Which year had the lowest percentage difference?", rationale="(6.66-6.58)/6.58")
    assert (which.value, which.evidence) == ("", "the answer is a year")


def test_a_metres_column_is_no_million_scale():
    # Dz298/ICRA23_universal_drone_controller, table rw_results: "(m)" is metres; "Params (M)" stays million.
    drone = shape_from_rows(
        [
            ["Method", "Height - Err. (m)", "Thrust - Err. (m/s^2)"],
            ["PID", "0.06", "0.57"],
            ["Ours", "0.05", "0.30"],
        ],
        caption="Real-World Results. Metrics are averaged over 5 experiments.",
    )
    height = suggest_scale(
        question="What is the combined Height - Err. (m) of PID and Ours?",
        rationale="Table 1 gives 0.06 for PID and 0.05 for Ours under Height - Err. (m). Their sum is 0.11.",
        answer=["0.11"],
        tables=[drone],
        tools=["get_cell", "get_cell", "add"],
    )
    assert height.value != "million", height.evidence


def test_a_recorded_program_that_only_reads_makes_no_arithmetic_of_names_with_digits_and_hyphens():
    # embedders_dilemma's models (benchmarks/papers/templates): "Qwen3.6-27B" reads as "6 - 27" to a text rule.
    rationale = (
        "Table 1 gives 84.8 for Qwen3.6-27B, 90.8 for SFR-2 and 77.7 for F2LLM-14B under Cls (8). "
        "The largest of them is 90.8."
    )
    question = "What is the highest Cls (8) reported for any model?"
    read = suggest_answer_type(question=question, rationale=rationale, answer=["90.8"], tools=["get_column", "max"])
    assert read.value == "span", read.evidence
    summed = suggest_answer_type(question=question, rationale=rationale, answer=["253.3"], tools=["get_column", "sum"])
    assert summed.value == "arithmetic"


def test_a_name_that_holds_rank_is_no_rank_and_a_ratio_of_two_cells_is_for_a_person_to_read():
    # The programmable-kv paper's Table 1 (19PINE-AI): "ROME (rank-one)" names a method; 1.0 / 1.0 is a ratio.
    table = shape_from_rows([["method", "collateral"], ["ROME (rank-one)", "0.5"], ["LoRA fine-tune", "0.5"]])
    phrasings = (
        "The collateral of LoRA fine-tune is how many times that of ROME (rank-one)?",
        "What is the ratio of the collateral of LoRA fine-tune to that of ROME (rank-one)?",
    )
    # Two phrasings of one template (its program divides), one suggestion: not chosen, the ratio its evidence.
    suggestions = {
        suggest_scale(question=question, rationale="0.5 divided by 0.5 is 1.", answer=["1"], tables=[table],
                      tools=["get_cell", "divide"])
        for question in phrasings
    }  # fmt: skip
    assert suggestions == {Suggestion(None, "a ratio: its scale depends on how it is read — choose")}
    # A ratio read from a cell ("Current ratio") is still no amount.
    amounts = shape_from_rows([["", "2019"], ["Current ratio", "1.4"], ["Revenue", "1,200"]], caption="In millions")
    assert _scale(["1.4"], question="What is the current ratio in 2019?", tables=[amounts]).value == ""
    rank = _scale(["3"], question="Where does ROME (rank-one) rank by collateral?", tables=[table])
    assert (rank.value, rank.evidence) == ("", "a rank has no scale")


# A table where an answer's number is also in an unrelated cell of another scale: C's Params (M) is 6.3 and 340.
UNRELATED = shape_from_rows(
    [
        ["Model", "Params (M)", "Acc (%)", "Latency"],
        ["BERT", "110", "87.3", "12"],
        ["RoBERTa", "125", "81.0", "340"],
        ["ALBERT", "6.3", "75.0", "9"],
        ["DistilBERT", "340", "70.2", "8"],
    ],
    label="tab:models",
)


def _drafted(template_id: str, answer: list[str], column: str = ""):
    """The template draft of `template_id` over UNRELATED whose answer is `answer` (asked of `column`), as the drafter
    records it."""
    from curation.drafting.templates import draft_template_questions

    table = UNRELATED.tool_input("tab:models")
    drafts = draft_template_questions([table], per_template=200, template_ids=[template_id])
    return next(draft for draft in drafts if draft["answer"] == answer and column in draft["question"])


def _drafted_scale(draft, tables=(UNRELATED,)):
    return suggest_scale(
        question=draft["question"],
        rationale=draft["rationale"],
        answer=draft["answer"],
        tables=tables,
        actions=draft["essential_actions"],
    )


def test_a_computed_answer_cites_the_cells_its_program_read_not_a_cell_holding_the_same_number():
    # 87.3 − 81.0 = 6.3, which ALBERT's Params (M) also holds: the program read two Acc (%) cells.
    draft = _drafted("cell_difference", ["6.3"])
    scale = _drafted_scale(draft)
    assert scale.value == "percent", scale.evidence
    assert "Acc (%)" in scale.evidence and "Params" not in scale.evidence


def test_a_value_read_by_the_program_takes_the_scale_of_the_cell_it_read():
    # RoBERTa's Latency is 340; DistilBERT's Params (M) is 340 too, in millions. The program read the Latency.
    draft = _drafted("span_lookup", ["340"], "Latency")
    scale = _drafted_scale(draft)
    assert scale.value is None and "million" not in scale.evidence, scale.evidence
    assert scale.evidence == "cell '340' has no unit and no scale note is found — choose"


def test_a_program_whose_cells_are_not_in_the_tables_preselects_nothing_and_says_so():
    draft = _drafted("cell_difference", ["6.3"])
    changed = shape_from_rows([row if row[0] != "BERT" else ["BERT", "110", "88.0", "12"] for row in UNRELATED.grid])
    scale = _drafted_scale(draft, tables=(changed,))
    assert scale == Suggestion(None, "the cells its program read are not in these tables — choose")
    read = {"tool": "get_cell", "arguments": {"table": "tab:models", "row": "BERT", "column": "Acc (%)"}}
    read["result"] = "87.3"
    other = suggest_scale(question="What?", rationale="", answer=["87.3"], tables=[UNRELATED], actions=[read])
    assert other.value == "percent"
    edited = suggest_scale(question="What?", rationale="", answer=["81.0"], tables=[UNRELATED], actions=[read])
    assert edited == Suggestion(None, "the answer is none of the cells its program read — choose")
    # An answer rounds what the program read: 3.70462 is read, 3.7046 answered.
    distances = shape_from_rows([["Chiefdom", "Avg Distance (%)"], ["Mongo", "3.70462"], ["Dodo", "4.40525"]])
    column = {"tool": "get_column", "arguments": {"table": "Table 1", "column": "Avg Distance (%)"}}
    column["result"] = {"Mongo": "3.70462", "Dodo": "4.40525"}
    rounded = suggest_scale(question="What?", rationale="", answer=["3.7046"], tables=[distances], actions=[column])
    assert (rounded.value, rounded.evidence) == ("percent", "column 'Avg Distance (%)' → percent")


def test_an_answer_whose_number_is_only_in_a_cell_the_question_does_not_name_preselects_nothing():
    # A model's derivation in words: no operation to read, and the 6.3 it states is ALBERT's Params (M).
    scale = suggest_scale(
        question="By how many points does BERT beat RoBERTa in accuracy?",
        rationale="BERT reaches 87.3 and RoBERTa 81.0.",
        answer=["6.3"],
        tables=[UNRELATED],
    )
    assert scale.value is None
    assert scale.evidence.startswith("the answer's number is only in cells the question does not name: cell '6.3'")
    named = suggest_scale(
        question="How many parameters does ALBERT have?", rationale="", answer=["6.3"], tables=[UNRELATED]
    )
    assert (named.value, named.evidence) == ("million", "column 'Params (M)' → million")


def test_an_answer_whose_number_is_in_cells_of_disagreeing_scales_preselects_nothing_and_names_them():
    # 340 is RoBERTa's Latency and DistilBERT's Params (M); the question names both rows' table but neither apart.
    scale = suggest_scale(
        question="What value does the table report?", rationale="", answer=["340"], tables=[UNRELATED]
    )
    assert scale.value is None
    assert scale.evidence.startswith("the answer's number is in 2 cells whose scales disagree: ")
    assert "column 'Params (M)' → million" in scale.evidence and "cell '340' has no unit" in scale.evidence


def test_a_bare_m_in_the_body_is_a_value_not_the_tables_million_note():
    # latex_book_tables.tex, Table 17: 性别 (sex) holds F and M; heights in cm are no millions. TAT-QA's stub "m" is.
    sexes = shape_from_rows([["性别", "身高/cm"], ["F", "156"], ["M", "162"]])
    assert _scale(["162"], question="What is the 身高/cm of M?", tables=[sexes]).value is None
    stub = shape_from_rows([["m", "2019"], ["Net change in cash", "(35.8)"]])
    assert _scale(["(35.8)"], question="What is the net change in cash in 2019?", tables=[stub]).value == "million"


def test_a_sum_the_program_computes_is_no_year_and_names_in_the_rationale_are_no_operations():
    # Table 6 of github.com/dianamonea/Shannon-production-schedule (latex_tables/all_tables.tex, MIT license).
    from curation.drafting.templates import draft_template_questions

    rows = [["Component", "Time (ms)"], ["GNN Encoding", "2.5"], ["Forward pass", "850"], ["Backward pass", "1,200"],
            ["Total", "2,052.5"]]  # fmt: skip
    for header, expected in (("Time (ms)", None), ("Cost ($ thousands)", "thousand")):
        table = shape_from_rows([[rows[0][0], header], *rows[1:]], label="tab:computational")
        drafts = draft_template_questions([table.tool_input()], per_template=20, template_ids=["pair_sum"])
        (draft,) = [draft for draft in drafts if draft["answer"] == ["2050"]]  # 850 + 1,200: no year
        scale = _drafted_scale(draft, tables=(table,))
        assert scale.value == expected and "year" not in scale.evidence, scale.evidence
    # "k = -8" names a row of an event study; the program only read its cell.
    study = shape_from_rows([["", "Coefficient"], ["k = -8", "0.098"], ["k = +1", "0.454"]])
    read = suggest_scale(
        question="What Coefficient is reported for k = -8?",
        rationale="Table 1 gives 0.098 for k = -8 under Coefficient.",
        answer=["0.098"],
        tables=[study],
        actions=[{"tool": "get_cell", "arguments": {"table": "Table 1", "row": "k = -8", "column": "Coefficient"},
                  "result": "0.098"}],
    )  # fmt: skip
    assert read.evidence == "cell '0.098' has no unit and no scale note is found — choose"
    # The years above a mean are names its program lists, though it computes the mean.
    years = shape_from_rows([["WC Year", "N teams"], ["1994", "24"], ["1998", "32"], ["2002", "32"]])
    drafts = draft_template_questions([years.tool_input()], per_template=5, template_ids=["rows_above_mean"])
    (listed,) = [draft for draft in drafts if draft["answer"] == ["1998", "2002"]]
    assert _drafted_scale(listed, tables=(years,)) == Suggestion("", "the answer is a year")


def test_an_amount_that_writes_its_scale_gives_it_to_a_sum_of_its_cells():
    # A market report's regions (a Total row backs the sum): "$18.2B" is 18.2 billion dollars, its own evidence.
    from curation.drafting.templates import draft_template_questions

    rows = [["Region", "Size"], ["North America", "$18.2B"], ["Europe", "$12.1B"], ["Asia-Pacific", "$10.5B"],
            ["Rest of World", "$4.4B"], ["Total", "$45.2B"]]  # fmt: skip
    table = shape_from_rows(rows, label="tab:regions")
    (total,) = draft_template_questions([table.tool_input()], template_ids=["column_sum"])
    assert total["answer"] == ["45.2"]
    assert _drafted_scale(total, tables=(table,)) == Suggestion("billion", "computed from cells: cell '$18.2B' "
                                                                "writes its scale → billion")  # fmt: skip
    # Without its currency a letter after a number is no scale ("512B" may be bytes).
    blocks = shape_from_rows([["Layer", "Block"], ["L1", "512B"], ["L2", "256B"]])
    read = suggest_scale(question="What Block is reported for L1?", rationale="", answer=["512"], tables=[blocks])
    assert read.value is None


@pytest.mark.django_db
def test_a_reports_one_table_takes_the_scale_its_page_states_in_a_paragraph_that_does_not_cite_it():
    # A report page as TAT-QA lays one out (dev, CC BY 4.0): one table, and a paragraph saying its amounts are in
    # thousands without naming "Table 1". The walk saw "no scale note is found — choose" on its drafts.
    from curation.services.instances import answer_kind_evidence
    from tests.factories import ParagraphFactory, TableFactory

    rows = [["", "2019", "2018"], ["Operating income", "54,388", "49,120"], ["Other income", "12,806", "9,004"]]
    table = TableFactory(cells=rows)
    ParagraphFactory(paper=table.paper, text="The following table sets forth our results (in thousands).")
    said = {"question": "What is the Operating income in 2019?", "rationale": "", "answer": ["54,388"]}
    scale = answer_kind_evidence(**said, tables=[table])["scale"]
    assert (scale.value, scale.evidence) == ("thousand", "the text's note 'in thousands' → thousand")
    # A paper with several tables keeps to the paragraphs that cite one: the note may be another table's.
    TableFactory(paper=table.paper, cells=[["", "2019"], ["Headcount", "1,204"]])
    assert answer_kind_evidence(**said, tables=[table])["scale"].value is None
