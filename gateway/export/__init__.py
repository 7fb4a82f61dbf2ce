"""Export of one person: everything stored about them as one zip archive (JSON, JSON Lines and their memory
files), read through the storage port so it works the same on every backend.

Public: ``PersonExporter`` (writes an archive), ``ExportSummary`` (what it wrote), ``FORMAT_VERSION`` and the
errors ``ExportError`` (base), ``UnknownPersonError``, ``ExportTargetError``.
"""

from .errors import ExportError, ExportTargetError, UnknownPersonError
from .layout import FORMAT_NAME, FORMAT_VERSION
from .person_archive import ExportSummary, PersonExporter

__all__ = [
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "ExportError",
    "ExportSummary",
    "ExportTargetError",
    "PersonExporter",
    "UnknownPersonError",
]
