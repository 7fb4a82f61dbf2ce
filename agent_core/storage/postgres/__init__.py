"""The agent's tables on PostgreSQL: the engine (pool, transactions), the schema ladder and the repositories.

Only this package (and ``gateway/storage/postgres``) imports psycopg or holds SQL for PostgreSQL.
"""

from .engine import PgDatabase, PostgresUnavailableError
from .settings import PostgresSettings

__all__ = ["PgDatabase", "PostgresSettings", "PostgresUnavailableError"]
