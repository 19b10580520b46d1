"""Drafting prompts (pure, no Django): default templates, rendering a context, and parsing small-model output."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from curation.toolkit.extraction import extract_answer, strip_markdown

# SciTaT Table 8, requirement 2: a question must need the paragraph as well as the tables. Only where the type
# cannot (which table reports X; put values into a table) may a question rest on the tables alone.
TABLE_ONLY_TYPES = frozenset({"table_lookup", "tabulation"})

QUESTION_TEMPLATE_NAME = "SciTaT-style question generation (default)"
ANSWER_TEMPLATE_NAME = "Reason / Answer chain of thought (default)"
HEADER_TEMPLATE_NAME = "Header paraphrases (default)"

DEFAULT_QUESTION_TEMPLATE = """\
You are a highly intelligent and obedient academic field question generation system.
You are given a context from a scientific paper: its tables and a paragraph that mentions them.
Generate a question referring to the tables and paragraph.
It must meet the requirements in the question description "{{reasoning_type}}": {{reasoning_description}}

The generated question must meet:
1. The question should be with fewer statements and more reasoning and calculation.
{{text_requirement}}
3. The question must meet the question description.
4. Do not generate multiple questions or sub-questions at once, and do not answer the question.
5. The question must be answerable from the context alone, without outside sources; refer to rows, columns
   and settings by the names the context uses, and to a table as "Table N".

Examples of questions of this type (each for a different context):
{{examples}}

Context:
{{context}}

Write the question on one line, starting with "Question:".

=== examples: table_lookup ===
Question: Which table reports the inference speed of the distilled models?
Question: In which table can we find the ablation without the copy mechanism?
Question: Which table lists the hyper-parameters used for fine-tuning on SQuAD?
=== end ===

=== examples: span_lookup ===
Question: Which optimizer is used when the encoder is frozen?
Question: What is the name of the dataset on which the baseline scores 71.2 F1?
Question: Which metric do the authors report for the summarisation experiments?
=== end ===

=== examples: arithmetic_calculation ===
Question: By how many BLEU points does back-translation improve the plain transformer on WMT14 En-De?
Question: What is the ratio of the parameter count of the large model to that of the base model?
Question: What is the percentage change in accuracy when the training set shrinks from 10k to 1k examples?
=== end ===

=== examples: comparison ===
Question: Which of the two pre-training objectives gives higher recall on the test set?
Question: Is the F1 of the proposed method on MNLI above or below that of RoBERTa-large?
Question: Between beam search and sampling, which decoding strategy has the lower perplexity?
=== end ===

=== examples: aggregation ===
Question: What is the average exact-match score of the proposed model over the five datasets?
Question: What is the total number of training examples across all three languages?
Question: What is the mean latency of the models that use quantisation?
=== end ===

=== examples: ranking ===
Question: Where does the proposed method rank among all systems by ROUGE-L?
Question: Which three models have the highest accuracy on the hard split?
Question: Order the tokenisers from fastest to slowest.
=== end ===

=== examples: counting ===
Question: How many baselines outperform the proposed model on the out-of-domain set?
Question: How many datasets show an improvement of more than 2 points with data augmentation?
Question: How many of the evaluated languages have fewer than 10k training sentences?
=== end ===

=== examples: domain_knowledge_calculation ===
Question: Using the precision and recall reported for the entity tagger, what is its F1 score?
Question: Given the reported FLOPs per token and the number of tokens, how many FLOPs did pre-training take?
Question: What is the error rate of the best classifier, given its accuracy on the test set?
=== end ===

=== examples: descriptive_analysis ===
Question: How does accuracy change as more passages are retrieved, and what explanation does the paragraph give?
Question: What trend do the results show across model sizes, and is it consistent for every task?
Question: What do the results suggest about the benefit of pre-training on in-domain text?
=== end ===

=== examples: anomaly_detection ===
Question: Which result does not follow the general trend in the table, and what reason does the text give for it?
Question: On which dataset does the proposed method fall behind the baseline, and why might that be?
Question: Which configuration shows an unexpected drop in recall compared with its neighbours?
=== end ===

=== examples: causal_analysis ===
Question: Why does removing the attention layer hurt long documents more than short ones?
Question: What causes the gap between the zero-shot and the fine-tuned results, according to the authors?
Question: Why does the model trained with curriculum learning converge faster?
=== end ===

=== examples: tabulation ===
Question: Build a table with the model names as rows and their accuracy and parameter count as columns.
Question: List each dataset with its number of training, validation and test examples, in a table.
Question: Put the F1 scores of the three systems on the two test sets into a two-row table.
=== end ===

