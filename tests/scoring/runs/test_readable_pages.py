"""Run and prediction pages show settings and figures as a person reads them, not as Python dicts."""

from __future__ import annotations

from curation.templatetags.readable import settings_text


def test_settings_read_as_words():
    text = settings_text({"temperature": 0.0, "max_tokens": 256, "json_schema": True, "reported_method": ""})
    assert text == "temperature 0 · max tokens 256 · json schema yes · reported method —"
    assert "{" not in text and settings_text({}) == "—" and settings_text(None) == "—"
