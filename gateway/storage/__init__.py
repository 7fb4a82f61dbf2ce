"""The gateway's storage port: the repositories of the gateway's own data (queue, ledger, outbox, identity,
pairing, adapter checkpoints, admin reads), defined here and implemented by each backend package beside it.
"""