=== examples: default ===
Question: Which setting gives the best score, and by how much does it beat the second best?
Question: What is the difference between the two highest values in the main results table?
Question: How does the proposed method compare with the strongest baseline?
=== end ===
"""

DEFAULT_ANSWER_TEMPLATE = """\
Answer a question about a scientific paper from the given context (tables and a paragraph).
Think step by step: find the cells and sentences you need, do any calculation, then give the answer.
Write your reasoning after "Reason:" and the final answer after "Answer:".
A short answer is a number, a name or a few words; give several items on separate lines if the question asks
for several. A free-form answer is one to three sentences.

Example 1
Question: By how many points does Model B improve over Model A on Dev?
Context: | Model | Dev | Test | / | Model A | 71.5 | 70.2 | / | Model B | 74.0 | 72.9 |
Reason: Model A scores 71.5 on Dev and Model B scores 74.0. The improvement is 74.0 - 71.5 = 2.5.
Answer: 2.5

Example 2
Question: Which two systems have the lowest error rate?
Context: | System | Error (%) | / | S1 | 12.4 | / | S2 | 9.8 | / | S3 | 10.1 | / | S4 | 15.0 |
Reason: The error rates are 12.4, 9.8, 10.1 and 15.0. The two lowest are 9.8 (S2) and 10.1 (S3).
Answer: S2
S3

Example 3
Question: Why does accuracy drop for the longest inputs?
Context: | Length | Acc | / | <128 | 88.1 | / | 128-512 | 85.3 | / | >512 | 71.0 |
Paragraph: inputs longer than 512 tokens are truncated.
Reason: Accuracy falls from 85.3 to 71.0 above 512 tokens, and the paragraph says such inputs are truncated,
so part of the evidence is cut off.
Answer: Inputs longer than 512 tokens are truncated, so the model loses part of the evidence and accuracy drops to 71.0.

Now the real one.
Question: {{question}}
Context:
{{context}}

Reason:"""

DEFAULT_HEADER_TEMPLATE = """\
A table column or row is labelled "{{header}}"{{caption_hint}}.
Give three short natural phrases a person would use for it in a question, one per line, no numbering.
"""

_PLACEHOLDER = re.compile(r"\{\{\s*(\w+)\s*\}\}")
_EXAMPLE_BLOCK = re.compile(r"^=== examples: *([\w-]+) *===\s*\n(.*?)^=== end ===\s*$", re.MULTILINE | re.DOTALL)


def content_hash(text: str) -> str:
    """The version id of a template: sha256 of its text with line endings normalised."""
    return hashlib.sha256(text.replace("\r\n", "\n").encode()).hexdigest()


def render(template: str, values: Mapping[str, str]) -> str:
    """Fill `{{name}}` placeholders; unknown names stay as written so an edited template never crashes."""
    return _PLACEHOLDER.sub(lambda match: values.get(match.group(1), match.group(0)), template)


def split_examples(template: str) -> tuple[str, dict[str, str]]:
    """The template body without its example blocks, and the blocks by reasoning-type code."""
    blocks = {code: body.strip() for code, body in _EXAMPLE_BLOCK.findall(template)}
    body = _EXAMPLE_BLOCK.sub("", template)
    return re.sub(r"\n{3,}", "\n\n", body).strip(), blocks


@dataclass(frozen=True)
class TableData:
    """A table as the prompt shows it."""

    label: str
    caption: str
    rows: list[list[str]]
    number: str = ""


@dataclass(frozen=True)
class ContextData:
    """What a drafting prompt needs of a context: tables, paragraphs and the reasoning type."""

    tables: list[TableData]
    paragraphs: list[str]
    reasoning_type: str = ""
    reasoning_type_code: str = ""
    reasoning_description: str = ""
    parent_code: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _cell(text: str, limit: int = 60) -> str:
    text = re.sub(r"\s+", " ", str(text)).strip().replace("|", "/")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def render_table(table: TableData, *, max_rows: int = 40) -> str:
    """A table as pipe-separated rows under its number, label and caption."""
    title = f"Table {table.number}" if table.number else "Table"
    if table.label:
        title += f" ({table.label})"
    lines = [f"{title}: {_cell(table.caption, 300)}" if table.caption else title]
    for row in table.rows[:max_rows]:
        lines.append("| " + " | ".join(_cell(cell) for cell in row) + " |")
    if len(table.rows) > max_rows:
        lines.append(f"| … {len(table.rows) - max_rows} more rows |")
    return "\n".join(lines)


def render_context(context: ContextData, *, max_chars: int = 8000) -> str:
    """Tables then paragraphs, cut to `max_chars` so a small model's window is not exceeded."""
    parts = [render_table(table) for table in context.tables]
    parts += ["Paragraph: " + re.sub(r"\s+", " ", text).strip() for text in context.paragraphs if text.strip()]
    text = "\n\n".join(parts)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def question_messages(template: str, context: ContextData, *, max_chars: int = 8000) -> list[dict[str, str]]:
    """Chat messages asking for one question of the context's reasoning type, with that type's examples."""
    body, blocks = split_examples(template)
    examples = (
        blocks.get(context.reasoning_type_code)
        or blocks.get(context.parent_code)
        or blocks.get("default")
        or "(no examples)"
    )
    needs_text = context.reasoning_type_code not in TABLE_ONLY_TYPES
    text_requirement = (
        "2. The question must need the paragraph as well as the tables: it cannot be answered from the tables alone."
        if needs_text
        else "2. Use the paragraph where it helps; a question over the tables alone is fine for this type."
    )
    prompt = render(
        body,
        {
            "reasoning_type": context.reasoning_type or "any",
            "reasoning_description": context.reasoning_description or "No description given.",
            "text_requirement": text_requirement,
            "examples": examples,
            "context": render_context(context, max_chars=max_chars),
        },
    )
    return [{"role": "user", "content": prompt}]


