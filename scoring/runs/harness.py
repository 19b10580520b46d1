"""A release in the evaluation harnesses researchers use (Inspect AI, lm-evaluation-harness), and their logs back.

The samples carry the prompt the project's own method would send, and one function scores a model's text for the
exported tasks' scorers and for a log's upload alike, so both give the same figures per question (pure: no Django)."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from curation.toolkit.extraction import extract_answer, extract_answer_official
from scoring.methods import MethodSettings, run_method, templates_for
from scoring.runs.results import item_metrics

# The methods a harness task asks with (single-turn prompts: the harness generates once) and the context settings.
HARNESS_METHODS = ("direct", "cot")
HARNESS_SETTINGS = ("short", "long")
BREAKDOWN_KEYS = ("reasoning_type", "answer_form", "answer_source", "split")
# A release's (item, short context, long context), frozen.
ReleaseRow = tuple[Mapping[str, Any], Mapping[str, Any] | None, Mapping[str, Any] | None]


class HarnessLogError(ValueError):
    """A log that is not an Inspect eval log of a TaT-Curate task."""


def prompt_of(method: str, question: str, context: Mapping[str, Any] | None, templates: Mapping[str, str]) -> str:
    """The message the project's `method` sends for this question and context: recorded from the method itself."""
    sent: list[str] = []

    def record(messages: list[dict[str, Any]], **_: Any) -> SimpleNamespace:
        sent.append(messages[-1]["content"])
        return SimpleNamespace(text="", tokens_in=0, tokens_out=0, latency_s=0.0, attempts=[])

    run_method(method, question=question, context=context, chat=record, run_program=None,  # type: ignore[arg-type]
               settings=MethodSettings(templates=templates))  # fmt: skip
    return sent[0]


def inspect_samples(rows: Iterable[ReleaseRow], *, method: str, setting: str) -> Iterator[dict[str, Any]]:
    """Inspect samples (id, input, target, metadata) of a release's (item, short, long) rows in one method and
    context setting: `short` asks on the question's own context (the whole paper when it has none), `long` on the
    whole paper. The metadata carries the frozen item (what the scorer scores against) and the breakdowns."""
    templates = templates_for(method)
    for item, short, long in rows:
        context = (short or long) if setting == "short" else (long or short)
        yield {
            "id": item["uid"],
            "input": prompt_of(method, item.get("question", ""), context, templates),
            "target": [str(answer) for answer in item.get("answer") or []],
            "metadata": {
                "method": method,
                "setting": setting,
                **{key: item.get(key) or "" for key in BREAKDOWN_KEYS},
                "item": dict(item),
            },
        }


# One lm-evaluation-harness task per context setting and method; the samples come from the shared data files.
LM_EVAL_TASK = """task: tatcurate_{setting}_{method}
custom_dataset: !function utils.load_samples
dataset_kwargs:
  setting: {setting}
  method: {method}
test_split: test
output_type: generate_until
doc_to_text: "{{{{input}}}}"
doc_to_target: "{{{{target}}}}"
process_results: !function utils.process_results
generation_kwargs:
  until: []
  do_sample: false
  max_gen_toks: 512
metric_list:
  - metric: em
    aggregation: !function utils.applicable_mean
    higher_is_better: true
  - metric: f1
    aggregation: !function utils.applicable_mean
    higher_is_better: true
  - metric: correct
    aggregation: mean
    higher_is_better: true
metadata:
  version: 1.0
"""


def write_harness_zip(out: Any, rows: Callable[[], Iterable[ReleaseRow]], *, readme: str) -> dict[str, int]:
    """A release as tasks of the harnesses, in a zip at `out`: one JSON lines file of samples per context setting and
    method (`rows()` is read once for each), the Inspect AI task module (scoring/inspect_task.py as it is), the
    lm-evaluation-harness task configs with their functions (scoring/lm_eval_utils.py as it is), and `readme`;
    returns the samples written per file."""
    counts: dict[str, int] = {}
    shipped = Path(__file__).parents[1]
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.write(shipped / "inspect_task.py", "tatcurate_task.py")
        bundle.write(shipped / "lm_eval_utils.py", "lm_eval/utils.py")
        for setting in HARNESS_SETTINGS:
            for method in HARNESS_METHODS:
                name = f"data/{setting}-{method}.jsonl"
                counts[name] = 0
                with bundle.open(name, "w") as entry, io.TextIOWrapper(entry, encoding="utf-8") as text:
                    for sample in inspect_samples(rows(), method=method, setting=setting):
                        text.write(json.dumps(sample, ensure_ascii=False) + "\n")
                        counts[name] += 1
                task = LM_EVAL_TASK.format(setting=setting, method=method)
                bundle.writestr(f"lm_eval/tatcurate_{setting}_{method}.yaml", task)
        bundle.writestr("README.md", readme)
    return counts


