"""Create (or refresh) the demo project: one user per role, a short paper, contexts, drafts and the exam.

It lives in `annotate` because it assembles the core and the human side; the core names neither app above it."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from curation.batches.services import batch_create, batch_open
from curation.demo.content import DRAFTS, PAPER_SOURCE
from curation.management.base import ReportCommand
from curation.models import Context, Project, ReasoningType
from curation.services.lifecycle import instance_create
from curation.services.projects import membership_add, project_create
from curation.states import Role

DEMO_SLUG = "demo"
# (username, role, qualified)
DEMO_USERS = [
    ("manager", Role.MANAGER, False),
    ("verifier", Role.VERIFIER, False),
    ("annotator", Role.ANNOTATOR, False),
    ("annotator2", Role.ANNOTATOR, True),
]


def local_model_endpoint():
    """The embedded SmolLM2 endpoint, available to every project (created once)."""
    from django.conf import settings

    from curation.endpoints.local_model import endpoint_settings
    from curation.endpoints.models import ModelEndpoint

    endpoint, _ = ModelEndpoint.objects.update_or_create(
        project=None,
        name="Local SmolLM2-135M-Instruct",
        defaults={**endpoint_settings(settings.TATCURATE_LOCAL_MODEL_PORT), "is_local_default": True},
    )
    return endpoint


class Command(ReportCommand):
    help = "Create the demo project with one user per role (credentials printed) and sample content."

    @transaction.atomic
    def report(self, options):
        User = get_user_model()
        project = Project.objects.filter(slug=DEMO_SLUG).first()
        created = project is None
        if created:
            project = project_create(
                name="Demo: sparse adapters paper",
                slug=DEMO_SLUG,
                creator=None,
                description="A demo project over a short invented paper. Log in as each role to look around.",
            )
        users = []
        for username, role, qualified in DEMO_USERS:
            password = f"demo-{username}"
            if not User.objects.filter(username=username).exists():
                User.objects.create_user(username=username, password=password)
            membership_add(project=project, actor=None, username=username, role=role, is_qualified=qualified)
            users.append({"username": username, "password": password, "role": role.value})
        if created:
            self._content(project)
        from annotate.qualification.demo_exam import demo_exam_seed

        demo_exam_seed(project=project)
        endpoint = local_model_endpoint()
        return {
            "project": project.slug,
            "created": created,
            "users": users,
            "instances": project.instances.count(),
            "endpoint": {"name": endpoint.name, "base_url": endpoint.base_url},
        }

    def lines(self, result, options):
        yield self.style.SUCCESS(
            f"Demo project '{result['project']}' {'created' if result['created'] else 'is ready'}."
        )
        for user in result["users"]:
            yield f"  {user['role']:<10} {user['username']:<12} password: {user['password']}"
        yield f"  model endpoint: {result['endpoint']['name']} at {result['endpoint']['base_url']}"

    def _content(self, project: Project) -> None:
        from curation.batches.services import batch_assign
        from curation.papers.services import paper_ingest
        from curation.services.contexts import context_set_reasoning_type, contexts_assign_reasoning_types
        from curation.services.instances import answer_kind_suggested

        paper = paper_ingest(project=project, actor=None, path_or_upload=PAPER_SOURCE, source_name="demo paper").paper
        contexts = {
            c.paragraph.text: c for c in Context.objects.filter(paper=paper, kind="short").select_related("paragraph")
        }
        types = {t.code: t for t in ReasoningType.objects.filter(project=project)}
        batch = batch_open(batch_id=batch_create(project=project, actor=None, name="Batch 1").pk, actor=None)
        drafted_contexts = []
        for opening, code, question, rationale, answer, form, source in DRAFTS:
            context = next(c for text, c in contexts.items() if text.startswith(opening))
            if context.reasoning_type_id is None:
                context_set_reasoning_type(context=context, reasoning_type=types[code], actor=None)
            drafted_contexts.append(context.pk)
            instance_create(
                project_id=project.pk,
                actor=None,
                context=context,
                batch=batch,
                reasoning_type=types[code],
                question=question,
                rationale=rationale,
                answer=answer,
                answer_form=form,
                answer_source=source,
                **answer_kind_suggested(
                    question=question, rationale=rationale, answer=answer, tables=context.tables.all()
                ),
                relevant_tables=list(context.tables.all()),
                draft={
                    "question": question,
                    "rationale": rationale,
                    "answer": answer,
                    "provenance": {"drafter": "demo", "note": "written by hand for the demo"},
                },
                reason="demo draft",
            )
        # The drafted contexts belong to the batch their drafts are in (as a filled batch would have them).
        batch_assign(batch_id=batch.pk, actor=None, context_ids=sorted(set(drafted_contexts)))
        contexts_assign_reasoning_types(project=project, actor=None, seed=0)  # short contexts without a draft
