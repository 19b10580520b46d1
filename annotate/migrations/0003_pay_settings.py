"""ReviewSettings held only the pay rate: it is now PaySettings (table annotate_paysettings), reached as project.pay_settings."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("annotate", "0002_review"),
    ]

    operations = [
        migrations.RenameModel(old_name="ReviewSettings", new_name="PaySettings"),
        migrations.AlterModelOptions(
            name="paysettings", options={"verbose_name": "pay settings", "verbose_name_plural": "pay settings"}
        ),
        migrations.AlterField(
            model_name="paysettings",
            name="project",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE, related_name="pay_settings", to="curation.project"
            ),
        ),
    ]
