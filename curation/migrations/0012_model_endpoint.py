"""ModelEndpoint moves from `scoring` to the core, keeping its table `scoring_modelendpoint` and every row.

The state gains the model here and loses it in scoring's 0004. The database keeps what it has: a database that ran the
old migrations already holds the table and DraftingRun's endpoint column; a new one gets them from whichever of this
migration and scoring's 0001 runs first (neither waits on the other, so the apps' graphs never interleave)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def endpoint_table_ensure(apps, schema_editor):
    """Create the endpoint table and DraftingRun's column only where they are missing."""
    connection = schema_editor.connection
    endpoint_model = apps.get_model("curation", "ModelEndpoint")
    if endpoint_model._meta.db_table not in connection.introspection.table_names():
        schema_editor.create_model(endpoint_model)
    run_model = apps.get_model("curation", "DraftingRun")
    field = run_model._meta.get_field("endpoint")
    with connection.cursor() as cursor:
        columns = {column.name for column in connection.introspection.get_table_description(cursor, run_model._meta.db_table)}
    if field.column not in columns:
        schema_editor.add_field(run_model, field)


class Migration(migrations.Migration):

    dependencies = [
        ('curation', '0011_releasecut'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='ModelEndpoint',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=120)),
                        ('base_url', models.URLField(help_text='e.g. http://127.0.0.1:8089/v1', max_length=500)),
                        ('model', models.CharField(max_length=200)),
                        ('api_key_env', models.CharField(blank=True, help_text='Name of the environment variable holding the API key', max_length=100)),
                        ('timeout_s', models.FloatField(default=60.0)),
                        ('max_attempts', models.PositiveIntegerField(default=5)),
                        ('concurrency_limit', models.PositiveIntegerField(default=4, help_text='Shared by all workers (Redis) when set')),
                        ('requests_per_minute', models.PositiveIntegerField(blank=True, null=True)),
                        ('generation_params', models.JSONField(blank=True, default=dict, help_text='Default temperature, max_tokens, seed …')),
                        ('supports_tools', models.BooleanField(default=False, help_text='Native OpenAI tool calls')),
                        ('is_local_default', models.BooleanField(default=False, help_text='The embedded SmolLM2 model')),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(blank=True, help_text='Empty: available to every project', null=True, on_delete=django.db.models.deletion.CASCADE, related_name='endpoints', to='curation.project')),
                    ],
                    options={
                        'db_table': 'scoring_modelendpoint',
                        'ordering': ['name'],
                        'constraints': [models.UniqueConstraint(fields=('project', 'name'), name='unique_endpoint_name')],
                    },
                ),
                migrations.AddField(
                    model_name='draftingrun',
                    name='endpoint',
                    field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='drafting_runs', to='curation.modelendpoint'),
                ),
            ],
        ),
        migrations.RunPython(endpoint_table_ensure, migrations.RunPython.noop),
    ]
