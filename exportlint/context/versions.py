"""Which torch the export runs on (without importing it), and what that changes."""

from __future__ import annotations

from functools import lru_cache

LATEST_KNOWN = "2.13"


@lru_cache(maxsize=1)
def installed_torch() -> str | None:
    """The installed torch's version from its metadata (torch is never imported)."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version("torch")
    except (ImportError, PackageNotFoundError, ValueError):
        return None


def effective(torch_version: str | None) -> str:
    """The version the export is judged for: configured, else installed, else the latest known."""
    return torch_version or installed_torch() or LATEST_KNOWN


def dynamo_default(torch_version: str | None) -> bool:
    """``torch.onnx.export``'s ``dynamo=`` default in that torch (the measured table's answer)."""
    from exportlint.data import dynamo_default as measured

    return bool(measured(effective(torch_version)))
