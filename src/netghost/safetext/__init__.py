"""netghost.safetext: untrusted text (a model's, a tool's) made safe for the medium it is shown in.

Every string from a model or a tool is hostile wherever it goes. The redactor (:mod:`netghost.redact`)
takes the secrets out; this package takes the power out: on a terminal every control, escape
sequence, bidi and zero-width character is shown as an escape (:func:`visible`, and the console hook
:func:`guard_console` that nothing printed can bypass); in Markdown the text can open no construct
(:func:`md_inline`, :func:`md_block`, :func:`md_code`, :func:`md_fence`). HTML is escaped with the
standard library's ``html.escape`` over :func:`visible`; the reports' own inline Markdown becomes HTML
through :func:`md_inline_html`, which reads the escapes back and makes nothing but code and bold. Like the redactor it depends on nothing else
in netghost, so every layer may use the one implementation. Inside: ``_terminal`` (the hidden-character
table and the escapes), ``_markdown`` (Markdown by construction), ``_html`` (our inline Markdown to HTML), ``_console`` (the rich
hook), ``_wrap`` (a console line folded between words at a terminal's width).
"""

from netghost.safetext._console import VisibleHook, guard_console
from netghost.safetext._html import md_inline_html
from netghost.safetext._markdown import MD_SIGNIFICANT, md_block, md_code, md_fence, md_inline
from netghost.safetext._terminal import HIDDEN, is_hidden, show_hidden, visible
from netghost.safetext._wrap import fold_offsets, print_folded

__all__ = [
    "HIDDEN",
    "MD_SIGNIFICANT",
    "VisibleHook",
    "fold_offsets",
    "guard_console",
    "is_hidden",
    "md_block",
    "md_code",
    "md_fence",
    "md_inline",
    "md_inline_html",
    "print_folded",
    "show_hidden",
    "visible",
]
