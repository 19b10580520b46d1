"""Answer extraction: model output text → answer items and a scale, per prompting method (pure functions)."""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from typing import Any

METHODS = ("direct", "cot", "car", "pot", "tatllm", "tool")

_SCALE_WORDS = {
    word: scale
    for scale, words in (
        ("percent", ("%", "percent", "per cent", "percentage")),
        ("thousand", ("thousand", "thousands", "k")),
        ("million", ("million", "millions", "mn", "m")),
        ("billion", ("billion", "billions", "bn", "b")),
    )
    for word in words
}

_NUMBER = r"[-+−]?\(?[-+−]?[$€£¥]?\s*(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?\)?|[-+−]?\(?[$€£¥]?\s*\.\d+\)?"
_NUMBER_WITH_SCALE = re.compile(
    rf"^(?P<currency>(?:USD|EUR|GBP|RMB)\s*)?(?P<number>{_NUMBER})\s*"
    r"(?P<scale>%|per\s*cent|percent(?:age)?|thousands?|millions?|billions?|bn|mn|k|m|b)?\.?$",
    re.IGNORECASE,
)
_SCALE_IN_TEXT = re.compile(
    r"(?<=\d)\s*(%)|\b(per\s*cent|percent|thousands?|millions?|billions?|bn|mn)\b", re.IGNORECASE
)

# "Answer:", "**Answer:**", "Final answer:", "### Answer:", also inline after a rationale.
_ANSWER_MARKER = re.compile(
    r"(?:^|(?<=[\s*_#>.:]))(?:\*\*|__)?\s*(?:final\s+)?answer\s*(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?",
    re.IGNORECASE | re.MULTILINE,
)
# A new section starts: the model went on to another field or another few-shot example.
_NEXT_SECTION = re.compile(
    r"(?:^|\n)\s*(?:#+\s*)?(?:\*\*|__)?\s*(?:question|reason|rationale|explanation|table|paragraph|context|note|"
    r"answer|tips?)\s*(?:\*\*|__)?\s*[:：]",
    re.IGNORECASE,
)
_ANSWER_IS = re.compile(r"\b(?:the\s+)?(?:final\s+)?answer\s+(?:is|would\s+be|should\s+be)\s*[:：]?\s*", re.IGNORECASE)
_BOXED = re.compile(r"\\boxed\{((?:[^{}]|\{[^{}]*\})*)\}")
_FENCE = re.compile(r"```[\w+-]*\s*\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:[-*•+]|\d{1,2}[.)])\s+(?=\S)")
_CLAUSE_END = re.compile(
    r",\s+(?:which|because|as|since|so|and\s+the\s+scale)\b|\.\s+(?=[A-Z])|\s+\((?:since|because|as)\b|\n",
)


@dataclass(frozen=True)
class ExtractedAnswer:
    """Answer items as written (markdown removed) and the scale; `is_parsed` is False for a fallback guess."""

    items: list[str]
    scale: str = ""
    is_parsed: bool = True
    rule: str = ""

    @property
    def values(self) -> list[str]:
        """Items with currency, thousands separators and scale words removed where an item is a number."""
        return [split_scale(item)[0] for item in self.items]


@dataclass(frozen=True)
class TatLlmSteps:
    """The step table of TAT-LLM's pipeline; missing steps are empty strings."""

    answer_type: str = ""
    evidence_table: str = ""
    evidence_text: str = ""
    equation: str = ""
    answer: str = ""
    scale: str = ""


def normalize_scale(word: str) -> str:
    """Map a scale word or symbol (`%`, `mn`, `Millions`, `none`) to one of curation.answer_types.SCALES."""
    cleaned = re.sub(r"\s+", " ", strip_markdown(word).strip().strip(".").lower())
    return _SCALE_WORDS.get(cleaned, "")


def split_scale(item: str) -> tuple[str, str]:
    """Split a numeric item into (plain number, scale): "$1,234.5 million" → ("1234.5", "million")."""
    match = _NUMBER_WITH_SCALE.match(item.strip())
    if not match:
        return item, ""
    raw = match.group("number")
    is_negative = raw.strip().startswith(("-", "−")) or ("(" in raw and ")" in raw)
    digits = re.sub(r"[^\d.]", "", raw)
    if not digits or digits == ".":
        return item, ""
    return ("-" if is_negative else "") + digits, normalize_scale(match.group("scale") or "")