def answer_messages(
    template: str, context: ContextData, question: str, *, max_chars: int = 8000
) -> list[dict[str, str]]:
    """Chat messages asking for `Reason: … Answer: …` to `question` over the context."""
    body, _ = split_examples(template)
    prompt = render(body, {"question": question, "context": render_context(context, max_chars=max_chars)})
    return [{"role": "user", "content": prompt}]


def header_messages(template: str, header: str, caption: str = "") -> list[dict[str, str]]:
    """Chat messages asking for natural paraphrases of one table header."""
    hint = f" in a table captioned “{_cell(caption, 160)}”" if caption else ""
    return [{"role": "user", "content": render(template, {"header": header, "caption_hint": hint})}]


# Output parsing ------------------------------------------------------------------------------------------

_FENCE = re.compile(r"```[\w+-]*\s*\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?(?:</think>|$)", re.DOTALL | re.IGNORECASE)
_QUESTION_LABEL = re.compile(
    r"(?:^|\n)[ \t]*[#>*_\-\s]*(?:generated\s+|new\s+|final\s+)?(?:question|q)"
    r"[ \t]*\d*[ \t]*[*_]*[ \t]*[:：.)][*_]*[ \t]*",
    re.IGNORECASE,
)
_STOP_LABEL = re.compile(
    r"\n[ \t]*[#*_\s]*(?:answer|reason(?:ing)?|rationale|context|explanation|note|question|q)"
    r"[ \t]*\d*[ \t]*[*_]*[ \t]*[:：]",
    re.IGNORECASE,
)
_PREAMBLE = re.compile(
    r"^(?:sure|okay|ok|certainly|of course|here(?:'s| is| are)|below|i (?:will|would|can)|let me)\b", re.IGNORECASE
)
_REASON_LABEL = re.compile(
    r"(?:^|\n)[ \t]*[#*_\s]*(?:reason(?:ing)?|rationale|explanation|step[- ]by[- ]step)[ \t]*[*_]*[ \t]*[:：][*_]*",
    re.IGNORECASE,
)
_ANSWER_LABEL = re.compile(r"(?:^|\n)[ \t]*[#*_\s]*(?:final[ \t]+)?answer[ \t]*[*_]*[ \t]*[:：][*_]*", re.IGNORECASE)


@dataclass(frozen=True)
class ParsedQuestion:
    """A question read from model output; `error` says why parsing failed (then `question` is the raw text)."""

    question: str
    error: str = ""
    rule: str = ""
    extra_questions: int = 0

    @property
    def is_parsed(self) -> bool:
        """Whether a question was found."""
        return not self.error


@dataclass(frozen=True)
class ParsedAnswer:
    """Rationale and answer items read from model output; `error` set when no answer was found."""

    rationale: str
    answer: list[str]
    error: str = ""
    rule: str = ""

    @property
    def is_parsed(self) -> bool:
        """Whether an answer was found."""
        return not self.error


def _clean_output(text: str) -> str:
    text = _THINK.sub("", (text or "").replace("\r\n", "\n"))
    text = _FENCE.sub(lambda match: match.group(1), text)
    return text.strip()


def _one_line(text: str) -> str:
    text = strip_markdown(re.sub(r"\s+", " ", text)).strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'“”":
        text = text[1:-1].strip()
    return text.strip("“”\"' ").strip()


def _first_question_sentence(text: str) -> str:
    """Up to and including the first question mark, starting at the sentence that holds it."""
    end = text.find("?")
    if end < 0:
        return ""
    start = max(text.rfind(". ", 0, end), text.rfind("! ", 0, end), text.rfind(": ", 0, end))
    return text[start + 2 if start >= 0 else 0 : end + 1].strip()


