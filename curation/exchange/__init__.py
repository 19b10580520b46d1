"""Work in and out without a release: import externally drafted questions, export work in progress."""
