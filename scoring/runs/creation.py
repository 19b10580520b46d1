"""Creating a scoring run: validate the settings, hash the configuration, cut the release into chunks."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from curation.endpoints.config import GENERATION_PARAM_NAMES
from curation.endpoints.models import ModelEndpoint
from curation.errors import InvalidInput
from curation.releases.models import Release, ReleaseItem
from curation.releases.services.cut import UNANSWERABLE_SPLIT, canonical_json
from curation.toolkit.extraction import EXTRACTION_MODES
from scoring.methods import METHODS, templates_for, templates_hash
from scoring.methods.base import MIN_TURNS
from scoring.methods.templates import DEFAULT_TEMPLATES, templates_offering_abstention
from scoring.methods.toolloop import MAX_TURNS_LIMIT, turn_cap
from scoring.metrics.tatqa import SCALE_MODES
from scoring.runs.models import RunChunk, ScoringRun
from scoring.runs.permissions import runner_require
from scoring.runs.progress import BERTSCORE_MODELS, paper_bertscore_unavailable

DEFAULT_CHUNK_SIZE = 8


def per_template_positions(release: Release, *, per_template: int, seed: int = 0) -> list[int]:
    """The meta paper's sample of a release: `per_template` answerable questions of each question template (the
    template drafter's `template_id`; questions without one form one group), drawn at random with `seed`, each
    template from its own seeded generator so adding a template does not change the others' draws."""
    groups: dict[str, list[int]] = {}
    rows = ReleaseItem.objects.filter(release=release).exclude(split=UNANSWERABLE_SPLIT)
    for position, template in rows.values_list("position", "instance__draft__template_id").order_by("position"):
        groups.setdefault(str(template or ""), []).append(position)
    chosen: list[int] = []
    for template, positions in sorted(groups.items()):
        generator = random.Random(f"{seed}:{template}")
        chosen += generator.sample(positions, min(per_template, len(positions)))
    return sorted(chosen)


def _chunk_ranges(positions: list[int], chunk_size: int) -> list[tuple[int, int]]:
    """(first, last) position ranges of at most `chunk_size` items that hold only `positions` (a sample's gaps are
    never inside a chunk, since a chunk scores every release item of its range)."""
    ranges: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(positions) + 1):
        if i == len(positions) or i - start == chunk_size or positions[i] != positions[i - 1] + 1:
            ranges.append((positions[start], positions[i - 1]))
            start = i
    return ranges


TOOL_OPTIONS = {"all": "all tools", "data": "data tools only"}  # the tool loop's tool sets, as the forms name them
FEW_SHOTS = (0, 1, 3)


def canonical_hash(value: Any) -> str:
    """sha256 of the one canonical JSON (a release's content hash serialises the same way)."""
    return hashlib.sha256(canonical_json(value).encode()).hexdigest()


def _turn_cap(release: Release, method: str, max_turns: int | None) -> dict[str, Any]:
    """The tool loop's turn cap as recorded on the run: given, or derived from the release's longest program."""
    if max_turns is not None:
        return {"max_turns": max_turns, "max_turns_from": "set"}
    if method != ScoringRun.Method.TOOL:
        return {"max_turns": MIN_TURNS, "max_turns_from": "default"}
    programs = ReleaseItem.objects.filter(release=release).values_list("data__essential_actions", flat=True)
    cap, longest = turn_cap(actions for actions in programs if isinstance(actions, list))
    return {"max_turns": cap, "max_turns_from": "longest_program", "longest_program": longest}