def strip_markdown(text: str) -> str:
    """Remove emphasis, inline code, heading and quote marks, and surrounding quotes."""
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text, flags=re.DOTALL)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", text)
    text = re.sub(r"`([^`]*)`", r"\1", text)
    text = re.sub(r"^\s*(?:#+|>)\s*", "", text, flags=re.MULTILINE)
    text = text.replace("**", "").replace("__", "")
    return text.strip()


def _clean_item(item: str) -> str:
    item = strip_markdown(_BULLET.sub("", item, count=1))
    item = re.sub(r"[ \t]+", " ", item).strip()
    if len(item) >= 2 and item[0] == item[-1] and item[0] in "\"'":
        item = item[1:-1].strip()
    item = item.rstrip(",;")
    # A short answer's closing period is punctuation, not content; full sentences keep theirs.
    if item.endswith(".") and len(item.split()) <= 4 and not item.endswith("..."):
        item = item[:-1].rstrip()
    return item


def split_items(segment: str) -> list[str]:
    """Split an answer segment into items: a list literal, bullet/numbered lines, or blank-line blocks."""
    segment = segment.strip()
    fenced = _FENCE.findall(segment)
    if fenced:
        segment = "\n\n".join(block.strip() for block in fenced)
    literal = _list_literal(segment)
    if literal is not None:
        return [item for item in (_clean_item(str(value)) for value in literal) if item]
    lines = [line for line in segment.splitlines() if line.strip()]
    if len(lines) > 1 and sum(1 for line in lines if _BULLET.match(line)) >= len(lines) - 1:
        bullets = [line for line in lines if _BULLET.match(line)]
        return [item for item in (_clean_item(line) for line in bullets) if item]
    blocks = re.split(r"\n\s*\n", segment)
    return [item for item in (_clean_item(block) for block in blocks) if item]


def _list_literal(segment: str) -> list[Any] | None:
    if not (segment.startswith("[") and segment.endswith("]")):
        return None
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(segment)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, list):
            return value
    return None


def _detect_scale(items: list[str]) -> str:
    if scale := next((scale for _, scale in map(split_scale, items) if scale), ""):
        return scale
    match = next(filter(None, map(_SCALE_IN_TEXT.search, items)), None)
    return normalize_scale(match.group(1) or match.group(2)) if match else ""


def _answer(items: list[str], *, rule: str, is_parsed: bool = True, scale: str | None = None) -> ExtractedAnswer:
    return ExtractedAnswer(
        items=items, scale=_detect_scale(items) if scale is None else scale, is_parsed=is_parsed, rule=rule
    )


def _from_json(text: str) -> ExtractedAnswer | None:
    candidates = [text.strip(), *(block.strip() for block in _FENCE.findall(text))]
    for candidate in candidates:
        if not candidate.startswith("{"):
            continue
        try:
            data = json.loads(candidate)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        value = next((data[key] for key in ("answer", "final_answer", "Answer") if key in data), None)
        if value is None:
            continue
        values = value if isinstance(value, list) else [value]
        items = [item for item in (_clean_item(_render_value(v)) for v in values) if item]
        scale = normalize_scale(str(data["scale"])) if isinstance(data.get("scale"), str) else None
        return _answer(items, rule="json", scale=scale)
    return None


def _after_marker(text: str) -> ExtractedAnswer | None:
    for match in _ANSWER_MARKER.finditer(text):
        rest = text[match.end() :]
        following = _NEXT_SECTION.search(rest)
        segment = rest[: following.start()] if following else rest
        nested = _after_answer_is(segment)
        items = nested.items if nested is not None else split_items(segment)
        if items:
            return _answer(items, rule="answer_marker")
    return None


def _after_answer_is(text: str) -> ExtractedAnswer | None:
    matches = list(_ANSWER_IS.finditer(text))
    if not matches:
        return None
    rest = text[matches[-1].end() :]
    end = _CLAUSE_END.search(rest)
    segment = rest[: end.start()] if end else rest
    items = split_items(segment)
    return _answer(items, rule="answer_is") if items else None


def _boxed(text: str) -> ExtractedAnswer | None:
    found = _BOXED.findall(text)
    if not found:
        return None
    value = re.sub(r"\\text\{([^}]*)\}", r"\1", found[-1]).replace("\\%", "%").replace("\\,", "")
    return _answer(split_items(value), rule="boxed")


def _fallback(text: str, *, method: str) -> ExtractedAnswer:
    if method == "direct" or method == "tool":
        return _answer(split_items(text), rule="whole_output", is_parsed=bool(text.strip()))
    # A reasoning output without a marker: its last paragraph is the best guess, flagged as such.
    paragraphs = [block for block in re.split(r"\n\s*\n", text) if block.strip()]
    items = split_items(paragraphs[-1]) if paragraphs else []
    return _answer(items, rule="last_paragraph", is_parsed=False)


