"""One context into draft fields: an LLM run's two prompts (question, then rationale and answer) or a template
run's questions; and the plain data a prompt shows of a context. Knows nothing of claims or workers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from curation.drafting import duplicates, prompts
from curation.drafting.models import DraftingRun, PromptTemplate
from curation.drafting.templates import TEMPLATE_SUBTYPES, asked_keys, draft_template_questions
from curation.endpoints.config import GENERATION_PARAM_NAMES
from curation.endpoints.errors import EndpointConfigError, EndpointError
from curation.models import Context, Instance, ReasoningType, Table
from curation.states import Status
from curation.table_shape import shape_from_row


@dataclass
class Outcome:
    """What drafting one context gave: the drafts' fields, the raw model output, and a note for the item."""

    drafts: list[dict[str, Any]]
    raw_output: dict[str, Any]
    note: str = ""


class Drafter:
    """Turns one context into draft fields, for an LLM run (one client per chunk) or a template run."""

    def __init__(self, run: DraftingRun) -> None:
        self.run = run
        self.client = None
        self.beat: Callable[[], object] = lambda: None
        self.header_cache: dict[str, list[str]] = {}
        self.types = {rt.code: rt for rt in ReasoningType.objects.filter(project_id=run.project_id)}
        self.params = {k: v for k, v in run.generation_params.items() if k in GENERATION_PARAM_NAMES}

    def _client(self) -> Any:
        # Built on first use, so a broken endpoint fails the item (with its message), not the whole task.
        # client_for shares one client per endpoint and process: never close it here.
        if self.client is None:
            from curation.endpoints.django_client import client_for

            if self.run.endpoint is None:
                raise EndpointConfigError("the run's endpoint has been deleted")
            self.client = client_for(self.run.endpoint)
        return self.client

    def draft(self, context: Context) -> Outcome:
        if self.run.kind == DraftingRun.Kind.LLM:
            return self._draft_llm(context)
        return self._draft_templates(context)

    def _provenance(self, item_context: Context) -> dict[str, Any]:
        return {"drafter": self.run.kind, "run": self.run.pk, "context": item_context.pk}

    def _draft_llm(self, context: Context) -> Outcome:
        client = self._client()
        run = self.run
        data = context_data(context)
        max_chars = int(run.options.get("max_context_chars") or 8000)
        raw: dict[str, Any] = {}
        answer_result = None
        parsed_answer = prompts.ParsedAnswer(rationale="", answer=[])  # no answer asked for: no answer problem
        try:
            question_messages = prompts.question_messages(run.question_template.text, data, max_chars=max_chars)
            question_result = client.chat(question_messages, **self.params)
            raw["question"] = question_result.text
            self.beat()
            parsed_question = prompts.parse_question(question_result.text)
            if parsed_question.is_parsed:
                question = parsed_question.question
                # A repeat of a prompt example or of a question asked of the paper is rejected before its answer is
                # asked for: recorded on the item with the reason, never queued.
                examples = duplicates.example_questions(run.question_template.text)
                rejected = PaperAsked.read(run, context).repeat(question, examples=examples)
                if rejected is not None:
                    note = f"rejected: {rejected['reason']}"
                    return Outcome(drafts=[], raw_output={**raw, "rejected": [rejected]}, note=note)
                answer_messages = prompts.answer_messages(run.answer_template.text, data, question, max_chars=max_chars)
                answer_result = client.chat(answer_messages, **self.params)
                raw["rationale_answer"] = answer_result.text
                parsed_answer = prompts.parse_rationale_answer(answer_result.text)
        except EndpointError as error:
            error.raw_output = raw  # type: ignore[attr-defined]
            raise
        parses = (("question", parsed_question), ("answer", parsed_answer))
        parse_error = "; ".join(f"{what}: {parsed.error}" for what, parsed in parses if not parsed.is_parsed)
        results = [r for r in (question_result, answer_result) if r is not None]
        texts = {
            "question": parsed_question.question,
            "rationale": parsed_answer.rationale,
            "answer": parsed_answer.answer,
        }
        draft = {
            **self._provenance(context),
            "endpoint": run.endpoint_snapshot,
            "model": str(question_result.raw.get("model") or run.endpoint_snapshot.get("model", "")),
            "template_hashes": run.template_hashes,
            "params": question_result.request_params,
            "raw": raw,
            **texts,
            "parse": {
                "question_rule": parsed_question.rule,
                "answer_rule": parsed_answer.rule,
                "extra_questions": parsed_question.extra_questions,
            },
            "usage": [r.usage for r in results],
            "attempts": sum(len(r.attempts) for r in results),
            "is_cached": [r.is_cached for r in results],
            **({"parse_error": parse_error} if parse_error else {}),
        }
        fields = {
            "reasoning_type": context.reasoning_type,
            **texts,
            "relevant_tables": list(context.tables.all()),
            "draft": draft,
        }
        note = f"parse problem, flagged for the annotator: {parse_error}" if parse_error else ""
        return Outcome(drafts=[fields], raw_output=raw, note=note)

    def _header_phrases(self, header: str) -> list[str]:
        """Paraphrases of one header name by the run's endpoint and header prompt version (asked once per run)."""
        if header not in self.header_cache:
            version = {"kind": "header_paraphrase", "content_hash": self.run.template_hashes["header_paraphrase"]}
            template = PromptTemplate.objects.filter(project_id=self.run.project_id, **version).order_by("-pk").first()
            if template is None:
                raise EndpointConfigError("The run's header paraphrase prompt version no longer exists.")
            result = self._client().chat(prompts.header_messages(template.text, header), **self.params)
            self.beat()
            self.header_cache[header] = prompts.parse_header_phrases(result.text, header)
        return self.header_cache[header]

    def _draft_templates(self, context: Context) -> Outcome:
        run = self.run
        assigned = context_subtypes(context)
        if assigned and not set(assigned) & TEMPLATE_SUBTYPES:
            # No template exercises this type: drafting other types in its place would hide it from the release.
            name = context.reasoning_type.name
            note = f"not drafted: no template drafts {name}; draft it with a language-model run"
            return Outcome(drafts=[], raw_output={"templates": 0, "routed": context.reasoning_type.code}, note=note)
        by_label: dict[str, Table] = {}
        table_dicts = []
        for position, table in enumerate(context.tables.all().order_by("paper_id", "order")):
            label = shape_from_row(table).display_label(position)  # as scoring's tool box labels it
            if label in by_label:
                label = f"{label} ({position + 1})"
            by_label[label] = table
            # Detected as headerless: its first row is data, so no column has a name to ask about.
            table_dicts.append({**table_input(table, label, position), "has_header": table.header_rows != 0})
        options = run.options
        rejected: list[dict[str, Any]] = []
        idle: list[str] = []
        results = draft_template_questions(
            table_dicts,
            seed=int(options.get("seed") or 0),
            per_template=int(options.get("per_template") or 1),
            include_unanswerable=options.get("unanswerable") == "keep",
            template_ids=options.get("template_ids") or None,
            subtypes=assigned,
            header_phrases=self._header_phrases if options.get("paraphrase_headers") else None,
            rejected=rejected,
            asked=PaperAsked.read(run, context).keys,
            idle=idle,
        )
        paraphrased = (
            {"header_paraphrase": run.template_hashes["header_paraphrase"], "endpoint": run.endpoint_snapshot}
            if options.get("paraphrase_headers")
            else {}
        )
        drafts = []
        for result in results:
            texts = {key: result[key] for key in ("question", "rationale", "answer")}
            draft = {
                **self._provenance(context),
                **{key: result[key] for key in ("template_id", "phrasing_index", "reasoning_subtype", "slots")},
                "is_answerable": result["is_answerable"],
                "split": "answerable" if result["is_answerable"] else "unanswerable",
                "seed": options.get("seed", 0),
                **paraphrased,
                **texts,
            }
            drafts.append(
                {
                    "reasoning_type": self.types.get(result["reasoning_subtype"]) or context.reasoning_type,
                    **texts,
                    **{key: result[key] for key in ("answer_form", "answer_source", "essential_actions")},
                    "is_answerable": result["is_answerable"],
                    "unanswerable_reason": ""
                    if result["is_answerable"]
                    else "A cell the question needs is empty or not a number in the table (template drafter).",
                    "relevant_tables": [by_label[label] for label in result["relevant_tables"] if label in by_label],
                    "draft": draft,
                }
            )
        note = "" if drafts else "no question template fits this context's tables"
        if idle and drafts:  # which of the templates tried drafted nothing here, so none is skipped unseen
            note = f"nothing fits {', '.join(idle)} (or all they fit is asked already)"
        if rejected:
            # A draft whose answer its own program does not reproduce never reaches an annotator; the run says so.
            reasons = "; ".join(dict.fromkeys(f"{item['template_id']}: {item['reason']}" for item in rejected))
            note = f"{note + '. ' if note else ''}{len(rejected)} dropped by their self-check ({reasons})"[:1000]
        raw = {"templates": len(drafts), "rejected": rejected, "idle": idle}
        return Outcome(drafts=drafts, raw_output=raw, note=note)


