"""gunicorn settings for the gateway.

gevent workers by default (``GATEWAY_WORKER_CLASS=gthread`` for threads): a request that waits
for its command's outcome (``Prefer: wait``) or holds a live feed open blocks on Redis, and a
greenlet per such request costs far less than a thread.
"""

import os


def _default_worker_class() -> str:
    # gevent: a live feed (Server-Sent Events) or a `Prefer: wait` then holds a greenlet, not
    # one of a few threads, so thousands stay open while other requests are answered at once.
    try:
        import gevent  # noqa: F401
    except ImportError:
        return "gthread"
    return "gevent"


worker_class = os.environ.get("GATEWAY_WORKER_CLASS") or _default_worker_class()
worker_connections = int(os.environ.get("GATEWAY_CONNECTIONS", "4000"))
workers = int(os.environ.get("GATEWAY_WORKERS", "2"))
threads = int(os.environ.get("GATEWAY_THREADS", "16"))
timeout = 60
graceful_timeout = 10
keepalive = 30
accesslog = os.environ.get("GATEWAY_ACCESS_LOG") or None
# gunicorn's control socket would be one file in the home directory shared by every stack on
# the machine; nothing here uses gunicornctl.
control_socket_disable = True
# The request line without its query string: a live feed's `?access_token=` never reaches a log.
access_log_format = '%(h)s %(l)s %(u)s %(t)s "%(m)s %(U)s %(H)s" %(s)s %(b)s "%(f)s" "%(a)s"'
