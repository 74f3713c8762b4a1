"""A small, safe Markdown-to-HTML renderer for the pages we write ourselves (docs/rules).

It knows the subset those pages use — headings, paragraphs, bullet and
numbered lists (nested by indentation), block quotes, pipe tables, fenced
code, and inline code, **bold**, *italic* and [links](url) — and nothing
else. Everything is escaped: no raw HTML passes through (an HTML comment
line, used for the generated-block markers, is dropped), and a link is kept
only if it is relative, an in-page anchor or http(s).
"""

from __future__ import annotations

import re
from html import escape

FENCE = re.compile(r"^```\s*([\w+-]*)\s*$")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
ITEM = re.compile(r"^( *)([*-]|\d+\.)\s+(.*)$")
COMMENT = re.compile(r"^\s*<!--.*-->\s*$")
TABLE_RULE = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")
SAFE_URL = re.compile(r"^(https?://|#|/|\.{0,2}/?[\w.-]+(/[\w.-]*)*(#[\w-]*)?$)")


def render(text: str) -> str:
    """The HTML of a Markdown page (a fragment: no <html> or <body>)."""
    return "\n".join(_blocks(text.replace("\r\n", "\n").split("\n")))


def slug(text: str) -> str:
    """An anchor id from a heading's text."""
    return re.sub(r"[^a-z0-9]+", "-", re.sub(r"<[^>]+>", "", text).lower()).strip("-")


# -- blocks ------------------------------------------------------------------

def _starts_block(lines: list[str], i: int) -> bool:
    line = lines[i]
    return bool(FENCE.match(line) or HEADING.match(line) or ITEM.match(line) or COMMENT.match(line)
                or line.startswith(">") or _is_table(lines, i))


def _is_table(lines: list[str], i: int) -> bool:
    return lines[i].startswith("|") and i + 1 < len(lines) and bool(TABLE_RULE.match(lines[i + 1]))


def _blocks(lines: list[str]) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or COMMENT.match(line):
            i += 1
        elif fence := FENCE.match(line):
            end = i + 1
            while end < len(lines) and not lines[end].startswith("```"):
                end += 1
            language = f' class="language-{fence.group(1)}"' if fence.group(1) else ""
            out.append(f"<pre><code{language}>{escape(chr(10).join(lines[i + 1:end]))}</code></pre>")
            i = end + 1
        elif heading := HEADING.match(line):
            level, inner = len(heading.group(1)), _inline(heading.group(2))
            out.append(f'<h{level} id="{slug(inner)}">{inner}</h{level}>')
            i += 1
        elif _is_table(lines, i):
            i = _table(lines, i, out)
        elif line.startswith(">"):
            end = i
            while end < len(lines) and lines[end].startswith(">"):
                end += 1
            quoted = [re.sub(r"^> ?", "", x) for x in lines[i:end]]
            out.append("<blockquote>\n" + "\n".join(_blocks(quoted)) + "\n</blockquote>")
            i = end
        elif ITEM.match(line):
            i = _list(lines, i, out)
        else:
            end = i + 1
            while end < len(lines) and lines[end].strip() and not _starts_block(lines, end):
                end += 1
            out.append("<p>" + _inline(" ".join(x.strip() for x in lines[i:end])) + "</p>")
            i = end
    return out


def _table(lines: list[str], i: int, out: list[str]) -> int:
    def cells(row: str) -> list[str]:
        return [c.strip() for c in row.strip().strip("|").split("|")]

    head = "".join(f"<th>{_inline(c)}</th>" for c in cells(lines[i]))
    rows, i = [], i + 2
    while i < len(lines) and lines[i].startswith("|"):
        rows.append("<tr>" + "".join(f"<td>{_inline(c)}</td>" for c in cells(lines[i])) + "</tr>")
        i += 1
    out.append(f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>")
    return i


def _list(lines: list[str], i: int, out: list[str]) -> int:
    """A list whose items sit at the first item's indentation; an item holds the lines
    indented deeper than its marker (blank lines included), rendered as blocks."""
    first = ITEM.match(lines[i])
    indent, ordered = len(first.group(1)), first.group(2)[0].isdigit()
    items: list[str] = []
    while i < len(lines):
        item = ITEM.match(lines[i])
        if not item or len(item.group(1)) != indent or item.group(2)[0].isdigit() != ordered:
            break
        body_indent = len(lines[i]) - len(item.group(3))
        body, i = [item.group(3)], i + 1
        while i < len(lines):
            line = lines[i]
            deeper = len(line) - len(line.lstrip(" ")) > indent
            if line.strip() and not deeper:
                break
            if not line.strip():  # a blank line: the item goes on only if an indented line follows
                following = next((x for x in lines[i + 1:] if x.strip()), "")
                if len(following) - len(following.lstrip(" ")) <= indent:
                    break
            body.append(line[body_indent:] if line[:body_indent].strip() == "" else line.strip())
            i += 1
        inner = _blocks(body)
        if len(inner) == 1 and inner[0].startswith("<p>"):  # a tight item: no paragraph
            inner = [inner[0][3:-4]]
        items.append("<li>" + "\n".join(inner) + "</li>")
    tag = "ol" if ordered else "ul"
    out.append(f"<{tag}>\n" + "\n".join(items) + f"\n</{tag}>")
    while i < len(lines) and not lines[i].strip():
        i += 1
    return i


# -- inline ------------------------------------------------------------------

def _inline(text: str) -> str:
    """Code spans verbatim (escaped); elsewhere links, bold and italic, on escaped text."""
    out = []
    for part in re.split(r"(`[^`]+`)", text):
        if len(part) > 1 and part.startswith("`") and part.endswith("`"):
            out.append(f"<code>{escape(part[1:-1])}</code>")
        else:
            out.append(_emphasis(escape(part, quote=True)))
    return "".join(out)


def _emphasis(escaped: str) -> str:
    def link(match: re.Match) -> str:
        label, url = match.group(1), match.group(2)
        if not SAFE_URL.match(url.replace("&amp;", "&")):
            return label  # an unsafe target (javascript:, data:…) keeps only its text
        return f'<a href="{url}">{label}</a>'

    escaped = LINK.sub(link, escaped)
    escaped = re.sub(r"\*\*(\S(?:.*?\S)?)\*\*", r"<strong>\1</strong>", escaped)
    return re.sub(r"(?<![\w*])\*(\S(?:[^*]*?\S)?)\*(?![\w*])", r"<em>\1</em>", escaped)
