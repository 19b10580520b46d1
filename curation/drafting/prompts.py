"""Drafting prompts (pure, no Django): default templates, rendering a context, and parsing small-model output."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from curation.table_shape import TableShape
from curation.toolkit.extraction import extract_answer, strip_markdown

# SciTaT Table 8, requirement 2: a question must need the paragraph as well as the tables. Only where the type
# cannot (which table reports X; put values into a table) may a question rest on the tables alone.
TABLE_ONLY_TYPES = frozenset({"table_lookup", "tabulation"})

QUESTION_TEMPLATE_NAME = "SciTaT-style question generation (default)"


def _shipped(kind: str) -> str:
    """The default prompt of a kind as shipped, in default_prompts/<kind>.txt (its content hash is its version: an edit
    there is a new default). The question prompt holds its few-shot examples, an `=== examples: <type> ===` block per
    type."""
    return (Path(__file__).with_name("default_prompts") / f"{kind}.txt").read_text(encoding="utf-8")


# Each kind's default prompt: its name and its text.
DEFAULT_TEMPLATES: dict[str, tuple[str, str]] = {
    "question": (QUESTION_TEMPLATE_NAME, _shipped("question")),
    "rationale_answer": ("Reason / Answer chain of thought (default)", _shipped("rationale_answer")),
    "header_paraphrase": ("Header paraphrases (default)", _shipped("header_paraphrase")),
}
DEFAULT_QUESTION_TEMPLATE = DEFAULT_TEMPLATES["question"][1]
DEFAULT_ANSWER_TEMPLATE = DEFAULT_TEMPLATES["rationale_answer"][1]

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
class ContextData:
    """What a drafting prompt needs of a context: tables, paragraphs and the reasoning type."""

    tables: list[TableShape]
    paragraphs: list[str]
    reasoning_type: str = ""
    reasoning_type_code: str = ""
    reasoning_description: str = ""
    parent_code: str = ""


def render_context(context: ContextData, *, max_chars: int = 8000) -> str:
    """Tables then paragraphs, cut to `max_chars` so a small model's window is not exceeded."""
    parts = [table.prompt_text(position, max_rows=40, cell_chars=60) for position, table in enumerate(context.tables)]
    parts += ["Paragraph: " + re.sub(r"\s+", " ", text).strip() for text in context.paragraphs if text.strip()]
    text = "\n\n".join(parts)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def question_messages(template: str, context: ContextData, *, max_chars: int = 8000) -> list[dict[str, str]]:
    """Chat messages asking for one question of the context's reasoning type, with that type's examples."""
    body, blocks = split_examples(template)
    codes = (context.reasoning_type_code, context.parent_code, "default")  # the type's examples, else its parent's
    examples = next((blocks[code] for code in codes if blocks.get(code)), "(no examples)")
    needs_text = context.reasoning_type_code not in TABLE_ONLY_TYPES
    text_requirement = (
        "2. The question must need the paragraph as well as the tables: it cannot be answered from the tables alone."
        if needs_text
        else "2. Use the paragraph where it helps; a question over the tables alone is fine for this type."
    )
    values = {
        "reasoning_type": context.reasoning_type or "any",
        "reasoning_description": context.reasoning_description or "No description given.",
        "text_requirement": text_requirement,
        "examples": examples,
        "context": render_context(context, max_chars=max_chars),
    }
    return [{"role": "user", "content": render(body, values)}]


def answer_messages(
    template: str, context: ContextData, question: str, *, max_chars: int = 8000
) -> list[dict[str, str]]:
    """Chat messages asking for `Reason: … Answer: …` to `question` over the context."""
    body, _ = split_examples(template)
    prompt = render(body, {"question": question, "context": render_context(context, max_chars=max_chars)})
    return [{"role": "user", "content": prompt}]


def header_messages(template: str, header: str) -> list[dict[str, str]]:
    """Chat messages asking for natural paraphrases of one table header (its `{{caption_hint}}` left empty)."""
    return [{"role": "user", "content": render(template, {"header": header, "caption_hint": ""})}]


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
# "Reason: … = 2.5. Answer: 2.5" on one line: the label follows a sentence's end.
_INLINE_ANSWER_LABEL = re.compile(
    r"(?<=[.!?)\]])[ \t]+[*_]*(?:final[ \t]+)?answer[ \t]*[*_]*[ \t]*[:：][*_]*", re.IGNORECASE
)
_LIST_MARK = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s+")
_LEADING_MARK = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s*")  # also glued to its text: "1.What …"


def _answer_items(items: Sequence[str]) -> list[str]:
    """Answer items, one per line when the model wrote them one per line ("S2\\nS3" is two items)."""
    lines = [_LIST_MARK.sub("", line).strip() for item in items for line in str(item).splitlines()]
    return [line for line in lines if line]


class _Parsed:
    error: str

    @property
    def is_parsed(self) -> bool:
        """Whether what was asked for was found (no `error`)."""
        return not self.error


@dataclass(frozen=True)
class ParsedQuestion(_Parsed):
    """A question read from model output; `error` says why parsing failed (then `question` is the raw text)."""

    question: str
    error: str = ""
    rule: str = ""
    extra_questions: int = 0


