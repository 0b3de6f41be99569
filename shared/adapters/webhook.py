"""``WebhookSender`` over plain sockets: one POST to a registered bot, within a deadline.

Why not an HTTP library: the deadline must hold for the whole exchange (a bot that drips its
answer a byte at a time must not outlast it), redirects must never be followed, at most
``MAX_ANSWER_BYTES`` of an answer may be read, and the address connected to must be the one
checked against the allow-list (a name that resolves elsewhere between the check and the
connection — DNS rebinding — must not reach another host). A few dozen lines of HTTP/1.1 over a
socket whose every read waits at most the time left do all four. Under Celery's gevent pool
the sockets are gevent's, so many bots are waited on at once in one process.
"""

from __future__ import annotations

import functools
import ipaddress
import socket
import ssl
import time
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import urlsplit

from shared.app.ports import SERVICE_FAILURE, WebhookAnswer

DEFAULT_HOSTS = ("127.0.0.1", "localhost", "::1")
MAX_ANSWER_BYTES = 64 * 1024  # of an answer's body
MAX_HEAD_BYTES = 16 * 1024  # of its status line and headers

Resolve = Callable[[str, int], list[str]]


def resolve_host(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (empty when it does not)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return sorted({str(info[4][0]) for info in infos})


def _address(text: str) -> str | None:
    """``text`` as a normal IP address, or None when it is a name."""
    try:
        return str(ipaddress.ip_address(text.strip("[]").split("%")[0]))
    except ValueError:
        return None


class HttpWebhooks:
    """``WebhookSender`` allowed to reach the hosts of ``hosts`` (names or addresses,
    ``TABLETOP_BOT_WEBHOOK_HOSTS``), and only at the addresses listed there: a listed name
    is used only while every address it resolves to is listed too."""

    def __init__(self, hosts: Iterable[str] = DEFAULT_HOSTS, resolve: Resolve = resolve_host):
        self.hosts = tuple(h.strip().lower().strip("[]") for h in hosts if h.strip())
        self._resolve = resolve

    def _allowed_addresses(self) -> set[str]:
        # The listed addresses alone: a listed name must resolve to listed addresses, so a
        # name re-pointed elsewhere (DNS rebinding, a hijacked record) is refused.
        return {a for a in map(_address, self.hosts) if a is not None}

    def target(self, url: str) -> tuple[str, str, int, str, list[str]] | str:
        """(scheme, host, port, path with query, the addresses to connect to), or why the
        URL is refused: another scheme, credentials, a host not listed, or a name that
        resolves (also) to an address not listed."""
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            return "not a URL"
        if parts.scheme not in ("http", "https"):
            return "the scheme must be http or https"
        if parts.username is not None or parts.password is not None:
            return "a webhook URL carries no credentials"
        host = (parts.hostname or "").lower()
        if not host or host not in self.hosts:
            return f"host {host!r} is not one of TABLETOP_BOT_WEBHOOK_HOSTS"
        port = port or (443 if parts.scheme == "https" else 80)
        literal = _address(host)
        addresses = (
            [literal] if literal else [_address_or_self(a) for a in self._resolve(host, port)]
        )
        if not addresses:
            return f"host {host!r} does not resolve"
        allowed = self._allowed_addresses()
        outside = [a for a in addresses if a not in allowed]
        if outside:
            return f"host {host!r} resolves to {', '.join(outside)}, outside the allowed hosts"
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        return parts.scheme, host, port, path, addresses

    def refusal(self, url: str) -> str | None:
        """Why ``url`` may not be a webhook (None: it may)."""
        found = self.target(url)
        return found if isinstance(found, str) else None

    def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout_s: float
    ) -> WebhookAnswer:
        """See ``WebhookSender.post``. A timeout is ``service`` (not the bot's) when this
        process, not the bot, spent the budget: it began connecting, or finished sending,
        past half the budget (its own resolution or a starved event loop came first). An
        answer already received when this process gets round to reading it past the
        deadline (it was starved meanwhile) is taken, not charged to the bot."""
        started = time.monotonic()
        deadline = started + timeout_s
        marks: dict[str, float] = {}

        def answer(status: int | None, data: bytes, failure: str | None) -> WebhookAnswer:
            now = time.monotonic()
            if failure == "timeout" and _own_delay(started, now, marks, timeout_s):
                failure = SERVICE_FAILURE
            return WebhookAnswer(status, data, failure, round((now - started) * 1000))

        found = self.target(url)  # checked again: a name may resolve elsewhere by now
        if isinstance(found, str):
            return answer(None, b"", "error")
        scheme, host, port, path, addresses = found
        marks["connect"] = time.monotonic()
        try:
            sock = _connect(addresses, port, deadline)
        except TimeoutError:
            return answer(None, b"", "timeout")
        except OSError:
            return answer(None, b"", "unreachable")
        try:
            if scheme == "https":
                sock.settimeout(_left(deadline))
                sock = _tls().wrap_socket(sock, server_hostname=host)
            head = [f"POST {path} HTTP/1.1", f"Host: {_host_header(host, port, scheme)}",
                    f"Content-Length: {len(body)}", "Connection: close",
                    "User-Agent: tabletop-bots"]  # fmt: skip
            head += [f"{k}: {v}" for k, v in headers.items()]
            sock.settimeout(_left(deadline))
            sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
            marks["sent"] = time.monotonic()
            status, data = _read_answer(sock, deadline)
        except TimeoutError:
            return answer(None, b"", "timeout")
        except _TooLarge:
            return answer(None, b"", "error")
        except (OSError, ValueError):
            return answer(None, b"", "error")
        finally:
            sock.close()
        return answer(status, data, None)


