"""FinQA execution accuracy and program accuracy, reproducing czyssrs/FinQA `code/evaluate/evaluate.py` exactly.

The official script (MIT, Copyright (c) 2021 Zhiyu Chen) is followed step by step, quirks included: the last
token is dropped whatever it is, a `#k` argument to a table operation reuses the previous table row, and a
`greater` result is "yes"/"no". A numeric-answer accuracy with a stated tolerance is added for LLMs that
answer with a number instead of a program.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal

from curation.exports.derivation import FINQA_COMPUTED

# evaluate.py's arithmetic operations, each on two arguments ("greater" answers "yes" or "no").
ARITHMETIC = FINQA_COMPUTED
ALL_OPERATIONS = (*ARITHMETIC, "table_max", "table_min", "table_sum", "table_average")
INVALID = "n/a"


def str_to_num(text: str) -> float | str:
    """Official `str_to_num`: commas removed, `%` divides by 100, `const_X` (`const_m1` = −1); else "n/a"."""
    text = text.replace(",", "")
    try:
        return float(text)
    except ValueError:
        pass
    if "%" in text:
        try:
            return float(text.replace("%", "")) / 100.0
        except ValueError:
            return INVALID
    if "const" in text:
        text = text.replace("const_", "")
        if text == "m1":
            text = "-1"
        # A malformed constant raises here, which makes the whole program invalid, as upstream.
        return float(text)
    return INVALID


def process_row(row: Sequence[str]) -> list[float] | str:
    """Official `process_row`: `$` stripped, cut at the first `(`, every cell numeric or the row is "n/a"."""
    numbers: list[float] = []
    for cell in row:
        value = str_to_num(cell.replace("$", "").strip().split("(")[0].strip())
        if value == INVALID:
            return INVALID
        numbers.append(value)  # type: ignore[arg-type]
    return numbers


def program_tokenization(program: str) -> list[str]:
    """Official `program_tokenization`: "divide(637, const_5)" → ["divide(", "637", "const_5", ")", "EOF"]."""
    tokens: list[str] = []
    for part in program.split(", "):
        current = ""
        for char in part:
            if char == ")" and current != "":
                tokens.append(current)
                current = ""
            current += char
            if char in ("(", ")"):
                tokens.append(current)
                current = ""
        if current != "":
            tokens.append(current)
    tokens.append("EOF")
    return tokens


def _has_valid_structure(tokens: Sequence[str]) -> bool:
    for index, token in enumerate(tokens):
        if index % 4 == 0 and token.strip("(") not in ALL_OPERATIONS:
            return False
        if (index + 1) % 4 == 0 and token != ")":
            return False
    return True


def _split_step(step: str) -> tuple[str, str, str]:
    step = step.strip()
    operation = step.split("(")[0].strip("|").strip()
    arguments = step.split("(")[1].strip("|").strip()
    return operation, arguments.split("|")[0].strip(), arguments.split("|")[1].strip()


def _run_steps(steps: list[str], table: Sequence[Sequence[str]]) -> tuple[int, Any]:
    results: dict[int, Any] = {}
    result: Any = INVALID
    row_numbers: Any = None
    for index, raw_step in enumerate(steps):
        if len(raw_step.strip().split("(")) > 2:
            return 1, result
        operation, first, second = _split_step(raw_step)
        if operation in ARITHMETIC:
            values = []
            for argument in (first, second):
                value = results[int(argument.replace("#", ""))] if "#" in argument else str_to_num(argument)
                if value == INVALID:
                    return 1, result
                values.append(value)
            result = ARITHMETIC[operation](*values)
        elif "table" in operation:
            rows = {row[0]: row[1:] for row in table}
            if "#" in first:
                # Upstream assigns the step result to arg1 and then reads the row of the previous table step.
                _ = results[int(first.replace("#", ""))]  # a missing step must raise, as upstream
            else:
                if first not in rows:
                    return 1, result
                row_numbers = process_row(rows[first])
            if row_numbers is None:
                raise NameError("num_row referenced before assignment")
            if row_numbers == INVALID:
                return 1, result
            if operation == "table_max":
                result = max(row_numbers)
            elif operation == "table_min":
                result = min(row_numbers)
            elif operation == "table_sum":
                result = sum(row_numbers)
            else:
                result = sum(row_numbers) / len(row_numbers)
        results[index] = result
    return 0, result


def eval_program(program: Sequence[str], table: Sequence[Sequence[str]]) -> tuple[int, Any]:
    """Official `eval_program`: (invalid_flag, result rounded to 5 decimals, or "yes"/"no"/"n/a")."""
    tokens = list(program)[:-1]
    if not _has_valid_structure(tokens):
        return 1, INVALID
    invalid = 0
    result: Any = INVALID
    try:
        steps = "|".join(tokens).split(")")[:-1]
        invalid, result = _run_steps(steps, table)
        if result not in ("yes", "no", INVALID):
            result = round(result, 5)
    except Exception:
        invalid = 1
    return invalid, result


def _symbol_map(steps: list[str]) -> dict[str, str]:
    symbols: dict[str, str] = {}
    for step in steps:
        operation, first, second = _split_step(step)
        for key in [step.strip()] if "table" in operation else [arg for arg in (first, second) if "#" not in arg]:
            symbols.setdefault(key, "a" + str(len(symbols)))
    return symbols


def _symbolic(step: str, step_by_index: Mapping[int, str], symbols: Mapping[str, str]) -> str:
    operation, first, second = _split_step(step)
    if "table" in operation:
        return symbols[step.strip()]
    parts = []
    for argument in (first, second):
        if "#" in argument:
            parts.append(_symbolic(step_by_index[int(argument.replace("#", ""))], step_by_index, symbols))
        else:
            parts.append(symbols[argument])
    operator = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "exp": "**", "greater": ">"}[operation]
    return f"( {parts[0]} {operator} {parts[1]} )"


def _is_predicted_valid(steps: list[str], symbols: Mapping[str, str]) -> bool:
    for index, step in enumerate(steps):
        if len(step.strip().split("(")) > 2:
            return False
        operation, first, second = _split_step(step)
        if "table" in operation:
            if step.strip() not in symbols:
                return False
            continue
        for argument in (first, second):
            if "#" not in argument:
                if argument not in symbols:
                    return False
            elif int(argument.strip("#")) >= index:
                return False
    return True


@functools.lru_cache(maxsize=4096)
def _simplified(expression: str) -> Any:
    """sympy's simplified form of a symbolic program (`( ( a0 - a1 ) / a1 )`), once per form: programs over symbols
    repeat few forms (a change, a ratio, a sum), and sympy takes some 30 ms for each."""
    import sympy  # imported here: 1.6 s of start-up that TAT-QA and SciTaT scoring never need

    return sympy.simplify(expression, evaluate=False)


def equal_program(gold: Sequence[str], predicted: Sequence[str]) -> bool:
    """Official `equal_program`: gold arguments become symbols a0, a1, …; equal when sympy forms are equal."""
    gold_steps = "|".join(list(gold)[:-1]).split(")")[:-1]
    symbols = _symbol_map(gold_steps)
    predicted_tokens = list(predicted)[:-1]
    try:
        if not _has_valid_structure(predicted_tokens):
            return False
        predicted_steps = "|".join(predicted_tokens).split(")")[:-1]
        if not _is_predicted_valid(predicted_steps, symbols):
            return False
    except Exception:
        return False
    gold_by_index = dict(enumerate(step.strip() for step in gold_steps))
    gold_expression = _simplified(_symbolic(gold_steps[-1], gold_by_index, symbols))
    try:
        predicted_by_index = dict(enumerate(step.strip() for step in predicted_steps))
        predicted_expression = _simplified(_symbolic(predicted_steps[-1], predicted_by_index, symbols))
    except Exception:
        return False
    return bool(gold_expression == predicted_expression)


def numeric_answer_correct(
    predicted: Any, gold: Any, *, relative_tolerance: float = 1e-2, absolute_tolerance: float = 1e-4
) -> bool:
    """A numeric answer is right when |pred − gold| ≤ max(rel·|gold|, abs); yes/no answers must match exactly."""
    if isinstance(gold, str):
        return str(predicted).strip().lower() == gold.strip().lower()
    try:
        value = float(str(predicted).replace(",", "").replace("%", "").strip())
    except ValueError:
        return False
    return math.isclose(value, float(gold), rel_tol=relative_tolerance, abs_tol=absolute_tolerance)


def gold_fields(record: Mapping[str, Any]) -> tuple[str, Any, list[list[str]]]:
    """(program, exe_ans, table) of a FinQA record, in the upstream schema (`qa`) or the flat simplified one."""
    qa = record.get("qa", record)
    answer = qa["exe_ans"] if "exe_ans" in qa else qa["answer"]
    return qa["program"] or "", answer, record["table"]


@dataclass
class FinqaQuestionScore:
    """Figures for one FinQA question."""

    uid: str
    exe_correct: bool
    prog_correct: bool
    numeric_correct: bool | None = None
    # The error evaluate.py stops with on this question (its gold program empty or unreadable), when it does.
    official_stop: str | None = None


Mode = Literal["official", "fixed"]
MODES: tuple[str, ...] = ("official", "fixed")


@dataclass
class FinqaReport:
    """The official figures (over the predictions, as evaluate.py divides) and the same over the gold questions.

    `execution_accuracy` / `program_accuracy` are evaluate.py's: one score per prediction of a known id, a
    duplicated id scored each time, divided by the number of predictions. `*_over_gold` divide by the gold
    questions, one (the last) prediction per id, a missing prediction counting as wrong.

    A program whose id the gold lacks stops evaluate.py with a KeyError before it prints anything, and one whose gold
    program it cannot read (an empty one: a question with no program) with an IndexError: then the official figures
    are None, `official_failure` says where it stops, and `*_over_known` hold our figure over the predictions of
    known ids (never to be called official), such a question scoring 0.
    """

    mode: str
    count: int
    prediction_count: int
    execution_accuracy: float | None
    program_accuracy: float | None
    execution_accuracy_over_gold: float
    program_accuracy_over_gold: float
    numeric_accuracy: float | None
    numeric_tolerance: dict[str, float]
    questions: list[FinqaQuestionScore] = field(default_factory=list)
    unknown_uids: list[str] = field(default_factory=list)
    duplicate_uids: list[str] = field(default_factory=list)
    official_failure: str | None = None
    execution_accuracy_over_known: float | None = None
    program_accuracy_over_known: float | None = None

    @property
    def headline(self) -> float | None:
        """The figure the mode stands for: official over predictions (None where evaluate.py stops), fixed over gold
        questions."""
        return self.execution_accuracy if self.mode == "official" else self.execution_accuracy_over_gold

    def summary(self) -> dict[str, Any]:
        """Aggregate figures without per-question detail."""
        return {item.name: getattr(self, item.name) for item in fields(self) if item.name != "questions"}


def score_question(record: Mapping[str, Any], predicted_program: Sequence[str] | None) -> FinqaQuestionScore:
    """Execution and program correctness of one predicted token program."""
    program, answer, table = gold_fields(record)
    uid = str(record["id"])
    if predicted_program is None:
        return FinqaQuestionScore(uid=uid, exe_correct=False, prog_correct=False)
    invalid, executed = eval_program(predicted_program, table)
    try:
        prog_correct = equal_program(program_tokenization(program), predicted_program)
    except Exception as error:
        # evaluate.py reads the gold program unguarded: an empty one (a question FinQA has no program for) raises an
        # IndexError once the prediction passes its checks, an empty prediction included. The question scores 0 and
        # keeps the error, so the report says where evaluate.py stops instead of stopping here.
        return FinqaQuestionScore(uid=uid, exe_correct=False, prog_correct=False, official_stop=type(error).__name__)
    return FinqaQuestionScore(uid=uid, exe_correct=invalid == 0 and executed == answer, prog_correct=prog_correct)


def score_dataset(
    gold_records: Iterable[Mapping[str, Any]],
    predicted_programs: Mapping[str, Sequence[str]] | Sequence[tuple[str, Sequence[str]]],
    *,
    numeric_answers: Mapping[str, Any] | None = None,
    mode: Mode = "official",
    relative_tolerance: float = 1e-2,
    absolute_tolerance: float = 1e-4,
) -> FinqaReport:
    """Score token programs (`{id: tokens}` or `(id, tokens)` pairs in file order, duplicates kept) and optionally
    `{id: number}` answers against FinQA gold records. `questions` holds one score per prediction in official mode
    (evaluate.py's loop), one per gold question in fixed mode."""
    if mode not in MODES:
        raise ValueError(f"unknown FinQA mode {mode!r}; expected one of {', '.join(MODES)}")
    numeric_answers = numeric_answers or {}
    records = {str(record["id"]): record for record in gold_records}
    pairs = predicted_programs.items() if isinstance(predicted_programs, Mapping) else predicted_programs
    entries = [(str(uid), value) for uid, value in pairs]
    latest = dict(entries)
    scored: dict[tuple[str, tuple[str, ...] | None], FinqaQuestionScore] = {}

    def score_of(uid: str, tokens: Sequence[str] | None) -> FinqaQuestionScore:
        """A question's score, computed once for the gold list and the predictions' (a copy for each)."""
        key = (uid, None if tokens is None else tuple(tokens))
        if key not in scored:
            scored[key] = score_question(records[uid], tokens)
        return replace(scored[key])

    by_gold: list[FinqaQuestionScore] = []
    for uid, record in records.items():
        score = score_of(uid, latest.get(uid))
        if numeric_answers:
            _, answer, _ = gold_fields(record)
            score.numeric_correct = uid in numeric_answers and numeric_answer_correct(
                numeric_answers[uid],
                answer,
                relative_tolerance=relative_tolerance,
                absolute_tolerance=absolute_tolerance,
            )
        by_gold.append(score)
    # evaluate.py: `for tmp in data` over the predictions (an unknown id would stop it with a KeyError).
    by_prediction = [score_of(uid, tokens) for uid, tokens in entries if uid in records]
    given = [uid for uid, _ in entries]
    execution = _share(score.exe_correct for score in by_prediction)
    program = _share(score.prog_correct for score in by_prediction)
    failure = _official_failure(given, records, by_prediction)
    return FinqaReport(
        mode=mode,
        count=len(by_gold),
        prediction_count=len(by_prediction),
        execution_accuracy=None if failure else execution,
        program_accuracy=None if failure else program,
        official_failure=failure,
        execution_accuracy_over_known=execution if failure else None,
        program_accuracy_over_known=program if failure else None,
        execution_accuracy_over_gold=_share(score.exe_correct for score in by_gold),
        program_accuracy_over_gold=_share(score.prog_correct for score in by_gold),
        numeric_accuracy=_share(bool(score.numeric_correct) for score in by_gold) if numeric_answers else None,
        numeric_tolerance={"relative": relative_tolerance, "absolute": absolute_tolerance},
        questions=by_prediction if mode == "official" else by_gold,
        unknown_uids=sorted((set(given) | set(numeric_answers)) - set(records)),
        duplicate_uids=sorted(uid for uid, times in Counter(given).items() if times > 1),
    )


def _official_failure(
    given: Sequence[str], records: Mapping[str, Mapping[str, Any]], by_prediction: Sequence[FinqaQuestionScore]
) -> str | None:
    """Where evaluate.py stops, if it does: the first prediction, in file order, whose id the gold lacks (a KeyError)
    or whose gold program it cannot read (an IndexError for an empty one); None when it prints its figures."""
    scores = iter(by_prediction)  # one per prediction of a known id, in file order
    for index, uid in enumerate(given):
        where = f"at prediction {index + 1} of {len(given)}"
        if uid not in records:
            stop = f"a KeyError {where} (id {uid!r} is not in the gold file)"
        elif error := next(scores).official_stop:
            program = gold_fields(records[uid])[0]
            fault = "is empty" if not program.strip() else f"{program!r} cannot be read"
            article = "an" if error[0] in "AEIOU" else "a"
            stop = f"{article} {error} {where} (id {uid!r}: its gold program {fault})"
        else:
            continue
        return f"FinQA's evaluate.py stops with {stop} and prints no figure: there is no official figure for this file."
    return None


def _share(flags: Iterable[bool]) -> float:
    values = list(flags)
    return sum(values) / len(values) if values else 0.0