def parse_question(output: str) -> ParsedQuestion:
    """The first question in a model's output: after a `Question:` label, else the first line ending in '?'."""
    text = _clean_output(output)
    if not text:
        return ParsedQuestion(question="", error="the model returned no text", rule="empty")
    labelled = list(_QUESTION_LABEL.finditer(text))
    if labelled:
        segments = []
        for match in labelled:
            rest = text[match.end() :]
            stop = _STOP_LABEL.search("\n" + rest)
            segment = rest[: stop.start() - 1] if stop else rest
            paragraph = re.split(r"\n\s*\n", segment.strip(), maxsplit=1)[0]
            line = _one_line(paragraph)
            if line:
                segments.append(line)
        if segments:
            question = segments[0]
            if "?" in question and not question.endswith("?"):
                question = question[: question.index("?") + 1]
            if len(question) >= 8:
                return ParsedQuestion(question=question, rule="label", extra_questions=len(segments) - 1)
    lines = [_one_line(line) for line in text.splitlines()]
    lines = [line for line in lines if line]
    candidates = [line for line in lines if "?" in line and not _PREAMBLE.match(line)]
    if not candidates:
        candidates = [line for line in lines if "?" in line]
    if candidates:
        question = _first_question_sentence(candidates[0])
        question = re.sub(r"^(?:\d{1,2}[.)]|[-*•])\s*", "", question).strip()
        if len(question) >= 8:
            return ParsedQuestion(question=question, rule="question_mark", extra_questions=len(candidates) - 1)
    return ParsedQuestion(question=text[:2000], error="no question found in the model's output", rule="raw")


def parse_rationale_answer(output: str) -> ParsedAnswer:
    """`Reason: … Answer: …` from a model's output; tolerant of missing labels, markdown and chatter."""
    text = _clean_output(output)
    if not text:
        return ParsedAnswer(rationale="", answer=[], error="the model returned no text", rule="empty")
    # The prompt ends with "Reason:", so an output that starts straight with the reasoning is normal.
    answer_matches = list(_ANSWER_LABEL.finditer(text))
    reason_match = _REASON_LABEL.search(text)
    rationale_start = reason_match.end() if reason_match else 0
    if answer_matches:
        first_answer = next((m for m in answer_matches if m.start() >= rationale_start), answer_matches[-1])
        rationale = text[rationale_start : first_answer.start()] if first_answer.start() > rationale_start else ""
        segment = text[first_answer.end() :]
        # A small model often keeps going with a new "Question:" or "Example"; the answer ends there.
        cut = re.search(r"\n\s*(?:example\s*\d*|question|context|reason(?:ing)?)\s*[:：\n]", segment, re.IGNORECASE)
        if cut:
            segment = segment[: cut.start()]
        extracted = extract_answer("Answer: " + segment.strip(), method="cot")
        items = [item for item in extracted.items if item]
        if items:
            return ParsedAnswer(rationale=_tidy(rationale), answer=items, rule="label")
    extracted = extract_answer(text, method="cot")
    if extracted.is_parsed and extracted.items:
        return ParsedAnswer(rationale=_tidy(text[rationale_start:]), answer=extracted.items, rule=extracted.rule)
    return ParsedAnswer(
        rationale=_tidy(text[rationale_start:]), answer=[], error="no answer found in the model's output", rule="raw"
    )


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def parse_header_phrases(output: str, header: str, *, limit: int = 3) -> list[str]:
    """Up to `limit` distinct short phrases, one per line; the header itself when nothing usable came back."""
    phrases: list[str] = []
    for line in _clean_output(output).splitlines():
        line = re.sub(r"^\s*(?:\d{1,2}[.)]|[-*•])\s*", "", line)
        line = _one_line(line).rstrip(".")
        if not line or len(line) > 60 or _PREAMBLE.match(line) or line.endswith(":"):
            continue
        if line.lower() not in (phrase.lower() for phrase in phrases):
            phrases.append(line)
        if len(phrases) >= limit:
            break
    return phrases or [header]


DEFAULT_TEMPLATES: dict[str, tuple[str, str]] = {
    "question": (QUESTION_TEMPLATE_NAME, DEFAULT_QUESTION_TEMPLATE),
    "rationale_answer": (ANSWER_TEMPLATE_NAME, DEFAULT_ANSWER_TEMPLATE),
    "header_paraphrase": (HEADER_TEMPLATE_NAME, DEFAULT_HEADER_TEMPLATE),
}


def example_codes(template: str) -> Sequence[str]:
    """Reasoning-type codes that have an example block in the template."""
    return list(split_examples(template)[1])
