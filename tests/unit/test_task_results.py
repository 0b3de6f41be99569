"""The application answers in typed results (``Finalized``, ``RemoteMove``, ``Hinted``); the
Celery tasks and the registered bots' worker turn them into plain words at their boundary,
the words they returned before (``ok``, ``not over``, ``late``, a command id)."""

from __future__ import annotations

import json

import pytest

from services.bots import tasks
from shared.app import creation, finalize, searches
from shared.app.context import App
from shared.bootstrap import bootstrap
from shared.config import Settings


@pytest.fixture
def app(monkeypatch: pytest.MonkeyPatch) -> App:
    app = bootstrap(Settings(), backend="memory")
    monkeypatch.setattr(tasks, "_application", lambda: app)
    return app


def test_scoring_answers_in_a_type_and_its_task_in_the_word_it_returned(app: App) -> None:
    gid = creation.create_game(app, "fox", [{"bot": "random"}] * 2, {"target": 1}).game_id
    assert finalize.finalize_game(app, gid) is finalize.Finalized.NOT_OVER
    assert json.dumps(tasks.finalize(gid)) == '"not over"'


def test_a_hint_too_late_is_late_and_its_task_says_so(app: App) -> None:
    gid = creation.create_game(app, "fox", [{"bot": "random"}] * 2, {"target": 1}).game_id
    request = {"game_id": gid, "seat": 0, "hint_id": "h1", "owner": "o", "deadline": 0.0,
               "spec": {}}  # fmt: skip
    assert searches.answer_hint(app, request) is searches.Hinted.LATE
    assert tasks.hint(request) == "late"


def test_a_registered_bots_turn_is_logged_and_returned_as_a_word(app: App) -> None:
    assert tasks.remote_move("nope", 0, 1) == "no such game"
