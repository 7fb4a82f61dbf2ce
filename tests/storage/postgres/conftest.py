"""The loopback proxy PostgreSQL-trouble tests put between the gateway and the server."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from psycopg.conninfo import conninfo_to_dict

from .tcp_proxy import TcpProxy


@pytest.fixture
async def proxy(postgres_database: str) -> AsyncIterator[TcpProxy]:
    """A proxy to the test server, listening; the test cuts, refuses and accepts connections."""
    server = conninfo_to_dict(postgres_database)
    async with TcpProxy(str(server.get("host", "127.0.0.1")), int(server.get("port", 5432))) as started:
        yield started
