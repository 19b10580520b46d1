"""Webhooks signed by the Standard Webhooks spec: attempts keep no reply body, and each old secret (whose UTF-8 bytes
were the HMAC key) is rewritten as `whsec_<base64 of those bytes>`, the spec's form of the same key."""

import base64

from django.db import migrations


def secrets_to_standard_form(apps, schema_editor):
    Webhook = apps.get_model("curation", "Webhook")
    for hook in Webhook.objects.all().only("pk", "secret"):
        key = hook.secret.encode()
        Webhook.objects.filter(pk=hook.pk).update(secret="whsec_" + base64.b64encode(key).decode())


class Migration(migrations.Migration):
    dependencies = [
        ("curation", "0024_review_pile_and_author_indexes"),
    ]

    operations = [
        migrations.RemoveField(model_name="webhookattempt", name="response_excerpt"),
        migrations.RunPython(secrets_to_standard_form, migrations.RunPython.noop),
    ]
