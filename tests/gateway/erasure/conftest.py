"""The erasure tests run on every backend: the contract suite's ``backend`` and ``storage`` fixtures."""

from tests.storage.contract.conftest import backend, storage

__all__ = ["backend", "storage"]
