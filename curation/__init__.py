"""TaT-Curate's core domain: projects, papers, drafting, the lifecycle, releases and the pure helpers."""
