"""Every write of the core domain has one named entry point in these modules."""
