"""Loopback fakes of the external memory services (product code: tests and benches use them).

Each fake is an async context manager on 127.0.0.1 with an OS-assigned port that implements the
endpoints the real SDK calls, records every call, and can be told to fail or hang.
"""

from .honcho_server import FakeHonchoServer
from .mem0_server import FakeMem0Server
from .recorder import ProviderCall, RecordingServer, Reply

__all__ = ["FakeHonchoServer", "FakeMem0Server", "ProviderCall", "RecordingServer", "Reply"]