@dataclass
class PaperAsked:
    """What a paper has been asked (its questions of any status but discarded), as the repeat check of a run's kind
    reads it: the questions for an LLM run, their `asked_keys` for a template run. Read before drafting, and again
    when the drafts are committed (`repeats_dropped`), since another chunk may draft the same paper at once."""

    kind: str
    questions: list[str]
    keys: set[str]

    @classmethod
    def read(cls, run: DraftingRun, context: Context) -> PaperAsked:
        asked = Instance.objects.filter(project_id=run.project_id, context__paper_id=context.paper_id).exclude(
            status=Status.DISCARDED
        )
        if run.kind == DraftingRun.Kind.LLM:
            return cls(kind=run.kind, questions=list(asked.values_list("question", flat=True)), keys=set())
        # Only the keys the repeat check reads, not every draft's whole record (an LLM draft's holds its raw output).
        rows = asked.values_list("question", "draft__template_id", "draft__slots")
        keys = set().union(*(asked_keys(question, template or "", slots) for question, template, slots in rows))
        return cls(kind=run.kind, questions=[], keys=keys)

    def repeat(
        self, question: str, *, template_id: str = "", slots: dict[str, Any] | None = None, examples: Sequence[str] = ()
    ) -> dict[str, Any] | None:
        """The rejection record of `question` when it repeats a prompt example or what the paper was asked, else None
        (and it counts as asked from now on). An LLM question by `duplicates.duplicate_of`, exactly or nearly; a
        template question only by its `asked_keys` (as `draft_template_questions` skips a candidate): two template
        questions differ only in their slots, which the near-duplicate measure would call a repeat."""
        if self.kind == DraftingRun.Kind.LLM:
            duplicate = duplicates.duplicate_of(question, examples=examples, existing=self.questions)
            if duplicate is not None:
                rejected = {"question": question, "reason": duplicate.reason, **asdict(duplicate)}
                return {**rejected, "similarity": round(duplicate.similarity, 4)}
            self.questions.append(question)
            return None
        keys = asked_keys(question, template_id, slots)
        if keys & self.keys:
            return {"template_id": template_id, "question": question, "reason": REPEATED_MEANWHILE}
        self.keys |= keys
        return None


