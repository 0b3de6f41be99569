"""The event store port and its adapters (in memory, Redis streams)."""

from shared.store.port import AppendResult, DuplicateCommand, EventStore, StaleVersion

__all__ = ["AppendResult", "DuplicateCommand", "EventStore", "StaleVersion"]
