"""The published tables from run records (scoring/runs/comparison.py) and their CSV/LaTeX (table_formats.py)."""

from __future__ import annotations

import csv
import io

import pytest

from scoring.runs.comparison import IDENTITY, comparison_tables
from scoring.runs.table_formats import latex_escape, table_csv, table_latex

# SciTaT table 5, GPT-4o: (long EM, F1, BERTScore), (short EM, F1, BERTScore).
GPT4O = {
    "direct": ((0.0, 29.8, 67.3), (0.0, 39.6, 71.5)),
    "cot": ((31.3, 41.3, 72.7), (32.2, 46.8, 75.5)),
    "pot": ((5.0, 15.0, 44.4), (28.3, 31.2, 59.8)),
    "car": ((37.5, 41.8, 73.1), (43.7, 47.1, 75.7)),
}
_ids = iter(range(1, 10_000))


def record(method: str, setting: str = "short", *, model: str = "gpt-4o", figures=None, results=None, **parts):
    run_id = next(_ids)
    base = {"few_shot": 0, "tools": "all", "prompt": f"p-{method}", "scale_mode": "predicted"}
    base.update(extraction="default", **parts)
    res = {"figures": {k: {"mean": v, "low": v - 0.01, "high": v + 0.01} for k, v in (figures or {}).items()}}
    res.update(results or {})
    return {"run_id": run_id, "created_at": f"2026-01-01T00:00:{run_id:02d}", "model": model, "method": method,
            "setting": setting, "results": res, **base}  # fmt: skip


def table5_records(model: str = "gpt-4o") -> list[dict]:
    records = []
    for method, settings in GPT4O.items():
        for setting, (em, f1, bert) in zip(("long", "short"), settings, strict=True):
            figures = {"em": em / 100, "f1": f1 / 100, "bertscore": bert / 100}
            records.append(record(method, setting, model=model, figures=figures))
    return records


def tool_record(shot: int, tools: str = "all", *, model: str = "qwen3-32b", accuracy: float = 0.7, **more):
    """A tool run's record whose questions are all answerable (so its accuracy is the answerable one too)."""
    figures = {"tool_precision": 0.8 + shot / 100, "tool_recall": 0.9}
    answerability = {"answerable": {"accuracy": accuracy}, "unanswerable": {"count": 0, "accuracy": None}}
    results = {"accuracy": accuracy, "answerability": answerability, "tool": {"error_rate": 0.1 * (shot + 1)}}
    rec = record("tool", model=model, few_shot=shot, tools=tools, figures=figures, prompt="tool1", results=results,
                 **more)  # fmt: skip
    rec["results"]["figures"]["tool_precision"]["sd"] = 0.12
    return rec


def texts(row):
    return [cell["text"] for cell in row["cells"]]


def test_table5_has_the_papers_delta_row_and_bold_best():
    table = comparison_tables(table5_records())["table5"]
    methods = [row["stub"][1] for row in table["rows"]]
    assert methods == ["Direct QA", "CoT", "PoT", "CaR", "Δ"]
    # The paper's Δ for GPT-4o: +25.4 +13.1 +11.6 +23.5 +7.9 +6.8 (CaR minus the mean of the three baselines).
    assert texts(table["rows"][-1]) == ["+25.4", "+13.1", "+11.6", "+23.5", "+7.9", "+6.8"]
    car = table["rows"][3]
    assert all(cell["is_best"] for cell in car["cells"])
    assert not any(cell["is_best"] for row in table["rows"][:3] for cell in row["cells"])
    assert table["rows"][-1]["kind"] == "delta" and not any(c["is_best"] for c in table["rows"][-1]["cells"])


def test_best_is_per_model_and_each_model_gets_its_own_delta():
    records = table5_records("gpt-4o") + table5_records("llama-70b")
    table = comparison_tables(records)["table5"]
    assert [row["stub"][1] for row in table["rows"]].count("Δ") == 2
    assert {row["stub"][0] for row in table["rows"]} == {"gpt-4o", "llama-70b"}
    bold_em = [row["stub"][0] for row in table["rows"] if row["cells"][0]["is_best"]]
    assert bold_em == ["gpt-4o", "llama-70b"]


