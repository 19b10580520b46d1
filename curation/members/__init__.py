"""Members of a project: create users, change roles, remove members; their pages and API."""
