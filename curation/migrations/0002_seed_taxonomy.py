"""Give every existing project without a taxonomy the default one (SciTaT table 4)."""

from django.db import migrations


def seed(apps, schema_editor):
    from curation.taxonomy import seed_taxonomy

    Project = apps.get_model("curation", "Project")
    ReasoningType = apps.get_model("curation", "ReasoningType")
    for project in Project.objects.all():
        seed_taxonomy(project, ReasoningType)


class Migration(migrations.Migration):
    dependencies = [("curation", "0001_initial")]
    operations = [migrations.RunPython(seed, migrations.RunPython.noop)]
