"""Writes for hidden gold: configure it, put probes into open batches, score a submitted probe, pause and restore.

A probe is an ordinary instance of the batch it is served in (drafted with the batch's drafts, claimed, leased,
autosaved, submitted and reviewed as they are); only `GoldProbe` (manager-only) says which instances are probes and
of which gold. The gold answer is read only in `probe_score`.
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, models, transaction
from django.db.models import Exists, Min, OuterRef, Q
from django.utils import timezone

from annotate.qualification.models import QualificationAttempt
from annotate.qualification.services import gold_candidates
from annotate.quality.intervals import wilson_interval
from annotate.quality.models import GoldProbe, QualityDecision, QualitySettings, ReissuedId
from curation.answer_types import SCALES
from curation.errors import Conflict, InvalidInput
from curation.models import Batch, Context, Instance, InstanceRevision, Membership, Project, TransitionEvent
from curation.services.lifecycle import instances_create
from curation.services.projects import require_role
from curation.states import Role, Status
from curation.webhooks.services import webhook_emit
from scoring.metrics.scitat import exact_match

REISSUE_CHUNK = 500


def quality_settings_of(project: Project) -> QualitySettings:
    """The project's hidden-gold settings, or unsaved defaults (hidden gold off)."""
    return QualitySettings.objects.filter(project=project).first() or QualitySettings(project=project)