def _own_delay(started: float, now: float, marks: Mapping[str, float], budget_s: float) -> bool:
    """Whether a timeout is this process's doing (see ``HttpWebhooks.post``): a bot that
    accepts slowly or answers late is given its budget from the first connect on."""
    began = marks.get("sent", marks.get("connect", now))
    return began - started > budget_s / 2


@functools.cache
def _tls() -> ssl.SSLContext:
    # Made once per process: a default context loads the system's CA certificates, far more
    # work than a turn's handshake should add.
    return ssl.create_default_context()


def _address_or_self(text: str) -> str:
    return _address(text) or text


def _host_header(host: str, port: int, scheme: str) -> str:
    shown = f"[{host}]" if ":" in host else host
    default = 443 if scheme == "https" else 80
    return shown if port == default else f"{shown}:{port}"


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the bot's budget is spent")
    return left


def _connect(addresses: list[str], port: int, deadline: float) -> socket.socket:
    """A connection to the first of ``addresses`` (literal addresses, checked against the
    allow-list) that answers before ``deadline``.

    The socket is opened on the address itself rather than by ``socket.create_connection``,
    which resolves even a literal address again with ``getaddrinfo``: under gevent that goes
    through its thread pool on every turn. Connecting to the literal also means nothing but
    the checked address can be reached."""
    last: OSError = OSError("no address")
    for address in addresses:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(_left(deadline))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.connect((address, port))
            return sock
        except TimeoutError:
            sock.close()
            raise
        except OSError as exc:
            sock.close()
            last = exc
    raise last


class _TooLarge(Exception):
    """An answer past ``MAX_ANSWER_BYTES`` (or headers past ``MAX_HEAD_BYTES``)."""


def _read_answer(sock: socket.socket, deadline: float) -> tuple[int, bytes]:
    """(status, body) of an HTTP/1.1 answer, every read bounded by the time left."""
    data = b""
    head: bytes | None = None
    while True:
        if head is None:
            end = data.find(b"\r\n\r\n")
            if end >= 0:
                head, data = data[:end], data[end + 4 :]
            elif len(data) > MAX_HEAD_BYTES:
                raise _TooLarge
        if head is not None:
            status, length, chunked = _parse_head(head)
            if length is not None and length > MAX_ANSWER_BYTES:
                raise _TooLarge
            if len(data) > MAX_ANSWER_BYTES + (4096 if chunked else 0):
                raise _TooLarge
            if length is not None and len(data) >= length:
                return status, data[:length]
            if chunked and (whole := _dechunk(data)) is not None:
                return status, whole
        more = _recv(sock, deadline)
        if not more:
            if head is None:
                raise ValueError("the connection closed before an answer")
            if length is None and not chunked:
                return status, data
            raise ValueError("the answer was cut short")
        data += more


def _recv(sock: socket.socket, deadline: float) -> bytes:
    """What the bot sent next, waiting at most until ``deadline``; past it, only what has
    arrived already (so an answer that came while this process was busy elsewhere is read)."""
    left = deadline - time.monotonic()
    if left > 0:
        sock.settimeout(left)
        return sock.recv(65536)
    sock.settimeout(0)
    try:
        return sock.recv(65536)
    except (BlockingIOError, InterruptedError) as exc:
        raise TimeoutError("the bot's budget is spent") from exc


def _parse_head(head: bytes) -> tuple[int, int | None, bool]:
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    if not version.startswith("HTTP/1."):
        raise ValueError("not an HTTP/1 answer")
    status = int(rest[:3])
    length: int | None = None
    chunked = False
    for line in lines[1:]:
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if name == "content-length":
            length = int(value.strip())
        elif name == "transfer-encoding" and "chunked" in value.lower():
            chunked = True
    return status, (None if chunked else length), chunked


def _dechunk(data: bytes) -> bytes | None:
    """A chunked body decoded, or None while its last chunk has not come."""
    out = b""
    at = 0
    while True:
        end = data.find(b"\r\n", at)
        if end < 0:
            return None
        size = int(data[at:end].split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return out
        start = end + 2
        if len(data) < start + size + 2:
            return None
        out += data[start : start + size]
        if len(out) > MAX_ANSWER_BYTES:
            raise _TooLarge
        at = start + size + 2
