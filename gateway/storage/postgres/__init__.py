"""The gateway's tables on PostgreSQL, and ``PostgresStorage``: every repository of the port on one database.

Only this package (and ``agent_core/storage/postgres``) imports psycopg or holds SQL for PostgreSQL.
"""