def score_completion(item: Mapping[str, Any], completion: str, *, method: str) -> dict[str, Any]:
    """The project's figures for a model's text on one item: the method's answer extraction, then the metrics of
    a scoring run (scoring.runs.results.item_metrics), with the extracted answer and scale beside them."""
    found = answer_of(completion, method=method)
    return {**found, **item_metrics(item, answer=found["answer"], scale=found["scale"])}


def answer_of(completion: str, *, method: str, extraction: str = "default") -> dict[str, Any]:
    """{answer: items, scale} of a model's text, read as the project's `method` reads its outputs (`extraction`
    official: as SciTaT's scripts read them)."""
    reader = extract_answer_official if extraction == "official" else extract_answer
    extracted = reader(completion or "", method=method)
    return {"answer": [str(a) for a in extracted.items], "scale": extracted.scale or ""}


def log_completions(content: bytes, *, harness: str) -> dict[str, dict[str, Any]]:
    """uid → {raw_output, method, setting} of a harness's log of the exported tasks: Inspect's eval log (`.eval`, a
    zip of samples, or `.json`) or lm-evaluation-harness's samples file (JSON lines, `--log_samples`); the first
    epoch or response of each sample. HarnessLogError names what is missing."""
    found: dict[str, dict[str, Any]] = {}
    for uid, text, metadata in (_inspect_samples if harness == "inspect" else _lm_eval_samples)(content):
        if metadata.get("method") not in HARNESS_METHODS:
            raise HarnessLogError(f"sample {uid!r} has no TaT-Curate method in its metadata")
        found.setdefault(str(uid), {"raw_output": text, "method": metadata["method"],
                                    "setting": metadata.get("setting") or "short"})  # fmt: skip
    if not found:
        raise HarnessLogError("the log holds no samples")
    return found


def _inspect_samples(content: bytes) -> Iterator[tuple[Any, str, Mapping[str, Any]]]:
    if content[:2] == b"PK":
        import zipfile_zstd  # noqa: F401  (Zstandard in zipfile: Inspect compresses its .eval members with it)

        try:
            with zipfile.ZipFile(io.BytesIO(content)) as bundle:
                names = [n for n in bundle.namelist() if n.startswith("samples/") and n.endswith(".json")]
                samples = [json.loads(bundle.read(name)) for name in sorted(names)]
        except (zipfile.BadZipFile, ValueError) as error:
            raise HarnessLogError(f"not a readable .eval log: {error}") from error
    else:
        try:
            samples = json.loads(content).get("samples") or []
        except (ValueError, AttributeError) as error:
            raise HarnessLogError("not an Inspect JSON log (an object with `samples`)") from error
    for sample in sorted(samples, key=lambda s: int(s.get("epoch") or 1)):
        yield sample.get("id"), _completion(sample.get("output") or {}), sample.get("metadata") or {}


def _lm_eval_samples(content: bytes) -> Iterator[tuple[Any, str, Mapping[str, Any]]]:
    for number, line in enumerate(content.decode("utf-8", errors="replace").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            doc, responses = record["doc"], record.get("filtered_resps") or record["resps"]
        except (ValueError, KeyError, TypeError) as error:
            raise HarnessLogError(f"line {number} is not an lm-evaluation-harness sample ({error})") from error
        while isinstance(responses, list):  # resps are [[text]], filtered_resps [text]
            responses = responses[0] if responses else ""
        yield doc.get("id"), str(responses), doc


def _completion(output: Mapping[str, Any]) -> str:
    if output.get("completion") is not None:
        return str(output["completion"])
    choices = output.get("choices") or [{}]
    content = (choices[0].get("message") or {}).get("content") or ""
    return content if isinstance(content, str) else "".join(part.get("text", "") for part in content)
