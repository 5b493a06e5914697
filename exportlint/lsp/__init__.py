"""exportlint's language server (``exportlint lsp``); see :mod:`exportlint.lsp.server`.

Importing this package costs nothing: pygls and lsprotocol are imported by the server module and
the modules it uses (``protocol``: JSON-RPC per the specification, ``features``: code actions and
hover); ``framing`` (message bodies off the wire) and ``scheduler`` (when to lint) need neither.
"""