def test_runs_differing_only_in_n_shot_or_tools_never_share_a_cell():
    records = [tool_record(0), tool_record(3), tool_record(0, "data", accuracy=0.4)]
    assert len({tuple(r.get(part) for part in IDENTITY) for r in records}) == 3
    tables = comparison_tables(records)
    table2 = tables["table2"]
    assert [row["stub"][1] for row in table2["rows"]] == ["0-shot", "3-shot"]
    assert texts(table2["rows"][0])[1] == "0.80 ± 0.12" and table2["rows"][0]["cells"][1]["ci"] == [0.79, 0.81]
    # Err. is better lower: the 0-shot run (0.10) is bold, the 3-shot (0.40) is not.
    assert table2["rows"][0]["cells"][3]["is_best"] and not table2["rows"][1]["cells"][3]["is_best"]
    zero, three = tables["figure2b"]["rows"]
    assert zero["stub"] == ["qwen3-32b · 0-shot"] and texts(zero) == ["0.70", "0.40", "+0.30"]
    assert three["stub"] == ["qwen3-32b · 3-shot"] and texts(three) == ["0.70", "—", "—"]


def test_a_repeat_of_one_configuration_fills_its_cell_with_the_newest_and_names_both_runs():
    first, second = tool_record(0, accuracy=0.5), tool_record(0, accuracy=0.6)
    (row,) = comparison_tables([first, second])["table2"]["rows"]
    assert texts(row)[0] == "0.60" and row["run_ids"] == [first["run_id"], second["run_id"]]


def test_a_differing_scale_mode_is_named_in_the_row_label():
    records = [*table5_records(), record("cot", "short", figures={"em": 0.5}, scale_mode="ignore")]
    models = {row["stub"][0] for row in comparison_tables(records)["table5"]["rows"]}
    assert models == {"gpt-4o · scale predicted", "gpt-4o · scale ignored"}


def test_table6_lays_car_against_its_ablations_in_the_settings_they_were_run():
    records = [
        *table5_records(),
        record("calculator", figures={"em": 0.003, "f1": 0.308, "bertscore": 0.628}),
        record("reversing", figures={"em": 0.215, "f1": 0.214, "bertscore": 0.472}),
    ]
    table = comparison_tables(records)["table6"]
    assert [g["label"] for g in table["column_groups"]] == ["Short context"]
    assert [row["stub"][1] for row in table["rows"]] == ["CaR", "Reasoner (CoT)", "Calculator only", "Reversing"]
    assert comparison_tables(table5_records())["table6"]["rows"] == []


def test_figure5_averages_each_reasoning_type_over_models():
    def with_types(model, em):
        breakdowns = {"reasoning_type": {"look_up": {"em": {"mean": em}}, "data_analysis": {"f1": {"mean": 0.4}}}}
        return record("car", model=model, results={"breakdowns": breakdowns})

    rows = comparison_tables([with_types("a", 0.2), with_types("b", 0.4)])["figure5"]["rows"]
    look_up = next(row for row in rows if row["stub"][1] == "look_up")
    assert look_up["stub"][2] == "2" and texts(look_up)[0] == "30.0"


def test_table11_starts_with_the_gold_answers():
    tokens = {"short_form": {"answer_tokens": 3.0, "gold_tokens": 1.5}, "free_form": {"answer_tokens": 80.0,
              "gold_tokens": 45.1}}  # fmt: skip
    records = [record("car", results={"tokens": tokens}), record("direct", results={"tokens": tokens})]
    table = comparison_tables(records)["table11"]
    assert table["rows"][0]["stub"][1] == "Gold answer" and texts(table["rows"][0])[2:] == ["1.5", "45.1"]
    assert [row["stub"][1] for row in table["rows"][1:]] == ["Direct QA", "CaR"]
    assert texts(table["rows"][1])[2:] == ["3.0", "80.0"]


