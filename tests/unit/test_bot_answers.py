"""Whatever a registered bot answers ends its turn in its command or a recorded fallback, in
bounded time (issue 35): deep nesting (which made the standard decoder raise RecursionError
and stalled the game, its turn sent again every 20 s), huge numbers, odd unicode, duplicate
keys, wrong types. Thrown at the real answer path (``remote.play_remote_move`` through
``answer_command``) of a whole game."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.app import queries, remote
from shared.app.ports import WebhookAnswer
from tests.unit.test_registered_bots import app_with, log_of, play_fox, register, registered_moves

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def _nested(depth: int, opener: str = "[") -> bytes:
    closer = "]" if opener == "[" else "}"
    inner = '{"a":' * depth if opener == "{" else "[" * depth
    tail = "}" * depth if opener == "{" else closer * depth
    return f'{{"command": {inner}1{tail}}}'.encode()


ATTACKS = [
    _nested(5000),  # ~10 KB, under the 64 KiB cap: RecursionError in json.loads
    _nested(3000, "{"),
    b'{"command": {"type": "play", "card": ' + b"9" * 5000 + b"}}",
    b'{"command": {"type": "play", "card": 1e999}}',
    b'{"command": {"type": "play", "card": NaN}}',
    b'{"command": {"type": "play", "type": "play", "card": "\\ud800"}}',
    b'{"command": {"type": {"play": []}, "card": [[[[[[[[[[[[1]]]]]]]]]]]]}}',
    b"\xff\xfe not utf-8",
    b'{"command": {"type": "play", "card": "B1"}, "extra": [1, 2, 3]}',
]


def _bot(raw: bytes) -> Any:
    def answer(doc: dict[str, Any]) -> WebhookAnswer:
        return WebhookAnswer(200, raw, None, 3)

    return answer


def _ends_in_recorded_turns(raw: bytes) -> None:
    app, hooks = app_with(_bot(raw))
    gid = play_fox(app, register(app)["id"])
    public = queries.view(app, gid, None)
    assert public is not None and public["outcome"] is not None, "the game stalled"
    moves = registered_moves(log_of(app, gid))
    turns = [b for _, b, _, _ in hooks.sent if json.loads(b)["type"] == "turn"]
    assert moves and len(moves) == len(turns)
    for move in moves:
        assert move["command"]["bot_turn"]["failure"] in (None, "illegal"), move["command"]


def test_the_attacks_seen_end_in_a_recorded_fallback() -> None:
    for raw in ATTACKS:
        _ends_in_recorded_turns(raw)


def test_a_deep_answer_is_refused_without_recursion() -> None:
    assert remote.untrusted_command(_nested(100_000)) is None
    assert remote.untrusted_command(_nested(9)) is None  # deeper than any command
    assert remote.untrusted_command(b'{"command": {"type": "pass"}}') == {"type": "pass"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(command=json_values, extra=json_values)
def test_any_json_answer_ends_in_a_command_or_a_recorded_fallback(command: Any, extra: Any) -> None:
    raw = json.dumps({"command": command, "x": extra}).encode()
    _ends_in_recorded_turns(raw)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(raw=st.binary(max_size=256) | st.text(max_size=256).map(str.encode))
def test_any_bytes_end_in_a_command_or_a_recorded_fallback(raw: bytes) -> None:
    _ends_in_recorded_turns(raw)