@transaction.atomic
def quality_configure(
    *,
    project: Project,
    actor: AbstractBaseUser,
    gold_every: int | None = None,
    gold_threshold: float | None = None,
    gold_min_sample: int | None = None,
    is_pause_on_fail: bool | None = None,
) -> QualitySettings:
    """Set hidden gold (managers only); the ranges are the input's (`QualitySettingsSerializer`, which the API and
    the dashboard's form share), and gold_every 1 is refused: it would serve nothing but gold."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="configure hidden gold")
    if gold_every == 1:
        raise InvalidInput(
            "gold_every of 1 would serve only gold; use 0 (off) or 2 and more.", detail={"field": "gold_every"}
        )
    quality, _ = QualitySettings.objects.select_for_update().get_or_create(project=project)
    names = ("gold_every", "gold_threshold", "gold_min_sample", "is_pause_on_fail")
    for name, value in zip(names, (gold_every, gold_threshold, gold_min_sample, is_pause_on_fail), strict=True):
        if value is not None:
            setattr(quality, name, value)
    quality.save()
    if quality.gold_every < 2:
        probes_withdraw(project)
    for batch in Batch.objects.filter(project=project).exclude(state=Batch.State.CLOSED).select_related("project"):
        probes_place(batch=batch)
    return quality


def probes_place(*, batch: Batch) -> list[Instance]:
    """Give a batch drafted already the probes it is due, in seeded places among its unclaimed drafts: the one
    placement for a batch whose drafts came first (hidden gold switched on, or its papers' first gold validated)."""
    made = probes_top_up(batch=batch)
    probes_interleave(batch, made)
    return made


def probes_interleave(batch: Batch, probes: list[Instance]) -> None:
    """Probes made for a batch already drafted (hidden gold switched on late) take seeded places among the batch's
    drafts nobody has claimed yet: from the first place taken on, those drafts and the probes get new ids in the new
    order, and each probe the drafting time of the draft before it, so neither ids nor times set them apart."""
    if not probes:
        return
    made = {probe.pk for probe in probes}
    unclaimed = Instance.objects.filter(batch=batch, status=Status.DRAFTED, version=1, author=None)
    order = list(unclaimed.exclude(pk__in=made).order_by("pk"))
    if not order:
        return
    rng = random.Random(f"hidden gold late:{batch.pk}:{min(made)}")
    for probe in probes:
        order.insert(rng.randrange(len(order) + 1), probe)
    start = min(order.index(probe) for probe in probes)
    moved = order[start:]
    drafts = [item for item in order if item.pk not in made]
    first_times = {
        model: dict(
            model.objects.filter(instance_id__in=[d.pk for d in drafts])
            .values("instance_id")
            .annotate(at=Min("created_at"))
            .values_list("instance_id", "at")
        )
        for model in (TransitionEvent, InstanceRevision)
    }
    previous = order[start - 1] if start else drafts[0]
    probe_times: dict[int, Instance] = {}
    for item in moved:
        if item.pk in made:  # the probe takes the times of the draft before it, its history's included
            item.created_at, item.updated_at = previous.created_at, previous.updated_at
            probe_times[item.pk] = previous
        else:
            previous = item
    for model, times in first_times.items():
        _update_by_id(
            model, "instance", "created_at",
            {pk: times.get(draft.pk, draft.created_at) for pk, draft in probe_times.items()},
        )  # fmt: skip
    _reissue(moved)


def _update_by_id(model: type[models.Model], key: str, field: str, values: dict[int, Any]) -> None:
    """Set column `field` of `model`'s rows whose column `key` is in `values` to that key's value: one UPDATE … CASE
    per chunk of keys, written as SQL (the ORM's Case/When took a second per thousand keys to build)."""
    table = connection.ops.quote_name(model._meta.db_table)
    key_column = connection.ops.quote_name(model._meta.get_field(key).column)
    target = model._meta.get_field(field)
    keys = list(values)
    with connection.cursor() as cursor:
        for start in range(0, len(keys), REISSUE_CHUNK):
            chunk = keys[start : start + REISSUE_CHUNK]
            cases = " ".join(["WHEN %s THEN %s"] * len(chunk))
            marks = ", ".join(["%s"] * len(chunk))
            params = [p for k in chunk for p in (k, target.get_db_prep_value(values[k], connection))] + chunk
            column = connection.ops.quote_name(target.column)
            # Names are quoted from the models; every value is a parameter.
            sql = f"UPDATE {table} SET {column} = CASE {key_column} {cases} END WHERE {key_column} IN ({marks})"  # noqa: S608
            cursor.execute(sql, params)


def _reissue(instances: list[Instance]) -> None:
    """Save the instances anew under the next ids, in this order, with the times they carry; every row pointing at
    one (history, revisions, table choices, its probe mark, old ids reissued to it) follows it, and each old id is
    kept for the manager's link to it (`ReissuedId`). A fixed number of queries per chunk."""
    old = [instance.pk for instance in instances]
    times = {instance.pk: (instance.created_at, instance.updated_at) for instance in instances}
    for instance in instances:
        instance.pk = None
    Instance.objects.bulk_create(instances, batch_size=REISSUE_CHUNK)  # ids in this order
    new_of = {before: instance.pk for before, instance in zip(old, instances, strict=True)}
    _update_by_id(Instance, "id", "created_at", {new_of[pk]: at[0] for pk, at in times.items()})
    _update_by_id(Instance, "id", "updated_at", {new_of[pk]: at[1] for pk, at in times.items()})
    for relation in Instance._meta.get_fields(include_hidden=True):
        if relation.auto_created and not relation.concrete and (relation.one_to_many or relation.one_to_one):
            _update_by_id(relation.related_model, relation.field.name, relation.field.name, new_of)
    ReissuedId.objects.bulk_create(
        [ReissuedId(old_id=before, instance_id=after) for before, after in new_of.items()], batch_size=REISSUE_CHUNK
    )
    Instance.objects.filter(pk__in=old).delete()


def drafted_fields(gold: Instance) -> dict[str, Any]:
    """What a probe opens with, as a real draft of that context would: the gold item's draft as produced (before
    anyone refined it) under the validated question (the gold answer scores an answer to that question). Gold with
    no drafted answer opens as an imported draft does: the question only. The refined gold answer is never read."""
    draft = gold.draft if isinstance(gold.draft, dict) else {}
    answer = draft.get("answer")
    fields: dict[str, Any] = {
        "question": gold.question,
        "rationale": str(draft.get("rationale") or ""),
        "answer": [str(item) for item in answer] if isinstance(answer, list) else [],
        "is_answerable": draft.get("is_answerable") is not False,
    }
    for name in ("answer_form", "answer_source", "answer_type", "unanswerable_reason"):
        fields[name] = str(draft.get(name) or "")
    fields["scale"] = draft.get("scale") if draft.get("scale") in SCALES else None  # as drafted: null, not chosen
    fields["relevant_tables"] = list(draft.get("relevant_table_ids") or [])
    return fields


# What a draft record says about where it came from (the run, its model and prompts): a probe's record takes these
# from the batch's latest draft, so it names the run the batch's drafts name.
PROVENANCE_KEYS = ("drafter", "run", "endpoint", "model", "template_hashes", "params", "seed", "provenance")


def _draft_record(gold: Instance, *, sibling: dict[str, Any]) -> dict[str, Any]:
    """The probe's draft record: the gold item's own as produced (its question the one asked), with the provenance
    of the batch's latest draft; none when the batch's drafts have none (written from scratch or imported)."""
    if not sibling:
        return {}
    record = dict(gold.draft) if isinstance(gold.draft, dict) else {}
    record.update({key: sibling[key] for key in PROVENANCE_KEYS if key in sibling})
    record.update(
        question=gold.question,
        context=gold.context_id,
        relevant_table_ids=sorted(record.get("relevant_table_ids") or []),
    )
    if isinstance(record.get("raw"), dict) and "question" in record["raw"]:
        record["raw"] = {**record["raw"], "question": gold.question}
    return record


def probes_due(*, drafts: int, probes: int, gold_every: int, batch_id: int) -> int:
    """How many probes a batch of `drafts` drafts should hold by now: one in every `gold_every` of its instances,
    the first after a seeded number of drafts (so a batch's pattern cannot be counted), never before a draft."""
    if gold_every < 2:
        return 0
    offset = random.Random(f"hidden gold:{batch_id}").randrange(gold_every - 1)
    return max((drafts + offset) // (gold_every - 1) - probes, 0)


@transaction.atomic
def probes_top_up(*, batch: Batch) -> list[Instance]:
    """Give a batch not yet closed its share of hidden gold (`probes_due`) as new drafted instances of it, made as its
    drafts are: same audit reason, a draft record naming the same run. Called in the transaction that commits drafts
    (so probes are numbered among them), and by `probes_place` for a batch drafted already. Returns the probes made."""
    quality = quality_settings_of(batch.project)
    if quality.gold_every < 2 or batch.state == Batch.State.CLOSED:
        return []
    Batch.objects.select_for_update().filter(pk=batch.pk).values_list("pk").first()  # one top-up at a time
    drafts = Instance.objects.filter(batch=batch).without_probes()
    probed = list(GoldProbe.objects.filter(instance__batch=batch).values_list("gold_id", flat=True))
    due = probes_due(drafts=drafts.count(), probes=len(probed), gold_every=quality.gold_every, batch_id=batch.pk)
    # A probe reads like its batch: its gold comes from the papers the batch's drafts come from, or there is none;
    # and a batch holds one probe of a gold item at most (the same question twice in one batch gives both away), so
    # a small pool makes fewer probes than are due, and the next drafts' top-up takes the gold validated meanwhile.
    pool = [gold for gold in gold_of_batch_papers(batch) if gold.pk not in probed] if due else []
    due = min(due, len(pool))
    if not pool:
        return []
    sibling = drafts.order_by("-pk").first()
    first_event = (
        TransitionEvent.objects.filter(instance=sibling, from_status="").first() if sibling is not None else None
    )
    served = Counter(GoldProbe.objects.filter(project=batch.project).values_list("gold_id", flat=True))
    golds = []
    for _ in range(due):
        # The gold least used so far, ties drawn with a seeded generator: probes spread over the pool.
        rng = random.Random(f"hidden gold:{batch.pk}:{sum(served.values())}")
        gold = min(pool, key=lambda g: (served[g.pk], rng.random()))
        served[gold.pk] += 1
        golds.append(gold)
    sibling_draft = sibling.draft if sibling is not None and isinstance(sibling.draft, dict) else {}
    made = instances_create(
        project_id=batch.project_id,
        actor=None,
        reason=first_event.reason if first_event is not None else "",
        rows=[
            {
                "batch_id": batch.pk,
                "context_id": gold.context_id,
                "reasoning_type_id": gold.reasoning_type_id,
                "draft": _draft_record(gold, sibling=sibling_draft),
                **drafted_fields(gold),
            }
            for gold in golds
        ],
    )
    GoldProbe.objects.bulk_create(
        [GoldProbe(project=batch.project, instance=probe, gold=gold) for probe, gold in zip(made, golds, strict=True)]
    )
    return made


def gold_of_batch_papers(batch: Batch, candidates: list[Instance] | None = None) -> list[Instance]:
    """Validated gold (never a probe) on the papers of the batch's drafts: what its probes may be drawn from. A
    probe from another paper would stand out among the batch's drafts, so none is made from one. `candidates`: the
    project's `gold_candidates`, when a caller asks for many batches (read once, not per batch)."""
    papers = Instance.objects.filter(batch=batch).without_probes().values("context__paper_id")
    contexts = set(Context.objects.filter(paper_id__in=papers).values_list("pk", flat=True))
    pool = gold_candidates(batch.project) if candidates is None else candidates
    return [gold for gold in pool if gold.context_id in contexts]


def batches_without_probes(project: Project, *, gold_every: int) -> list[dict[str, Any]]:
    """With hidden gold on, the project's drafted batches not closed that hold no probe, each with why: no gold on
    its papers (`no_gold`), fewer drafts than its first probe waits for (`too_few_drafts`), or probes due and not
    placed (`not_placed`; saving hidden gold places them); and those holding waiting probes the claim serves to no
    qualified annotator (`unservable`, with how many: `probes_served_to_nobody`). The dashboard names them all, so
    none lacks probes unsaid."""
    drafted = Exists(Instance.objects.filter(batch=OuterRef("pk")))
    probed = Exists(GoldProbe.objects.filter(instance__batch=OuterRef("pk")))
    unservable = probes_served_to_nobody(project)
    batches = Batch.objects.filter(Q(~probed) | Q(pk__in=list(unservable)), drafted, project=project)
    rows = []
    candidates = gold_candidates(project)
    for batch in batches.exclude(state=Batch.State.CLOSED).order_by("pk"):
        drafts = Instance.objects.filter(batch=batch).without_probes().count()
        if batch.pk in unservable:
            reason = "unservable"
        elif not gold_of_batch_papers(batch, candidates):
            reason = "no_gold"
        elif not probes_due(drafts=drafts, probes=0, gold_every=gold_every, batch_id=batch.pk):
            reason = "too_few_drafts"
        else:
            reason = "not_placed"
        rows.append({"batch": batch, "reason": reason, "drafts": drafts, "probes": unservable[batch.pk]})
    return rows


_SERVABLE = """SELECT d.id FROM {instances} d JOIN {probes} p ON p.instance_id = d.id
    WHERE d.project_id = %(project)s AND d.status = %(drafted)s AND NOT {passed_over}"""


def probes_served_to_nobody(project: Project) -> Counter[int]:
    """The project's probes waiting to be claimed (drafted, in a batch not closed) that the claim passes over for
    every qualified annotator, counted per batch: the claim's own condition (`probes_passed_over_sql`) is asked for
    one annotator after another until each probe has someone. With nobody qualified nothing is counted (then no
    draft at all is claimed)."""
    annotators = Membership.objects.filter(project=project, role=Role.ANNOTATOR, is_qualified=True)
    waiting = Instance.objects.filter(project=project, status=Status.DRAFTED, gold_probe__isnull=False)
    unserved = dict(waiting.exclude(batch__state=Batch.State.CLOSED).values_list("pk", "batch_id"))
    sql = _SERVABLE.format(
        instances=Instance._meta.db_table,
        probes=GoldProbe._meta.db_table,
        passed_over=probes_passed_over_sql(connection.vendor),
    )
    user_ids = list(annotators.values_list("user_id", flat=True))
    if not user_ids:
        return Counter()
    with connection.cursor() as cursor:
        for user_id in user_ids:
            if not unserved:
                break
            cursor.execute(sql, {"project": project.pk, "drafted": Status.DRAFTED.value, "actor": user_id})
            for (probe_id,) in cursor.fetchall():
                unserved.pop(probe_id, None)
    return Counter(unserved.values())


def probes_after_drafting(*, batch_id: int | None, **_: Any) -> None:
    """Receiver of `drafts_committed`: the batch's drafts grew, so its share of probes may have too."""
    batch = Batch.objects.select_related("project").filter(pk=batch_id).first() if batch_id else None
    if batch is not None:
        probes_top_up(batch=batch)


def probes_after_validation(instance: Instance, source: str, target: str) -> None:
    """After-transition hook (into validated): the item may be new gold for its paper, so with hidden gold on, the
    batches not closed drafted from that paper that hold no probe yet (none had gold to draw from) get theirs."""
    if source == target or instance.context_id is None or quality_settings_of(instance.project).gold_every < 2:
        return
    paper = Context.objects.filter(pk=instance.context_id).values("paper_id")
    probed = Exists(GoldProbe.objects.filter(instance__batch=OuterRef("pk")))
    batches = (
        Batch.objects.filter(project_id=instance.project_id, instances__context__paper_id__in=paper)
        .exclude(probed)
        .exclude(state=Batch.State.CLOSED)
        .select_related("project")
        .distinct()
        .order_by("pk")
    )
    for batch in batches:
        probes_place(batch=batch)


def probes_withdraw(project: Project) -> None:
    """Hidden gold switched off: the project's probes nobody has claimed yet (drafted at version 1, so no annotator
    ever had them) leave the queue. Probes in someone's hands go on as drafts do."""
    unclaimed = Instance.objects.filter(project=project, status=Status.DRAFTED, version=1, gold_probe__isnull=False)
    Instance.objects.filter(pk__in=list(unclaimed.values_list("pk", flat=True))).delete()


def probe_score(instance: Instance, source: str, target: str) -> None:
    """After-transition hook (into submitted): a probe's first submission is scored against its gold with the exam's
    EM (an abstention answers nothing, so it scores 0) and the annotator's running figure is checked. Later
    submissions (after changes requested) score nothing: the first answer is the measure."""
    if source != Status.IN_REFINEMENT or instance.author_id is None:
        return
    probe = GoldProbe.objects.select_for_update().filter(instance_id=instance.pk, em=None).first()
    if probe is None:
        return
    given = (
        [str(item) for item in instance.answer] if instance.is_answerable and isinstance(instance.answer, list) else []
    )
    gold = [str(item) for item in probe.gold.answer]
    em = float(exact_match(given, gold)) if given else 0.0
    GoldProbe.objects.filter(pk=probe.pk).update(user_id=instance.author_id, submitted_at=timezone.now(), em=em)
    annotator_check(project=instance.project, user=instance.author)


# The claim passes over a probe whose gold the claimer answered as a probe, worked on, or was shown in an exam.
_PASSED_OVER = """EXISTS (SELECT 1 FROM {probes} g WHERE g.instance_id = d.id AND (
    EXISTS (SELECT 1 FROM {probes} a WHERE a.gold_id = g.gold_id AND a.user_id = %(actor)s)
    OR EXISTS (SELECT 1 FROM {instances} w WHERE w.id = g.gold_id
               AND (w.author_id = %(actor)s OR w.round1_verifier_id = %(actor)s OR w.round2_reviewer_id = %(actor)s))
    OR EXISTS (SELECT 1 FROM {in_exam})))"""
_IN_EXAM = {
    "postgresql": "{attempts} q WHERE q.user_id = %(actor)s AND q.item_ids::jsonb @> to_jsonb(g.gold_id)",
    "sqlite": "{attempts} q, json_each(q.item_ids) j WHERE q.user_id = %(actor)s AND j.value = g.gold_id",
}


@functools.cache
def probes_passed_over_sql(vendor: str) -> str:
    """The claim's condition (on candidate `d`, claimer %(actor)s) for the probes it passes over: those whose gold
    the claimer has answered as a probe, was shown in an exam (its feedback shows the answer), or worked on."""
    in_exam = _IN_EXAM.get(vendor, _IN_EXAM["sqlite"]).format(attempts=QualificationAttempt._meta.db_table)
    return _PASSED_OVER.format(probes=GoldProbe._meta.db_table, instances=Instance._meta.db_table, in_exam=in_exam)


def gold_figure(*, project: Project, user_id: int) -> dict[str, Any]:
    """An annotator's running hidden-gold EM: sample size, mean and its 95 % Wilson interval.

    Counted from the annotator's latest qualification on (the exam passed again, or a manager's restore): that starts
    a fresh record, so the old figure does not pause them again at once; a pause keeps the figure it was based on."""
    qualified_at = (
        Membership.objects.filter(project=project, user_id=user_id, role=Role.ANNOTATOR)
        .values_list("qualified_at", flat=True)
        .first()
    )
    scored = GoldProbe.objects.filter(project=project, user_id=user_id, em__isnull=False)
    return gold_figure_of(scored.values_list("em", "submitted_at"), qualified_at=qualified_at)


def gold_figure_of(scored: Iterable[tuple[float, datetime | None]], *, qualified_at: datetime | None) -> dict[str, Any]:
    """`gold_figure` from an annotator's scored probes as (em, submitted_at) pairs and their latest qualification."""
    since = [(em, at) for em, at in scored if qualified_at is None or (at is not None and at > qualified_at)]
    scores = [em for em, _ in since]
    n = len(scores)
    low, high = wilson_interval(sum(scores), n)
    return {"n": n, "em": (sum(scores) / n) if n else None, "low": low, "high": high}


def is_below_threshold(*, quality: QualitySettings, figure: dict[str, Any]) -> bool:
    """The one alert rule: at least the minimum sample scored, and the running EM under the threshold."""
    return figure["n"] >= quality.gold_min_sample and figure["em"] is not None and figure["em"] < quality.gold_threshold


def annotator_check(*, project: Project, user: AbstractBaseUser) -> QualityDecision | None:
    """After each scored probe: pause an annotator below the threshold when the project says so (audited), so they
    must pass the exam again. Returns the decision, or None when nothing changed."""
    quality = quality_settings_of(project)
    figure = gold_figure(project=project, user_id=user.pk)
    if not (quality.is_pause_on_fail and is_below_threshold(quality=quality, figure=figure)):
        return None
    changed = Membership.objects.filter(
        project=project, user_id=user.pk, role=Role.ANNOTATOR, is_qualified=True
    ).update(is_qualified=False)
    if not changed:
        return None
    decision = QualityDecision.objects.create(
        project=project,
        user_id=user.pk,
        action=QualityDecision.Action.PAUSED,
        actor=None,
        reason=(
            f"Hidden-gold EM {figure['em']:.2f} over {figure['n']} items is below the project's threshold "
            f"{quality.gold_threshold:.2f}; paused until re-qualified."
        ),
        em=figure["em"],
        sample=figure["n"],
    )
    payload = {
        "annotator": user.get_username(),
        "em": figure["em"],
        "sample": figure["n"],
        "threshold": quality.gold_threshold,
        "reason": decision.reason,
        "decided_at": decision.created_at,
    }
    webhook_emit(project=project, event="annotator.paused", payload=payload)
    return decision


@transaction.atomic
def annotator_restore(*, project: Project, actor: AbstractBaseUser, user_id: int, reason: str) -> QualityDecision:
    """A manager reverses a pause (audited with their reason); the annotator may claim again at once."""
    require_role(user=actor, project=project, roles=(Role.MANAGER,), action="restore a paused annotator")
    reason = (reason or "").strip()
    if not reason:
        raise InvalidInput("Say why you restore this annotator.", detail={"field": "reason"})
    if len(reason) > 500:
        raise InvalidInput("A reason has at most 500 characters.", detail={"field": "reason"})
    last = QualityDecision.objects.filter(project=project, user_id=user_id).order_by("-created_at", "-id").first()
    if last is None or last.action != QualityDecision.Action.PAUSED:
        raise InvalidInput("This annotator is not paused by hidden gold.", detail={"field": "user"})
    changed = Membership.objects.filter(
        project=project, user_id=user_id, role=Role.ANNOTATOR, is_qualified=False
    ).update(is_qualified=True, qualified_at=timezone.now())
    if not changed:
        raise Conflict("This annotator has re-qualified already.")
    figure = gold_figure(project=project, user_id=user_id)
    return QualityDecision.objects.create(
        project=project,
        user_id=user_id,
        action=QualityDecision.Action.RESTORED,
        actor=actor,
        reason=reason,
        em=figure["em"],
        sample=figure["n"],
    )