# An abstention: the model says the context cannot answer (meta paper §3.4). The canonical reply is
# ABSTENTION_ANSWER; the phrasings models use instead are recognised only when they are the whole answer.
ABSTENTION_ANSWER = "Not answerable"
ABSTENTION_INSTRUCTION = (
    f'If the Table and Paragraph do not contain what the question needs, answer "{ABSTENTION_ANSWER}" instead.'
)
_ABSTENTION = re.compile(
    r"^(?:the\s+)?(?:question\s+)?(?:is\s+)?(?:"
    r"not\s+answerable|unanswerable|cannot\s+be\s+answered|can'?t\s+be\s+answered|(?:i\s+)?cannot\s+answer|"
    r"cannot\s+be\s+determined|can'?t\s+be\s+determined|not\s+determinable|"
    r"(?:there\s+is\s+)?(?:not\s+enough|insufficient)\s+(?:information|data)|no\s+answer|"
    r"(?:the\s+)?(?:information|data|answer)\s+is\s+not\s+(?:available|provided|given|present)(?:\s+in\s+the\s+context)?"
    r")(?:\s+(?:from|with|given|based\s+on)\s+(?:this|the)\s+(?:context|table|table\s+and\s+paragraph|information))?"
    r"\W*$",
    re.IGNORECASE,
)
_ABSTENTION_MAX_CHARS = 120


def is_abstention(items: list[str] | tuple[str, ...]) -> bool:
    """True when the extracted answer is only a refusal to answer ("Not answerable", "cannot be determined from the
    context", …); a sentence that also gives a value is an answer, not an abstention."""
    text = " ".join(strip_markdown(str(item)).strip() for item in items if str(item).strip())
    text = re.sub(r"\s+", " ", text).strip().strip("\"'`.").strip()
    return bool(text) and len(text) <= _ABSTENTION_MAX_CHARS and bool(_ABSTENTION.match(text))


def extract_answer(text: str, *, method: str = "direct") -> ExtractedAnswer:
    """Extract answer items and scale from a model's text output for a prompting method (see METHODS)."""
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    text = _THINK.sub("", text or "").replace("\r\n", "\n").strip()
    if method == "pot":
        return extract_program_answer(text)
    if method == "tatllm":
        steps = parse_tatllm_steps(text)
        if steps.answer:
            return _answer(_split_tatllm_answer(steps.answer), rule="tatllm_table", scale=normalize_scale(steps.scale))
    for rule in (_from_json, _after_marker, _after_answer_is, _boxed):
        found = rule(text)
        if found is not None and found.items:
            return found
    return _fallback(text, method=method)


def _render_value(value: Any) -> str:
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value.is_integer() and abs(value) < 1e15:
            return str(int(value))
        # Round off binary noise (0.1 + 0.2) without touching meaningful digits.
        return repr(round(value, 6))
    return str(value).strip()


def extract_program_answer(value: Any) -> ExtractedAnswer:
    """Answer items from a PoT program's `ans` (the object, or its printed form)."""
    if isinstance(value, str):
        stripped = value.strip()
        try:
            parsed = ast.literal_eval(stripped) if stripped else None
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            parsed = None
        if isinstance(parsed, int | float | list | tuple) and not isinstance(parsed, bool):
            value = parsed
        else:
            items = split_items(stripped) if stripped else []
            return _answer(items, rule="program_output", is_parsed=bool(items))
    values = list(value) if isinstance(value, list | tuple | set) else [value]
    items = [item for item in (_render_value(v) for v in values if v is not None) if item]
    return _answer(items, rule="program_output", is_parsed=bool(items))


_TATLLM_FIELDS = (
    ("answer_type", ("answer type", "question type", "type")),
    ("evidence_table", ("table",)),
    ("evidence_text", ("text", "paragraph")),
    ("equation", ("equation", "formula", "calculation", "program")),
    ("scale", ("scale",)),
    ("answer", ("answer", "result")),
)
_TATLLM_POSITIONS = {
    5: ("answer_type", "evidence_table", "equation", "answer", "scale"),
    6: ("answer_type", "evidence_table", "evidence_text", "equation", "answer", "scale"),
}


def _field_for(label: str) -> str | None:
    label = strip_markdown(label).lower()
    for name, keywords in _TATLLM_FIELDS:
        if any(keyword in label for keyword in keywords):
            return name
    return None


