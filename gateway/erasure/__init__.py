"""Erasure of one person: everything the deployment stored about them deleted, one audit record left.

Public surface: ``PersonEraser`` (the service the CLI, the admin API and the console share), its
``ErasureReport``, ``UnknownPersonError`` and ``ProviderNotClearedError``.
"""

from .eraser import PersonEraser
from .report import ErasureReport, ProviderNotClearedError, UnknownPersonError

__all__ = ["ErasureReport", "PersonEraser", "ProviderNotClearedError", "UnknownPersonError"]
