"""exportlint: find PyTorch model code that breaks or silently corrupts model export."""

__version__ = "0.1.0"
