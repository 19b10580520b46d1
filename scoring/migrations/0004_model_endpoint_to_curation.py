"""ModelEndpoint now lives in the core (curation's 0010): scoring drops it from its state and points its runs there.

The table `scoring_modelendpoint` stays as it is; the content type moves with the model, so permissions and admin
history keep pointing at it."""

import django.db.models.deletion
from django.db import migrations, models


def content_type_move(apps, schema_editor):
    """Relabel the old content type unless the new one already exists (then the old one names nothing)."""
    content_type_model = apps.get_model("contenttypes", "ContentType")
    old = content_type_model.objects.filter(app_label="scoring", model="modelendpoint")
    if content_type_model.objects.filter(app_label="curation", model="modelendpoint").exists():
        old.delete()
    else:
        old.update(app_label="curation")


class Migration(migrations.Migration):

    dependencies = [
        ('contenttypes', '0002_remove_content_type_name'),
        ('curation', '0012_model_endpoint'),
        ('scoring', '0003_prediction_context'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name='scoringrun',
                    name='endpoint',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='runs', to='curation.modelendpoint'),
                ),
                migrations.DeleteModel(name='ModelEndpoint'),
            ],
        ),
        migrations.RunPython(content_type_move, migrations.RunPython.noop),
    ]
