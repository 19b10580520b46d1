"""Drafting prompts (pure, no Django): default templates, rendering a context, and parsing small-model output."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from curation.table_shape import TableShape
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

Examples of questions of this type, each under its own short context (not the context you are given):
{{examples}}

Context:
{{context}}

Write the question on one line, starting with "Question:".

=== examples: table_lookup ===
Table 3 (tab:speed): Inference speed. | Model | Tokens/s | / | Distil-6 | 1,850 | / | Teacher-12 | 920 |
Table 4 (tab:abl): Ablations. | Variant | F1 | / | full | 71.2 | / | - copy | 66.0 |
Question: Which table reports the inference speed of the distilled models?

Table 2 (tab:abl): Ablation study. | Variant | ROUGE-L | / | full | 40.1 | / | w/o copy | 37.2 |
Paragraph: Removing the copy mechanism costs about three points.
Question: In which table can we find the ablation without the copy mechanism?

Table 5 (tab:hp): Fine-tuning settings. | Task | LR | Epochs | / | SQuAD | 3e-5 | 2 | / | MNLI | 2e-5 | 3 |
Table 6 (tab:res): Results. | Task | Score | / | SQuAD | 88.5 | / | MNLI | 86.1 |
Question: Which table lists the hyper-parameters used for fine-tuning on SQuAD?
=== end ===

=== examples: span_lookup ===
Table 1: Encoder settings. | Setting | Encoder | Acc | / | A | frozen | 78.4 | / | B | tuned | 82.0 |
Paragraph: Setting A is trained with SGD, setting B with Adam.
Question: Which optimizer is used when the encoder is frozen?

Table 2: Baseline results. | Dataset | F1 | / | D1 | 71.2 | / | D2 | 64.5 |
Paragraph: D1 is NewsQA and D2 is HotpotQA.
Question: What is the name of the dataset on which the baseline scores 71.2 F1?

Table 4: Summarisation results. | System | Score | / | Ours | 41.3 | / | PGN | 39.5 |
Paragraph: For summarisation we report ROUGE-L; for translation, BLEU.
Question: Which metric do the authors report for the summarisation experiments?
=== end ===

=== examples: arithmetic_calculation ===
Table 2: WMT14 En-De. | Model | BLEU | / | Transformer | 27.3 | / | Transformer + BT | 28.9 |
Paragraph: BT denotes back-translation of 4.5M monolingual sentences.
Question: By how many BLEU points does back-translation improve the plain transformer on WMT14 En-De?

Table 1: Model sizes. | Model | Layers | Hidden | / | base | 12 | 768 | / | large | 24 | 1024 |
Paragraph: The base model has 110M parameters and the large model 340M.
Question: What is the ratio of the parameter count of the large model to that of the base model?

Table 3: Accuracy by training data. | Setting | Acc | / | full | 84.0 | / | low | 71.4 |
Paragraph: The full setting uses 10k training examples, the low setting 1k.
Question: What is the percentage change in accuracy when the training set shrinks from 10k to 1k examples?
=== end ===

=== examples: comparison ===
Table 2: Test set. | Objective | P | R | / | MLM | 80.1 | 76.5 | / | RTD | 79.4 | 78.2 |
Paragraph: RTD is the replaced-token-detection objective; MLM masks 15% of tokens.
Question: Which of the two pre-training objectives gives higher recall on the test set?

Table 3: GLUE dev. | Model | MNLI | / | Ours | 90.4 | / | M2 | 90.2 |
Paragraph: M2 is RoBERTa-large trained with the same budget.
Question: Is the F1 of the proposed method on MNLI above or below that of RoBERTa-large?

Table 4: Decoding. | Strategy | PPL | / | D1 | 12.8 | / | D2 | 15.1 |
Paragraph: D1 is beam search with width 5 and D2 is nucleus sampling.
Question: Between beam search and sampling, which decoding strategy has the lower perplexity?
=== end ===

=== examples: aggregation ===
Table 2: EM. | Dataset | Ours | / | SQuAD | 85.1 | / | NQ | 44.0 | / | TQA | 63.2 | / | HQA | 58.7 | / | Bio | 49.5 |
Paragraph: Ours is the retrieval-augmented reader described in Section 3.
Question: What is the average exact-match score of the proposed model over the five datasets?

Table 1: Corpus sizes. | Language | Train | Test | / | de | 12,000 | 900 | / | fr | 9,500 | 900 | / | sw | 2,100 | 500 |
Paragraph: The training splits are used for all three languages.
Question: What is the total number of training examples across all three languages?

Table 5: Latency (ms). | Model | Latency | / | M1 | 21 | / | M2 | 14 | / | M3 | 12 |
Paragraph: M2 and M3 use 8-bit quantisation; M1 runs in full precision.
Question: What is the mean latency of the models that use quantisation?
=== end ===

=== examples: ranking ===
Table 3: Summarisation. | System | ROUGE-L | / | S1 | 38.2 | / | S2 | 40.9 | / | S3 | 39.7 |
Paragraph: S3 is the method proposed in this paper.
Question: Where does the proposed method rank among all systems by ROUGE-L?

Table 2: Acc. | Model | easy | hard | / | A | 91 | 60.2 | / | B | 89 | 64.8 | / | C | 90 | 58.9 | / | D | 88 | 61.7 |
Paragraph: The hard split holds the questions that need two or more hops.
Question: Which three models have the highest accuracy on the hard split?

Table 4: Tokeniser throughput. | Tokeniser | Time (s) | / | BPE | 4.1 | / | WordPiece | 3.6 | / | Unigram | 5.0 |
Paragraph: Time is the wall-clock time to tokenise the 1GB corpus; lower is faster.
Question: Order the tokenisers from fastest to slowest.
=== end ===

=== examples: counting ===
Table 3: Out-of-domain F1. | Model | F1 | / | B1 | 61.0 | / | B2 | 58.3 | / | B3 | 63.4 | / | Ours | 60.2 |
Paragraph: B1-B3 are the baselines of Section 4.
Question: How many baselines outperform the proposed model on the out-of-domain set?

Table 2: Augmentation. | Dataset | base | +aug | / | D1 | 70.1 | 73.0 | / | D2 | 65.4 | 66.1 | / | D3 | 80.2 | 82.9 |
Paragraph: +aug adds back-translated copies of every training sentence.
Question: How many datasets show an improvement of more than 2 points with data augmentation?

Table 1: Languages. | Language | Sentences | / | de | 40k | / | sw | 8k | / | yo | 6k | / | fr | 35k |
Paragraph: All four languages are evaluated on the same test protocol.
Question: How many of the evaluated languages have fewer than 10k training sentences?
=== end ===

=== examples: domain_knowledge_calculation ===
Table 4: Entity tagger. | Metric | Value | / | Precision | 82.0 | / | Recall | 78.0 |
Paragraph: The tagger is a CRF over contextual embeddings.
Question: Using the precision and recall reported for the entity tagger, what is its F1 score?

Table 1: Pre-training. | Model | FLOPs/token | / | base | 6.6e8 |
Paragraph: The base model is pre-trained on 3.3B tokens.
Question: Given the reported FLOPs per token and the number of tokens, how many FLOPs did pre-training take?

Table 3: Test accuracy. | Classifier | Acc (%) | / | SVM | 91.2 | / | CNN | 94.6 |
Paragraph: Both classifiers use the same features.
Question: What is the error rate of the best classifier, given its accuracy on the test set?
=== end ===

=== examples: descriptive_analysis ===
Table 2: Retrieval depth. | Passages | Acc | / | 1 | 52.0 | / | 5 | 58.3 | / | 20 | 59.1 |
Paragraph: More passages add evidence but also distractors.
Question: How does accuracy change as more passages are retrieved, and what explanation does the paragraph give?

Table 3: Model size. | Size | QA | NLI | / | 125M | 60.1 | 78.0 | / | 350M | 64.2 | 80.4 | / | 1.3B | 66.0 | 79.9 |
Paragraph: Larger models help most on tasks that need world knowledge.
Question: What trend do the results show across model sizes, and is it consistent for every task?

Table 4: Pre-training data. | Corpus | BioNER F1 | / | Wiki | 84.2 | / | PubMed | 87.9 |
Paragraph: PubMed is in-domain for the biomedical tasks.
Question: What do the results suggest about the benefit of pre-training on in-domain text?
=== end ===

=== examples: anomaly_detection ===
Table 2: Results. | Dataset | Base | Ours | / | D1 | 70.2 | 73.5 | / | D2 | 68.0 | 71.9 | / | D3 | 75.4 | 74.1 |
Paragraph: D3 has very short inputs, where the extra context our method uses is rarely available.
Question: Which result does not follow the general trend in the table, and what reason does the text give for it?

Table 3: Per-dataset accuracy. | Dataset | Baseline | Ours | / | News | 81.0 | 84.2 | / | Tweets | 77.5 | 75.9 |
Paragraph: Tweets are full of misspellings that our tokeniser splits into many pieces.
Question: On which dataset does the proposed method fall behind the baseline, and why might that be?

Table 4: Recall by window size. | Window | Recall | / | 64 | 70.1 | / | 128 | 72.4 | / | 256 | 65.0 | / | 512 | 74.2 |
Paragraph: Window 256 was trained with half the batch size because of memory limits.
Question: Which configuration shows an unexpected drop in recall compared with its neighbours?
=== end ===

=== examples: causal_analysis ===
Table 3: Ablation by length. | Variant | short | long | / | full | 80.2 | 74.5 | / | - attention | 79.0 | 61.3 |
Paragraph: Without attention the decoder must compress the whole input into one vector.
Question: Why does removing the attention layer hurt long documents more than short ones?

Table 2: Zero-shot vs fine-tuned. | Setting | Acc | / | zero-shot | 55.4 | / | fine-tuned | 81.7 |
Paragraph: The authors attribute the gap to the unusual label vocabulary of the task.
Question: What causes the gap between the zero-shot and the fine-tuned results, according to the authors?

Table 4: Steps to converge. | Schedule | Steps | / | random | 40k | / | curriculum | 22k |
Paragraph: The curriculum shows short, frequent examples first.
Question: Why does the model trained with curriculum learning converge faster?
=== end ===

=== examples: tabulation ===
Table 1: Main results. | Model | Acc | / | M1 | 81.2 | / | M2 | 84.0 |
Paragraph: M1 has 110M parameters and M2 has 340M.
Question: Build a table with the model names as rows and their accuracy and parameter count as columns.

Table 2: Data splits. | Dataset | Train | Dev | Test | / | D1 | 8,000 | 1,000 | 1,000 | / | D2 | 5,500 | 700 | 700 |
Question: List each dataset with its number of training, validation and test examples, in a table.

Table 3: F1 on the test sets. | System | T1 | T2 | / | A | 70.1 | 65.2 | / | B | 72.3 | 66.0 | / | C | 69.8 | 67.4 |
Question: Put the F1 scores of the three systems on the two test sets into a two-row table.
=== end ===

=== examples: default ===
Table 2: Main results. | Setting | Score | / | S1 | 71.0 | / | S2 | 74.8 | / | S3 | 73.1 |
Paragraph: S2 adds the auxiliary loss described in Section 3.
Question: Which setting gives the best score, and by how much does it beat the second best?

Table 1: Main results. | Model | F1 | / | A | 88.2 | / | B | 86.9 | / | C | 80.4 |
Paragraph: A and B are our two variants; C is the published baseline.
Question: What is the difference between the two highest values in the main results table?

Table 3: Comparison with baselines. | Method | Acc | / | B1 | 79.0 | / | B2 | 82.5 | / | Ours | 84.1 |
Paragraph: B2 is the strongest published baseline.
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


def _answer_items(items: Sequence[str]) -> list[str]:
    """Answer items, one per line when the model wrote them one per line ("S2\\nS3" is two items)."""
    lines = [_LIST_MARK.sub("", line).strip() for item in items for line in str(item).splitlines()]
    return [line for line in lines if line]


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
        line = re.sub(r"^\s*(?:\d{1,2}[.)]|[-*•])\s*", "", line)
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


DEFAULT_TEMPLATES: dict[str, tuple[str, str]] = {
    "question": (QUESTION_TEMPLATE_NAME, DEFAULT_QUESTION_TEMPLATE),
    "rationale_answer": (ANSWER_TEMPLATE_NAME, DEFAULT_ANSWER_TEMPLATE),
    "header_paraphrase": (HEADER_TEMPLATE_NAME, DEFAULT_HEADER_TEMPLATE),
}

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
