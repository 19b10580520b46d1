"""Safe HTML from guidelines Markdown: markdown renders, nh3 removes anything executable."""

from __future__ import annotations

from functools import lru_cache

import markdown
import nh3

MARKDOWN_EXTENSIONS = ["tables", "fenced_code", "sane_lists"]


@lru_cache(maxsize=128)
def render_markdown(text: str) -> str:
    """Markdown to HTML with scripts, event handlers and javascript: links removed. A pure function of the text,
    kept for the last 128 texts: the banner renders the same announcements on every page a member opens."""
    html = markdown.markdown(text or "", extensions=MARKDOWN_EXTENSIONS, output_format="html")
    return nh3.clean(html, link_rel="noopener noreferrer")
