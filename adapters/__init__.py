"""Platform adapters, one sub-package per platform; they depend only on ``gateway.contracts``."""
