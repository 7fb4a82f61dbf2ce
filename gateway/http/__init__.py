"""The one HTTP server (FastAPI + uvicorn): web chat, health, metrics, admin API, OpenAI-compatible API."""

from gateway.http.access import BearerGuard, check_exposure, is_loopback
from gateway.http.admin import AdminBackend, PairingBook
from gateway.http.app import create_app
from gateway.http.errors import AdminExposureError
from gateway.http.metrics import Metrics
from gateway.http.readiness import Probe, Readiness, ReadinessCheck, adapters_probe
from gateway.http.server import serve_http
from gateway.http.webchat_routes import COOKIE

__all__ = [
    "COOKIE",
    "AdminBackend",
    "AdminExposureError",
    "BearerGuard",
    "Metrics",
    "PairingBook",
    "Probe",
    "Readiness",
    "ReadinessCheck",
    "adapters_probe",
    "check_exposure",
    "create_app",
    "is_loopback",
    "serve_http",
]
