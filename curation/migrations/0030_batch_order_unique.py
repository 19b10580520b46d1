"""A batch's number (order + 1) is unique in its project.

Two batches created at the same moment could take the same order before `batch_create` locked the project. Before
the constraint is added, each project's batches that share an order are renumbered: in (order, id) order, a batch
keeps its order unless the batch before it has that order or a later one, and then takes the next. A project without
a shared order keeps every number; in one that has one, the later batches of a run move up only as far as needed.
The reverse keeps the new numbers (they are as valid without the constraint).
"""

from django.db import migrations, models
from django.db.models import Count


def batch_orders_renumber(apps, schema_editor):
    Batch = apps.get_model("curation", "Batch")
    shared = (
        Batch.objects.values("project_id", "order")
        .annotate(n=Count("id"))
        .filter(n__gt=1)
        .values_list("project_id", flat=True)
    )
    for project_id in sorted(set(shared)):
        renumbered = []
        previous = -1
        for batch in Batch.objects.filter(project_id=project_id).order_by("order", "id").only("pk", "order"):
            if batch.order <= previous:
                batch.order = previous + 1
                renumbered.append(batch)
            previous = batch.order
        Batch.objects.bulk_update(renumbered, ["order"], batch_size=500)


class Migration(migrations.Migration):
    dependencies = [
        ("curation", "0029_panel"),
    ]

    operations = [
        migrations.RunPython(batch_orders_renumber, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="batch",
            constraint=models.UniqueConstraint(fields=("project", "order"), name="unique_batch_order"),
        ),
    ]
