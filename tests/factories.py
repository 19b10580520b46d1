"""The one place tests build rows of the core domain (factory_boy).

Each factory makes a valid row with as little said as possible, and what a test says overrides the rest:

    paper = PaperFactory(project=project, title="Our report")
    table = TableFactory(paper=paper, cells=[["Model", "Acc"], ["A", "8"]])
    context = ShortContextFactory(paper=paper, tables=[table], paragraph__mentioned_tables=[table])

Relations follow the model (a table's paper, a context's paper and project), so `ShortContextFactory()` alone makes
a project, a paper, a paragraph and a short context of it. Orders of tables and paragraphs count on within their
paper; names and titles count on over the run. A project is made by the service (`project_create`), so it has the
default taxonomy as every real one does; an instance by `instance_create`, so it has its audit row.
"""

from __future__ import annotations

import factory
from django.db.models import Max
from django.db.models.functions import Coalesce
from factory.django import DjangoModelFactory

from curation.endpoints.models import ModelEndpoint
from curation.models import Batch, Context, Instance, Paper, Paragraph, Project, Table
from curation.services.lifecycle import instance_create
from curation.services.projects import project_create
from curation.states import Status


class ProjectFactory(DjangoModelFactory):
    """A project with the default reasoning-type taxonomy, made by `project_create` (no creator)."""

    class Meta:
        model = Project

    name = factory.Sequence(lambda n: f"Project {n}")
    slug = factory.Sequence(lambda n: f"project-{n}")

    @classmethod
    def _create(cls, model_class, *args, **kwargs):
        return project_create(creator=None, **kwargs)


class PaperFactory(DjangoModelFactory):
    class Meta:
        model = Paper

    project = factory.SubFactory(ProjectFactory)
    title = factory.Sequence(lambda n: f"Paper {n}")
    origin = "test"


def _next_order(related_name: str):
    """The next order of a paper's tables or paragraphs (0 for its first)."""
    return factory.LazyAttribute(lambda row: getattr(row.paper, related_name).count())


class TableFactory(DjangoModelFactory):
    class Meta:
        model = Table

    paper = factory.SubFactory(PaperFactory)
    order = _next_order("tables")
    cells = factory.LazyFunction(lambda: [["Model", "Acc"], ["A", "87.3"], ["B", "81.0"]])


class ParagraphFactory(DjangoModelFactory):
    class Meta:
        model = Paragraph
        skip_postgeneration_save = True

    paper = factory.SubFactory(PaperFactory)
    order = _next_order("paragraphs")
    text = factory.Sequence(lambda n: f"Paragraph {n}.")

    @factory.post_generation
    def mentioned_tables(self, create, extracted, **kwargs):
        if create and extracted:
            self.mentioned_tables.add(*extracted)


class ContextFactory(DjangoModelFactory):
    """A context of a paper in the paper's project; short with no paragraph unless told (see ShortContextFactory)."""

    class Meta:
        model = Context
        skip_postgeneration_save = True

    paper = factory.SubFactory(PaperFactory)
    project = factory.SelfAttribute("paper.project")
    kind = Context.Kind.SHORT

    @factory.post_generation
    def tables(self, create, extracted, **kwargs):
        if create and extracted:
            self.tables.add(*extracted)


class ShortContextFactory(ContextFactory):
    """A short context of a paragraph of its own, the paper's next (`paragraph__text=…` to word it)."""

    paragraph = factory.SubFactory(ParagraphFactory, paper=factory.SelfAttribute("..paper"))


class LongContextFactory(ContextFactory):
    """The whole paper."""

    kind = Context.Kind.LONG


class BatchFactory(DjangoModelFactory):
    class Meta:
        model = Batch

    project = factory.SubFactory(ProjectFactory)
    name = factory.Sequence(lambda n: f"Batch {n}")
    # At the end of its project's batches, as batch_create puts it: its number (order + 1) is its place there, and
    # the next after any batch given an order of its own (the order is unique in a project).
    order = factory.LazyAttribute(
        lambda batch: Batch.objects.filter(project=batch.project).aggregate(last=Coalesce(Max("order"), -1))["last"] + 1
    )


class ModelEndpointFactory(DjangoModelFactory):
    """An endpoint of a project (`project=None`: every project's) at an address nothing answers."""

    class Meta:
        model = ModelEndpoint

    project = factory.SubFactory(ProjectFactory)
    name = factory.Sequence(lambda n: f"Endpoint {n}")
    base_url = "http://127.0.0.1:9/v1"
    model = "m"


class InstanceFactory(DjangoModelFactory):
    """A drafted instance on a short context, made by `instance_create` (with its audit row and, from
    `relevant_tables`, its relevant tables); its scale not chosen yet (null) unless told."""

    class Meta:
        model = Instance

    context = factory.SubFactory(ShortContextFactory)
    project = factory.SelfAttribute("context.project")
    question = "Which model is more accurate?"
    answer = factory.LazyFunction(lambda: ["A"])

    @classmethod
    def _create(cls, model_class, *args, project, **kwargs):
        return instance_create(project_id=project.pk, actor=None, **kwargs)


class ValidatedInstanceFactory(InstanceFactory):
    """An instance that starts validated, as gold data imported or refined earlier does: its scale chosen (None, "",
    unless told), as a submission needs it."""

    initial_status = Status.VALIDATED
    scale = ""
