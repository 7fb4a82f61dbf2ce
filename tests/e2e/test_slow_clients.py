"""Half-sent requests (slowloris) against a real ``mnemogate serve`` whose open-file limit is low."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx

from tests.e2e.gateway_process import free_port, start, stop, wait_healthy

_OPEN_FILES = 256  # the child's RLIMIT_NOFILE (a systemd service's default is 1,024)
_SLOW_CLIENTS = 320  # more than the process could hold open
_HALF_SENT = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: "


def test_more_half_sent_requests_than_open_files_leave_the_gateway_answering(home: Path) -> None:
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    process = start(home, "serve", "--port", str(port), open_files=_OPEN_FILES)
    slow: list[socket.socket] = []
    try:
        wait_healthy(base_url, process)
        for _ in range(_SLOW_CLIENTS):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            slow.append(sock)
            sock.sendall(_HALF_SENT)
        with httpx.Client(base_url=base_url, timeout=5) as client:
            assert client.get("/healthz").json() == {"status": "ok"}
            assert client.get("/readyz").status_code == 200
            posted = client.post(
                "/api/chat/messages", json={"text": "still there?", "client_message_id": "s1"}
            )
            assert posted.status_code == 200 and posted.json()["accepted"] is True
        assert process.poll() is None
    finally:
        for sock in slow:
            sock.close()
        out = stop(process)
    # One line per refused socket would be hundreds of lines; the gateway writes a handful in all.
    assert len(out.splitlines()) < 40 and len(out) < 20_000, out[-4000:]
