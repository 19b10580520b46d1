"""Safe HTML from guidelines Markdown: markdown renders, nh3 removes anything executable."""

from __future__ import annotations

import markdown
import nh3

MARKDOWN_EXTENSIONS = ["tables", "fenced_code", "sane_lists"]


def render_markdown(text: str) -> str:
    """Markdown to HTML with scripts, event handlers and javascript: links removed."""
    html = markdown.markdown(text or "", extensions=MARKDOWN_EXTENSIONS, output_format="html")
    return nh3.clean(html, link_rel="noopener noreferrer")
