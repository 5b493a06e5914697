"""The static analysis, bottom up:

- ``index`` / ``project``: each file's imports, classes and functions, and which linted file is which module;
- ``code_facts``: what a piece of code means for export from its syntax alone (guards, training-only
  arms, settings and their defaults, export-mode predicates);
- ``values`` / ``dims`` / ``torchapi``: the abstract values (tensor, size, data-dependent scalar,
  constant), which dims are static or data-dependent, and what torch's functions do to them;
- ``frames`` / ``binding`` / ``conditions`` / ``calls`` / ``dataflow``: the interpreter that walks
  export-reachable code from each exported ``forward`` (call frames; parameters and class attributes;
  tests and narrowing; calls; statements and expressions) and hands ``events`` to the rules.
"""
