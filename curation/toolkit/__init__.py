"""Pure helpers drafting and scoring share: numbers, table tools, answer extraction, safe evaluation, answer form."""
