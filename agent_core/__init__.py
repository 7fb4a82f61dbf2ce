"""The agent: state store, memory, prompt, models, tools, compression, search, providers.

agent_core imports neither ``gateway`` nor ``adapters`` (enforced by import-linter).
"""
