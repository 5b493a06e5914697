"""Fixes: the edits a finding carries, and applying them to source text.

* :mod:`.model` — :class:`Fix` / :class:`Edit`, the shape of ``Diagnostic.fix``
  (``{"message", "applicability", "edits": [{line, column, end_line, end_column, content}]}``,
  1-based, end exclusive, columns in code points) and which fixes a run may apply.
* :mod:`.syntax` — what a rule's fix producer needs from the libcst tree (parents, the
  enclosing statement and function, names assigned, text of the replacement).
* :mod:`.apply` — applying fixes to a text: non-overlapping, re-parsed, idempotent.
* :mod:`.produce` — running a kept finding's producer into ``Diagnostic.fix`` data.
* :mod:`.driver` — fixing files to a fixed point, ``--add-noqa``, ``fix_text`` (in memory).
* :mod:`.command` — the command line's ``--fix`` / ``--fix-only`` / ``--diff`` / ``--add-noqa``.

The rules' producers are in :mod:`exportlint.rules.fixers` and :mod:`exportlint.rules.fixers_control`;
the editor gets each fix as LSP edits in its diagnostic's data (``exportlint.reporters.lsp.fix_edits``),
which the language server's code actions apply (``exportlint.lsp.features``).
"""

from exportlint.fixes.model import DISPLAY_ONLY, SAFE, UNSAFE, Edit, Fix, FixPolicy

__all__ = ["DISPLAY_ONLY", "SAFE", "UNSAFE", "Edit", "Fix", "FixPolicy"]