REPEATED_MEANWHILE = "repeats a question asked of the paper while it was drafted (by another chunk or run)"


def repeats_dropped(run: DraftingRun, context: Context, outcome: Outcome) -> Outcome:
    """`outcome` without the drafts that repeat what the context's paper has been asked by now, by the rule they were
    drafted with (`PaperAsked.repeat`); each dropped draft joins raw_output["rejected"] with its reason, and the note
    says so. Called at commit under the paper's lock (items._item_commit), so two chunks drafting one paper at once
    never both commit a question."""
    if not outcome.drafts:
        return outcome
    asked = PaperAsked.read(run, context)
    kept, rejected = [], []
    for fields in outcome.drafts:
        draft = fields.get("draft") or {}
        repeat = asked.repeat(
            fields.get("question", ""), template_id=draft.get("template_id") or "", slots=draft.get("slots")
        )
        if repeat is None:
            kept.append(fields)
        else:
            rejected.append(repeat)
    if not rejected:
        return outcome
    reasons = "; ".join(dict.fromkeys(item["reason"] for item in rejected))
    dropped = (
        f"rejected at commit: {reasons}"
        if run.kind == DraftingRun.Kind.LLM and len(rejected) == 1
        else f"{len(rejected)} dropped at commit ({reasons})"
    )
    note = f"{outcome.note + '. ' if outcome.note else ''}{dropped}"[:1000]
    raw = {**outcome.raw_output, "rejected": [*(outcome.raw_output.get("rejected") or []), *rejected]}
    return Outcome(drafts=kept, raw_output=raw, note=note)


def context_subtypes(context: Context) -> list[str]:
    """The reasoning subtype codes a context's assigned type stands for (a type stands for its subtypes)."""
    reasoning_type = context.reasoning_type
    if reasoning_type is None:
        return []
    return [reasoning_type.code, *reasoning_type.subtypes.order_by("order").values_list("code", flat=True)]


def table_input(table: Table, label: str, position: int = 0) -> dict[str, Any]:
    """A stored table as the tool box reads it (as scoring's): the flattened header row over the body rows, under
    what the paper calls it ("Table 2", placed by its order, else by `position`)."""
    return shape_from_row(table).tool_input(label, table.order if table.order is not None else position)


def context_data(context: Context) -> prompts.ContextData:
    """The plain data a drafting prompt shows of a context: its paragraph and its tables (runs draft short contexts
    only, run_create)."""
    reasoning_type = context.reasoning_type
    parent = reasoning_type.parent if reasoning_type is not None and reasoning_type.parent_id else None
    return prompts.ContextData(
        tables=[shape_from_row(t) for t in context.tables.all().order_by("paper_id", "order")],
        paragraphs=[context.paragraph.text] if context.paragraph_id else [],
        reasoning_type=reasoning_type.name if reasoning_type else "",
        reasoning_type_code=reasoning_type.code if reasoning_type else "",
        reasoning_description=reasoning_type.description if reasoning_type else "",
        parent_code=parent.code if parent else "",
    )