def test_latex_is_booktabs_escaped_and_bolds_the_best():
    records = table5_records("gpt_4o & co 100%")
    latex = table_latex(comparison_tables(records)["table5"], label="tab:t5")
    assert "\\toprule" in latex and "\\midrule" in latex and "\\bottomrule" in latex
    assert "\\multicolumn{3}{c}{Long context}" in latex and "\\cmidrule(lr){3-5}\\cmidrule(lr){6-8}" in latex
    assert "gpt\\_4o \\& co 100\\%" in latex and "\\textbf{37.5}" in latex and "$\\Delta$ & +25.4" in latex
    body = latex.split("\\begin{tabular}{llrrrrrr}")[1].split("\\end{tabular}")[0]
    rows = [line for line in body.split("\\midrule", 1)[1].splitlines() if line.endswith("\\\\")]
    assert all(line.count("&") - line.count("\\&") == 7 for line in rows)
    assert latex.count("{") - latex.count("\\{") == latex.count("}") - latex.count("\\}")


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("a_b", "a\\_b"),
        ("50%", "50\\%"),
        ("x & y", "x \\& y"),
        ("{z}", "\\{z\\}"),
        ("#1 $5", "\\#1 \\$5"),
        ("~^", "\\textasciitilde{}\\textasciicircum{}"),
        ("a\\b", "a\\textbackslash{}b"),
        ("0.8 ± 0.1 · 3-shot", "0.8 $\\pm$ 0.1 $\\cdot$ 3-shot"),
        ("models × methods", "models $\\times$ methods"),
    ],
)
def test_latex_escape_leaves_no_special_character_bare(raw, escaped):
    assert latex_escape(raw) == escaped


def test_csv_has_a_column_per_value_with_sd_and_ci_beside_it():
    rows = list(csv.reader(io.StringIO(table_csv(comparison_tables([tool_record(0)])["table2"]))))
    assert rows[0] == ["Model", "n-shot", "row", "Acc.", "Precision", "Precision SD", "Precision CI low",
                       "Precision CI high", "Recall", "Recall CI low", "Recall CI high", "Err.", "Acc. (all items)",
                       "Abstained (unanswerable)"]  # fmt: skip
    assert rows[1][:8] == ["qwen3-32b", "0-shot", "run", "0.7", "0.8", "0.12", "0.79", "0.81"]


def test_table2_accuracy_is_over_answerable_questions_with_all_items_and_abstention_apart():
    from scoring.runs.results import run_summary

    # 50 answerable (40 right) and 15 unanswerable (3 abstained on): the paper's Acc. is 40/50, not 43/65.
    answerable = [{"uid": f"a{i}", "is_answerable": True, "is_correct": i < 40, "tool_error": False} for i in range(50)]
    unanswerable = [
        {"uid": f"u{i}", "is_answerable": False, "is_correct": i < 3, "abstained": i < 3} for i in range(15)
    ]
    results = run_summary(answerable + unanswerable, resamples=10)
    rec = record("tool", model="qwen3-32b", few_shot=0, tools="all", prompt="tool1", results=results)
    table = comparison_tables([rec])["table2"]
    labels = [column["label"] for column in table["columns"]]
    assert labels == ["Acc.", "Precision ± SD", "Recall ± SD", "Err.", "Acc. (all items)", "Abstained (unanswerable)"]
    (row,) = table["rows"]
    assert texts(row) == ["0.80", "—", "—", "0.00", "0.66", "0.20"]


def test_printed_cells_round_half_up_the_same_on_page_csv_and_latex():
    # SciTaT-style means that end in 5 at the printed digit: half-even (and 100 × float) would print 63.4 and 40.1.
    rec = record("cot", figures={"em": 0.6345, "f1": 0.4015, "bertscore": 0.7})
    table = comparison_tables([rec])["table5"]
    (row,) = table["rows"]
    assert texts(row)[3:5] == ["63.5", "40.2"]
    assert row["cells"][3]["ci_text"] == "[62.4, 64.5]"  # the record's bounds are 0.6244999… and 0.6445
    latex = table_latex(table)
    assert "63.5 & 40.2" in latex
    csv_row = list(csv.reader(io.StringIO(table_csv(table))))[1]
    assert "63.45" in csv_row and "40.15" in csv_row  # two more digits, the same rounding, no float noise
    tool = tool_record(0, accuracy=0.125)
    assert texts(comparison_tables([tool])["table2"]["rows"][0])[0] == "0.13"


def test_a_cell_whose_interval_is_over_questions_says_so_in_the_csv():
    rec = record("cot", figures={"em": 0.8})
    rec["results"]["figures"]["em"]["note"] = "bootstrap over questions: 2 papers, fewer than the 10 needed"
    table = comparison_tables([rec])["table5"]
    assert table["rows"][0]["cells"][3]["ci_note"].startswith("bootstrap over questions")
    header, row = list(csv.reader(io.StringIO(table_csv(table))))
    assert row[header.index("Short context EM CI note")].startswith("bootstrap over questions: 2 papers")