@dataclass(frozen=True)
class ParsedAnswer(_Parsed):
    """Rationale and answer items read from model output; `error` set when no answer was found."""

    rationale: str
    answer: list[str]
    error: str = ""
    rule: str = ""


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
    segments = []
    for match in _QUESTION_LABEL.finditer(text):
        rest = text[match.end() :]
        stop = _STOP_LABEL.search("\n" + rest)
        segment = rest[: stop.start() - 1] if stop else rest
        line = _one_line(re.split(r"\n\s*\n", segment.strip(), maxsplit=1)[0])  # its first paragraph
        if line:
            segments.append(line)
    if segments:
        question = segments[0]
        if "?" in question and not question.endswith("?"):
            question = question[: question.index("?") + 1]
        if len(question) >= 8:
            return ParsedQuestion(question=question, rule="label", extra_questions=len(segments) - 1)
    lines = [line for line in map(_one_line, text.splitlines()) if line]
    asking = [line for line in lines if "?" in line]
    candidates = [line for line in asking if not _PREAMBLE.match(line)] or asking
    if candidates:
        question = _first_question_sentence(candidates[0])
        question = _LEADING_MARK.sub("", question).strip()
        if len(question) >= 8:
            return ParsedQuestion(question=question, rule="question_mark", extra_questions=len(candidates) - 1)
    return ParsedQuestion(question=text[:2000], error="no question found in the model's output", rule="raw")


def parse_rationale_answer(output: str) -> ParsedAnswer:
    """`Reason: … Answer: …` from a model's output; tolerant of missing labels, markdown and chatter."""
    text = _clean_output(output)
    if not text:
        return ParsedAnswer(rationale="", answer=[], error="the model returned no text", rule="empty")
    # The prompt ends with "Reason:", so an output that starts straight with the reasoning is normal.
    reason_match = _REASON_LABEL.search(text)
    rationale_start = reason_match.end() if reason_match else 0
    answer_matches = list(_ANSWER_LABEL.finditer(text))
    if not any(match.start() >= rationale_start for match in answer_matches):
        answer_matches += list(_INLINE_ANSWER_LABEL.finditer(text, rationale_start))[-1:]
    if answer_matches:
        first_answer = next((m for m in answer_matches if m.start() >= rationale_start), answer_matches[-1])
        rationale = text[rationale_start : first_answer.start()]  # empty when the answer comes first
        segment = text[first_answer.end() :]
        # A small model often keeps going with a new "Question:" or "Example"; the answer ends there.
        cut = re.search(r"\n\s*(?:example\s*\d*|question|context|reason(?:ing)?)\s*[:：\n]", segment, re.IGNORECASE)
        if cut:
            segment = segment[: cut.start()]
        extracted = extract_answer("Answer: " + segment.strip(), method="cot")
        items = _answer_items([item for item in extracted.items if item])
        if items:
            return ParsedAnswer(rationale=_tidy(rationale), answer=items, rule="label")
    extracted = extract_answer(text, method="cot")
    if extracted.is_parsed and extracted.items:
        items = _answer_items(extracted.items)
        return ParsedAnswer(rationale=_tidy(text[rationale_start:]), answer=items, rule=extracted.rule)
    return ParsedAnswer(
        rationale=_tidy(text[rationale_start:]), answer=[], error="no answer found in the model's output", rule="raw"
    )


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip()


# What a header's paraphrase is not: a question, or a sentence about the header.
_NOT_A_NAME = re.compile(
    r"\?|^(?:what|which|how|why|who|when|where|does|do|can)\b|\b(?:is|are|was|were|means|refers)\b", re.IGNORECASE
)


def _names_the_header(phrase: str, header: str) -> bool:
    """Whether a phrase shows it is about the header: one of its words begins as a word of the header does (its
    first three letters), or a word of the header is the phrase's initials ("EM", "exact match")."""
    words = re.findall(r"[a-z0-9]+", phrase.lower())
    initials = "".join(word[0] for word in words)
    return any(
        any(word.startswith(token[:3]) for word in words) or (len(token) > 1 and token in initials)
        for token in re.findall(r"[a-z0-9]+", header.lower())
    )


def parse_header_phrases(output: str, header: str, *, limit: int = 3) -> list[str]:
    """Up to `limit` distinct short phrases, one per line, each a name that keeps a word of the header (or its
    initials): a question, a sentence or a phrase about something else is dropped, and the header itself stands
    when nothing usable came back."""
    phrases: list[str] = []
    for line in _clean_output(output).splitlines():
        line = _LEADING_MARK.sub("", line)
        line = _one_line(line).rstrip(".")
        if not line or len(line) > 60 or _PREAMBLE.match(line) or line.endswith(":"):
            continue
        if _NOT_A_NAME.search(line) or not _names_the_header(line, header):
            continue
        if line.lower() not in (phrase.lower() for phrase in phrases):
            phrases.append(line)
        if len(phrases) >= limit:
            break
    return phrases or [header]


# Content hashes of earlier shipped defaults: a project still on one of them, unedited, moves to today's default as a
# new version (its runs keep pointing at the version they used).
SUPERSEDED_DEFAULT_HASHES: dict[str, frozenset[str]] = {
    "question": frozenset(
        {
            "1fb50ce384296a9a71f7dcfade4de7b1980aecaaa7a325d2654b17826cd767d5",
            "91dd120e14b80375bceddd42defd1d86aec9f5b92a73de3a1fc82e1c59d5f997",  # examples without their contexts
        }
    ),
}
DEFAULT_UPDATE_NOTES = {"question": "Default updated: every example question comes with its own short context."}
