"""The service: contracts, inbound pipeline, turn queue, workers, delivery, HTTP, CLI and wiring."""
