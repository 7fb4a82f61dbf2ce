"""Erasure of one person: everything the deployment stored about them deleted, one audit record left.

Public surface: ``PersonEraser`` (the service the CLI, the admin API and the console share), its
``ErasureReport`` and ``UnknownPersonError``.
"""

from .eraser import PersonEraser
from .report import ErasureReport, UnknownPersonError

__all__ = ["ErasureReport", "PersonEraser", "UnknownPersonError"]
