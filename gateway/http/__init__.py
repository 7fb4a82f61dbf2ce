"""The one HTTP server (FastAPI + uvicorn): health now; web chat, webhooks, metrics and admin later."""

from gateway.http.app import create_app
from gateway.http.server import serve_http

__all__ = ["create_app", "serve_http"]
