"""OpenAI-compatible chat endpoints: configuration, the one client, limits, cache and errors."""
