"""The application core: ports, the match aggregate, handlers and queries.

Above the adapters nothing here imports ``redis``, ``flask`` or ``celery``: handlers take a
``Ports`` bundle and queries read through it, so every capability is tested on the in-memory
adapters alone and runs unchanged on Redis.
"""
