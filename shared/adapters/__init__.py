"""Adapters: the ports of ``shared.app.ports`` in memory (tests, tools) and on Redis."""