def parse_tatllm_steps(text: str) -> TatLlmSteps:
    """Read TAT-LLM's `| step | output |` table (rows named or numbered 1–5/1–6) into its steps."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if all(re.fullmatch(r":?-{2,}:?|", cell) for cell in cells):
            continue
        if cells and cells[0].lower() in ("step", "steps", "#", "no."):
            continue
        rows.append(cells)
    values: dict[str, str] = {}
    unnamed: list[str] = []
    for cells in rows:
        output = cells[-1] if cells else ""
        labels = [cell for cell in cells[:-1] if not re.fullmatch(r"\d+\.?", cell)]
        name = _field_for(" ".join(labels)) if labels else None
        if name is None and len(cells) == 2 and not re.fullmatch(r"\d+\.?", cells[0]):
            name = _field_for(cells[0])
        if name is None:
            unnamed.append(output)
        elif name == "evidence_table" and "evidence_table" in values and "text" in " ".join(labels).lower():
            values["evidence_text"] = output
        else:
            values.setdefault(name, output)
    if not values and len(unnamed) in _TATLLM_POSITIONS:
        values = dict(zip(_TATLLM_POSITIONS[len(unnamed)], unnamed, strict=True))
    if rows and "answer" not in values:
        # Some outputs end the table early and give the answer as TAT-LLM's closing sentence.
        sentence = re.search(
            r"answer\s+is\s*[:：]?\s*(.+?)(?:\s*,?\s*and\s+the\s+scale\s+is\s*[:：]?\s*([\w%]+))?\s*\.?\s*$",
            text.strip(),
            re.IGNORECASE,
        )
        if sentence:
            values["answer"] = sentence.group(1).strip()
            if sentence.group(2) and "scale" not in values:
                values["scale"] = sentence.group(2)
    return TatLlmSteps(**{key: strip_markdown(value) for key, value in values.items()})


def _split_tatllm_answer(answer: str) -> list[str]:
    quoted = re.findall(r"\"([^\"]+)\"|'([^']+)'", answer)
    if len(quoted) > 1:
        return [_clean_item(a or b) for a, b in quoted]
    parts = answer.split("#") if "#" in answer else [answer]
    return [item for item in (_clean_item(part) for part in parts) if item]


EXTRACTION_MODES = ("default", "official")
_OFFICIAL_MARKERS = ("\nAnswer: \n", "\nAnswer:\n", "Answer: ", "Answer:")
_ANGLE = re.compile(r"<(.*?)>")


def answer_segment_items(text: str) -> list[str]:
    """SciTaT's scripts' answer items: the text after the first `Answer:` marker (up to a second one), code fences
    blanked, split at blank lines; none for an empty answer."""
    segment = text or ""
    for marker in _OFFICIAL_MARKERS:
        if marker in segment:
            segment = segment.split(marker)[1].strip()
            break
    for fence in ("```json\n", "```csv\n", "```\n", "```"):
        segment = segment.replace(fence, " ")
    segment = segment.strip()
    return segment.split("\n\n") if segment else []


def official_answer_items(text: str) -> list[str]:
    """SciTaT's CoT `process_output_to_answer`: `answer_segment_items`, an item holding `<…>` placeholders replaced
    by their contents joined with commas."""
    return [",".join(groups) if (groups := _ANGLE.findall(item)) else item for item in answer_segment_items(text)]


def extract_answer_official(text: str, *, method: str) -> ExtractedAnswer:
    """Answer items as SciTaT's released scripts take them (no markdown, list or sentence clean-up), for Direct QA
    and the Reason/Answer methods; other methods have no official rule and use `extract_answer`.

    Direct QA: the whole output split at blank lines. CoT/CaR: `official_answer_items`."""
    if method == "direct":
        stripped = (text or "").strip()
        return _answer(stripped.split("\n\n") if stripped else [], rule="official_direct", is_parsed=bool(stripped))
    if method not in ("cot", "car"):
        return extract_answer(text, method=method)
    items = official_answer_items(text)
    return _answer(items, rule="official_answer_marker", is_parsed=bool(items))


def extract_program_answer_official(value: Any, *, is_ok: bool) -> ExtractedAnswer:
    """A program's answer as SciTaT's scripts take it: `str(ans)` as one item (a list stays one string), and a failed
    program or an output mentioning an error becomes the single item "error"."""
    rendered = str(value) if is_ok else "error"
    if "error" in rendered.lower():
        rendered = "error"
    return _answer([rendered], rule="official_program", is_parsed=is_ok)
