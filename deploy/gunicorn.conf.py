"""gunicorn settings for the gateway.

Threads, because a request that waits for its command's outcome (``Prefer: wait``) blocks on
Redis; the GIL is released while it waits.
"""

import os

worker_class = os.environ.get("GATEWAY_WORKER_CLASS", "gthread")
workers = int(os.environ.get("GATEWAY_WORKERS", "2"))
threads = int(os.environ.get("GATEWAY_THREADS", "16"))
timeout = 60
graceful_timeout = 10
keepalive = 30
accesslog = os.environ.get("GATEWAY_ACCESS_LOG") or None
# gunicorn's control socket would be one file in the home directory shared by every stack on
# the machine; nothing here uses gunicornctl.
control_socket_disable = True
