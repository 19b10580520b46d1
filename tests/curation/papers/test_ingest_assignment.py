"""Reasoning-type assignment: counts follow the target shares over leaf types, per seed, with manager overrides."""

from __future__ import annotations

from collections import Counter

import pytest

from curation.errors import InvalidInput, NotPermitted
from curation.models import Context, ReasoningType
from curation.services.contexts import (
    apportion,
    context_set_reasoning_type,
    contexts_assign_reasoning_types,
    leaf_reasoning_types,
)
from tests.factories import BatchFactory, LongContextFactory, PaperFactory


@pytest.fixture
def many_contexts(project):
    """100 short contexts, the first 60 in a batch."""
    paper = PaperFactory(project=project, title="P")
    batch = BatchFactory(project=project, name="B")
    contexts = Context.objects.bulk_create(
        Context(project=project, paper=paper, kind=Context.Kind.SHORT, batch=batch if i < 60 else None)
        for i in range(100)
    )
    return {"batch": batch, "contexts": contexts, "paper": paper}


def assigned(**filters: object) -> dict[int, str]:
    return dict(Context.objects.filter(**filters).values_list("pk", "reasoning_type__code"))


def test_apportion_is_largest_remainder():
    assert apportion(10, [1, 1, 1]) == [4, 3, 3]  # ties go to the earlier type
    assert apportion(7, [50, 30, 20]) == [4, 2, 1]  # quotas 3.5, 2.1, 1.4 → remainders .5, .1, .4
    assert apportion(0, [1, 2]) == [0, 0]
    assert apportion(5, [0, 0]) == [0, 0]
    assert sum(apportion(1000, [2.7, 2.0, 11.1, 8.2, 3.9])) == 1000


def test_leaves_are_subtypes_and_types_without_subtypes(project):
    codes = [leaf.code for leaf in leaf_reasoning_types(project)]
    assert len(codes) == 12
    assert "tabulation" in codes and "numerical_reasoning" not in codes and "comparison" in codes


def test_all_unassigned_contexts_follow_the_target_shares(project, many_contexts):
    result = contexts_assign_reasoning_types(project=project, actor=None, seed=7)
    leaves = leaf_reasoning_types(project)
    expected = dict(zip([leaf.code for leaf in leaves], apportion(100, [leaf.target_proportion for leaf in leaves])))
    assert result.assigned == 100 and result.counts == expected
    assert Counter(assigned(project=project).values()) == Counter({k: v for k, v in expected.items() if v})
    # SciTaT table 4: descriptive analysis is the largest share (23.3 %), span look-up among the smallest (2.0 %).
    assert expected["descriptive_analysis"] == 23 and expected["span_lookup"] == 2
    assert ReasoningType.objects.filter(project=project, parent=None, code="data_analysis").get().pk not in {
        c.reasoning_type_id for c in Context.objects.filter(project=project)
    }


def test_same_seed_same_assignment_other_seed_other_order(project, many_contexts):
    contexts_assign_reasoning_types(project=project, actor=None, seed=1, batch=many_contexts["batch"])
    first = assigned(batch=many_contexts["batch"])
    contexts_assign_reasoning_types(project=project, actor=None, seed=1, batch=many_contexts["batch"])
    assert assigned(batch=many_contexts["batch"]) == first
    contexts_assign_reasoning_types(project=project, actor=None, seed=2, batch=many_contexts["batch"])
    second = assigned(batch=many_contexts["batch"])
    assert second != first
    assert Counter(second.values()) == Counter(first.values())


def test_batch_assignment_touches_only_the_batch(project, many_contexts):
    result = contexts_assign_reasoning_types(project=project, actor=None, seed=3, batch=many_contexts["batch"])
    assert result.assigned == 60
    assert Context.objects.filter(batch__isnull=True, reasoning_type__isnull=False).count() == 0
    assert Context.objects.filter(batch=many_contexts["batch"], reasoning_type__isnull=True).count() == 0


def test_unassigned_mode_keeps_existing_assignments(project, many_contexts):
    contexts_assign_reasoning_types(project=project, actor=None, seed=3, batch=many_contexts["batch"])
    before = assigned(batch=many_contexts["batch"])
    result = contexts_assign_reasoning_types(project=project, actor=None, seed=4)
    assert result.assigned == 40
    assert assigned(batch=many_contexts["batch"]) == before


def test_a_zero_share_type_is_never_assigned(project, many_contexts):
    ReasoningType.objects.filter(project=project, code="tabulation").update(target_proportion=0)
    result = contexts_assign_reasoning_types(project=project, actor=None, seed=5)
    assert "tabulation" not in result.counts
    assert not Context.objects.filter(reasoning_type__code="tabulation").exists()


def test_only_managers_assign(project, personas, many_contexts):
    for name in ("annotator", "verifier", "outsider"):
        with pytest.raises(NotPermitted):
            contexts_assign_reasoning_types(project=project, actor=personas[name], seed=1)
    assert not Context.objects.filter(reasoning_type__isnull=False).exists()
    contexts_assign_reasoning_types(project=project, actor=personas["manager"], seed=1)
    assert not Context.objects.filter(reasoning_type__isnull=True).exists()


def test_manager_override_sets_a_leaf_and_refuses_parents_and_other_projects(project, personas, many_contexts):
    context = many_contexts["contexts"][0]
    counting = ReasoningType.objects.get(project=project, code="counting")
    context_set_reasoning_type(context=context, reasoning_type=counting, actor=personas["manager"])
    context.refresh_from_db()
    assert context.reasoning_type == counting
    with pytest.raises(InvalidInput, match="subtypes"):
        parent = ReasoningType.objects.get(project=project, code="numerical_reasoning")
        context_set_reasoning_type(context=context, reasoning_type=parent, actor=personas["manager"])
    with pytest.raises(NotPermitted):
        context_set_reasoning_type(context=context, reasoning_type=None, actor=personas["verifier"])
    context_set_reasoning_type(context=context, reasoning_type=None, actor=personas["manager"])
    context.refresh_from_db()
    assert context.reasoning_type is None


def test_long_contexts_get_no_reasoning_type(project, personas, many_contexts):
    long = LongContextFactory(paper=many_contexts["paper"], batch=many_contexts["batch"])
    assert contexts_assign_reasoning_types(project=project, actor=None, seed=1).assigned == 100
    assert (
        contexts_assign_reasoning_types(project=project, actor=None, seed=1, batch=many_contexts["batch"]).assigned
        == 60
    )
    long.refresh_from_db()
    assert long.reasoning_type is None
    with pytest.raises(InvalidInput, match="long context"):
        contexts_assign_reasoning_types(
            project=project, actor=None, seed=1, contexts=[long, many_contexts["contexts"][0]]
        )
    counting = ReasoningType.objects.get(project=project, code="counting")
    with pytest.raises(InvalidInput, match="long context"):
        context_set_reasoning_type(context=long, reasoning_type=counting, actor=personas["manager"])
    long.refresh_from_db()
    assert long.reasoning_type is None
