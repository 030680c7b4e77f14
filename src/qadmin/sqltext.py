"""Filling qadmin's SQL templates: the one placeholder grammar every template and step text uses.

Every piece of SQL qadmin ships (``sql/queues/**``, ``sql/engine/*.sql``) and the few texts
held in Python (convert and resize steps, convert's column expressions) are filled here, and
only here. A placeholder is ``{...}``; a template holds no other braces.

==================  =====================================================  ==================
placeholder          becomes                                                e.g. (PostgreSQL)
==================  =====================================================  ==================
``{x}``              name ``x`` of the names mapping, quoted and            ``"app"."q_ctl"``
                     schema-qualified
``{x.bare}``         ``x`` quoted on its own (a column, an index, RENAME)   ``"q_ctl"``
``{x.lit}``          a string literal of ``{x}`` (SQL a routine builds)     ``'"app"."q_ctl"'``
``{x.bare_lit}``     a string literal of ``x``'s plain name (catalogs)      ``'q_ctl'``
``{x.schema_lit}``   a string literal of the schema holding ``x``           ``'app'``
``{k}``              keyword ``k`` of the keywords mapping, as it is        ``ORDER BY id``
``{f(x)}``           the dialect's fragment ``f``, rendered by these same   (fragments.sql)
                     rules with ``obj`` standing for name ``x``
``{f()}``            fragment ``f`` rendered with the caller's names
``{f(x, k=w)}``      fragment ``f`` with ``{k}`` standing for the word ``w``  ``{guard(w=push)}``
                     (a lower-case SQL word written in the template; any
                     number of them, with or without ``x``)
==================  =====================================================  ==================

Names are validated object names, columns, or a name the server gave (a snapshot id); a name
is never a keyword and a keyword never a name. Keywords are fixed SQL chosen from qadmin's own
constants, or text this renderer produced: never user text. Values from users are not
placeholders at all: they stay bound ``:params``. A placeholder that names nothing, or braces
that are not a placeholder, raise ``TemplateError`` when the text is rendered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

# Any braced text: each must be a placeholder of the grammar.
_BRACED = re.compile(r"\{([^{}]*)\}|[{}]")
_WORD = r"[a-z_][a-z0-9_]*"
_PLACEHOLDER = re.compile(
    rf"(?P<key>{_WORD})(?:\.(?P<form>[a-z_]+)|\((?P<args>{_WORD}(?:=[a-z0-9_]+)?"
    rf"(?:, {_WORD}=[a-z0-9_]+)*)?\))?"
)
_FORMS = ("bare", "lit", "bare_lit", "schema_lit")


class TemplateError(Exception):
    """A template asks for something its caller did not give: a bug in qadmin, not in use."""


@dataclass(frozen=True)
class Target:
    """What a text is rendered for: one server's quoting, the schema the names live in, and
    where the dialect's fragments come from (``fragment`` raises KeyError for a missing one)."""

    quote_ident: Callable[[str], str]
    quote_literal: Callable[[str], str]
    schema: str
    fragment: Callable[[str], str]

    def qualified(self, name: str) -> str:
        return f"{self.quote_ident(self.schema)}.{self.quote_ident(name)}"


def render(
    text: str,
    target: Target,
    names: Mapping[str, str],
    keywords: Mapping[str, str] | None = None,
) -> str:
    """``text`` with every placeholder filled (the grammar is the module's docstring)."""
    words = keywords or {}
    both = names.keys() & words.keys()
    if both:
        raise TemplateError(f"{', '.join(sorted(both))} given both as a name and a keyword")

    def fill(match: re.Match[str]) -> str:
        inner = match.group(1)
        parsed = _PLACEHOLDER.fullmatch(inner) if inner is not None else None
        if parsed is None:
            raise TemplateError(f"{match.group(0)!r} is not a placeholder, in: {_excerpt(text)}")
        key, form, args = parsed.group("key", "form", "args")
        if "(" in inner:
            return _fragment(key, args, target, names, words, text)
        if key in words and form is None:
            return words[key]
        if key not in names:
            raise TemplateError(f"{{{inner}}} names nothing given, in: {_excerpt(text)}")
        return _name(names[key], form, target, inner, text)

    return _BRACED.sub(fill, text)


def _name(name: str, form: str | None, target: Target, inner: str, text: str) -> str:
    if form is None:
        return target.qualified(name)
    if form == "bare":
        return target.quote_ident(name)
    if form == "lit":
        return target.quote_literal(target.qualified(name))
    if form == "bare_lit":
        return target.quote_literal(name)
    if form == "schema_lit":
        return target.quote_literal(target.schema)
    raise TemplateError(
        f"{{{inner}}}: .{form} is not one of .{', .'.join(_FORMS)}, in: {_excerpt(text)}"
    )


def _fragment(
    key: str,
    args: str | None,
    target: Target,
    names: Mapping[str, str],
    words: Mapping[str, str],
    text: str,
) -> str:
    try:
        body = target.fragment(key)
    except KeyError:
        raise TemplateError(
            f"no fragment {key!r} for {{{key}(...)}}, in: {_excerpt(text)}"
        ) from None
    arg, given = None, {}
    for part in (args or "").split(", ") if args else ():
        word, _, value = part.partition("=")
        if not value:
            arg = word
        elif word in names:
            raise TemplateError(f"{{{key}(...)}}: {word} is a name, in: {_excerpt(text)}")
        else:
            given[word] = value
    fill_words = {**words, **given}
    if arg is None:
        return render(body, target, names, fill_words)
    if arg not in names:
        raise TemplateError(f"{{{key}({arg})}} names nothing given, in: {_excerpt(text)}")
    return render(body, target, {**names, "obj": names[arg]}, fill_words)


def _excerpt(text: str) -> str:
    """The start of the template, enough to find it."""
    flat = " ".join(text.split())
    return flat if len(flat) <= 80 else flat[:77] + "..."
