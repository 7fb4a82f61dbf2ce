"""The SQLite backend of the gateway's repositories: every SQL statement over its tables in state.db.

Public surface: ``open_state_store`` (state.db with the agent's and the gateway's ladders) and the ladder.
"""

from .backend import SqliteStorage, open_state_store
from .schema import GATEWAY_LADDER

__all__ = ["GATEWAY_LADDER", "SqliteStorage", "open_state_store"]
