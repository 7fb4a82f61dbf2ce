"""The admin surface under ``/admin``: the bearer-token JSON API (documented by OpenAPI, one error shape)
and the console for the browser (sign in with the admin token; overview, conversations, persons and memory,
pairing, skills, audit log).

Public surface: ``admin_app`` (the ASGI app the HTTP app mounts), ``AdminBackend`` (what it reads and
changes) and ``PairingBook``.
"""

from gateway.http.admin.app import admin_app
from gateway.http.admin.backend import AdminBackend, PairingBook

__all__ = ["AdminBackend", "PairingBook", "admin_app"]
