"""Papers and their ingest: upload, parse, edit tables and paragraphs, and how a paper is shown."""
