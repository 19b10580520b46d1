"""Webhooks: a project's registered URLs, the signed deliveries of its events, and their attempts."""