def run_create(
    *,
    release: Release,
    actor: AbstractBaseUser | None,
    method: str,
    setting: str = "short",
    endpoint: ModelEndpoint | None = None,
    label: str = "",
    templates: dict[str, str] | None = None,
    generation_params: dict[str, Any] | None = None,
    few_shot: int = 0,
    tools: str = "all",
    max_turns: int | None = None,
    scale_mode: str = "predicted",
    extraction: str = "default",
    bertscore: str = "minilm",
    abstention: bool | None = None,
    json_schema: bool = True,
    use_cache: bool = True,
    limit: int | None = None,
    per_template: int | None = None,
    sample_seed: int = 0,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    uploaded: dict[str, Any] | None = None,
    upload_name: str = "",
    upload_format: str = "",
    reported_method: str = "",
    judge: ModelEndpoint | None = None,
) -> ScoringRun:
    """Create a queued run with its chunks (managers and verifiers; `actor=None` is an operator command).

    Every mode is recorded in `options` (and so in the config hash): the tool loop's turn cap (derived from the
    release's longest essential-action program when not given), the scale mode, the answer extraction and the
    BERTScore model."""
    project = release.project
    runner_require(actor, project, "score models")
    if method not in ScoringRun.Method.values:
        raise InvalidInput(f"Unknown method {method!r}; expected one of {', '.join(ScoringRun.Method.values)}.")
    if (method == "upload") != (uploaded is not None):
        raise InvalidInput("Uploaded predictions go with the 'upload' method, and only with it.")
    if reported_method and (method != "upload" or reported_method not in METHODS):
        raise InvalidInput(
            f"An uploaded file's method is one of {', '.join(METHODS)} (got {reported_method!r}); only uploads "
            "declare one."
        )
    if method != "upload":
        if endpoint is None:
            raise InvalidInput("Choose a model endpoint.")
        if endpoint.project_id not in (None, project.pk):
            raise InvalidInput("That endpoint belongs to another project.")
    if judge is not None and judge.project_id not in (None, project.pk):
        raise InvalidInput("That judge endpoint belongs to another project.")
    for value, allowed, refusal in (
        (setting, ScoringRun.Setting.values, "The context setting is short or long."),
        (tools, TOOL_OPTIONS, "Tools are 'all' or 'data'."),
        (few_shot, FEW_SHOTS, "Tool examples are 0, 1 or 3 shots."),
        (scale_mode, SCALE_MODES, f"The scale mode is {' or '.join(SCALE_MODES)}."),
        (extraction, EXTRACTION_MODES, f"The answer extraction is {' or '.join(EXTRACTION_MODES)}."),
        (bertscore, BERTSCORE_MODELS, f"The BERTScore model is {' or '.join(BERTSCORE_MODELS)}."),
    ):
        if value not in allowed:
            raise InvalidInput(refusal)
    if max_turns is not None and not 1 <= max_turns <= MAX_TURNS_LIMIT:
        raise InvalidInput(f"The turn limit is between 1 and {MAX_TURNS_LIMIT}.")
    if bertscore == "paper" and (reason := paper_bertscore_unavailable()):
        raise InvalidInput(f"The paper's BERTScore (bert-base-uncased, layer 12) is unavailable: {reason}.")
    if limit is not None and limit < 1:
        raise InvalidInput("The limit is a positive number of items.")
    if per_template is not None and (per_template < 1 or limit is not None):
        raise InvalidInput("A per-template sample is a positive number of questions per template, without a limit.")
    chunk_size = max(1, min(int(chunk_size), 500))
    used_templates = templates_for(method, templates)
    if abstention is None:  # offered exactly when the release froze questions that cannot be answered
        abstention = ReleaseItem.objects.filter(release=release, split=UNANSWERABLE_SPLIT).exists()
    if abstention:
        used_templates = templates_offering_abstention(used_templates)
    params = {**(endpoint.generation_params if endpoint else {}), **(generation_params or {})}
    if unknown := set(params) - GENERATION_PARAM_NAMES:
        raise InvalidInput(f"Unknown generation parameters: {', '.join(sorted(unknown))}.")
    if per_template is not None:
        positions = per_template_positions(release, per_template=per_template, seed=sample_seed)
    else:
        positions = list(
            ReleaseItem.objects.filter(release=release).order_by("position").values_list("position", flat=True)[:limit]
        )
    if not positions:
        raise InvalidInput("That release has no items.")
    options = {
        "few_shot": few_shot,
        "tools": tools,
        **_turn_cap(release, method, max_turns),
        "json_schema": json_schema,
        "use_cache": use_cache,
        "scale_mode": scale_mode,
        "extraction": extraction,
        "bertscore": bertscore,
        "abstention": bool(abstention),
    }
    if per_template is not None:
        options["sample"] = {"per_template": per_template, "seed": sample_seed, "split": "answerable"}
    if judge is not None:
        # An optional judge of free-form answers (beside BERTScore, never an official metric), with its rubric.
        rubric = (templates or {}).get("judge") or DEFAULT_TEMPLATES["judge"]
        options["judge"] = {"endpoint": judge.pk, "model": judge.model, "rubric": rubric}
    if reported_method:
        # The method the uploaded predictions came from: with setting, n-shot and tools it places them in comparisons.
        options["reported_method"] = reported_method
    config = {
        "release": {"id": release.pk, "content_hash": release.content_hash},
        "endpoint": ({"id": endpoint.pk, "base_url": endpoint.base_url, "model": endpoint.model} if endpoint else None),
        "upload_sha256": canonical_hash(uploaded) if uploaded is not None else None,
        "method": method,
        "setting": setting,
        "template_hash": templates_hash(used_templates),
        "generation_params": params,
        "options": options,
        "limit": limit,
    }
    with transaction.atomic():
        run = ScoringRun.objects.create(
            project=project,
            release=release,
            endpoint=endpoint,
            label=label or (endpoint.model if endpoint else upload_name or "uploaded predictions"),
            method=method,
            setting=setting,
            templates=used_templates,
            template_hash=config["template_hash"],
            generation_params=params,
            options=options,
            config=config,
            config_hash=canonical_hash(config),
            uploaded_predictions=uploaded,
            upload_name=upload_name,
            upload_format=upload_format,
            item_limit=limit,
            items_total=len(positions),
            chunk_size=chunk_size,
            created_by=actor if actor is not None and actor.is_authenticated else None,
        )
        RunChunk.objects.bulk_create(
            RunChunk(run=run, index=index, first_position=first, last_position=last)
            for index, (first, last) in enumerate(_chunk_ranges(positions, chunk_size))
        )
    return run
