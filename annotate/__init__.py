"""The human side: qualification, queue and leases, refinement, two-round validation."""
