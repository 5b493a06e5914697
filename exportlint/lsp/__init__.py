"""exportlint's language server (``exportlint lsp``); see :mod:`exportlint.lsp.server`.

Importing this package costs nothing: pygls and lsprotocol are imported by the server module only.
"""
