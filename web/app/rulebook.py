"""The rule book the app ships (a copy of the project's RULES.md), as HTML with anchors.

Every flag cites a rule ID; the flags console links it to ``/rules#rule-ID`` and shows
the rule's own text beside the flag, so a referee on the floor never has to look it up.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from markdown_it import MarkdownIt
from markupsafe import Markup

RULE_ITEM = re.compile(r"<li>(\s*(?:<p>)?)<strong>([A-Z]\d+)\b")
RULE_START = re.compile(r"^- \*\*([A-Z]\d+)\b")


def source() -> str:
    return (resources.files("web.app") / "rules" / "RULES.md").read_text(encoding="utf-8")


def _markdown() -> MarkdownIt:
    return MarkdownIt("commonmark", {"html": False}).enable("table")


@cache
def rulebook_html() -> Markup:
    """The whole rule book; each rule's list item carries ``id="rule-P4"``."""
    html = _markdown().render(source())
    return Markup(RULE_ITEM.sub(lambda m: f'<li id="rule-{m.group(2)}">{m.group(1)}<strong>{m.group(2)}', html))


@cache
def rules() -> dict[str, Markup]:
    """Rule ID -> the HTML of that rule's own text (its list item, continuation lines too)."""
    found: dict[str, list[str]] = {}
    current = None
    for line in source().splitlines():
        start = RULE_START.match(line)
        if start:
            current = start.group(1)
            found[current] = [line[2:]]
        elif current and line.startswith("  ") and line.strip():
            found[current].append(line.strip())
        else:
            current = None
    md = _markdown()
    return {rule: Markup(md.render(" ".join(lines))) for rule, lines in found.items()}


def rule_text(rule: str) -> Markup:
    return rules().get(rule, Markup(""))
