"""Every error code the service or an engine can answer is in the one catalogue."""

from __future__ import annotations

import re
from pathlib import Path

from shared.app.errors import CATALOGUE, ErrorCode, status_of
from shared.games import errors as rules

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(
    r'"((?:move|game|seat|fairness|command|options|auth|request|http|service|server|bot|turn|tournament)/[a-z_]+)"'
)


def test_every_code_spelled_in_the_code_is_catalogued() -> None:
    spelled = set()
    for path in [*ROOT.glob("shared/**/*.py"), *ROOT.glob("services/**/*.py")]:
        spelled |= set(CODE.findall(path.read_text()))
    assert spelled, "the pattern found nothing: it is broken"
    known = {c.value for c in ErrorCode}
    assert spelled <= known, sorted(spelled - known)


def test_engine_codes_are_catalogued_with_their_statuses() -> None:
    for code, status in [
        (rules.ILLEGAL, 422),
        (rules.NOT_YOUR_TURN, 422),
        (rules.GAME_OVER, 409),
        (rules.INVALID_COMMAND, 422),
        (rules.INVALID_OPTIONS, 422),
    ]:
        assert status_of(code) == status
    assert status_of("no/such") == 500
    assert all(100 <= s < 600 and title for s, title in CATALOGUE.values())
