"""The web page in a real headless Chromium (Debian's ``chromium`` driven by Playwright), on
the real stack (``tabletop run``: redis-server, gunicorn, a worker per game, Celery bots).

Scenarios, each by clicking as a person would: a whole Fox game against the random bot; a
Skull round, and a challenge failed on one's own skull (the discard, the lost disc); prices,
a refused price, buying and placing a tile in Isle of Skye; taking an open seat from the
lobby; watching a game update live (and fetching nothing a spectator may not read); a clock
counting down and resigning; replaying a finished game of each kind and verifying it with the audit's
JavaScript verifier; a tournament's page (asking for the organizer's key, its standings,
ratings, head-to-head heatmap and SPRT chart, refreshing while it runs); a registered bot's
page with its stats. No test may leave an error in the browser's console, and every control
on a screenshot has a name a screen reader reads.

Screenshots go to ``build/screenshots/`` (ignored by git); ``SCREENSHOTS=docs/screenshots``
refreshes the README's pictures. ``make test`` installs chromium with apt-get when it is
missing; without it these tests are skipped, saying so.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

import pytest
import requests

from shared.redis_server import free_port
from tests.e2e.conftest import BROWSER_ORGANIZER_KEY as ORGANIZER_KEY

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
SHOTS = ROOT / os.environ.get("SCREENSHOTS", "build/screenshots")
DEADLINE_MS = 30_000  # a generous wait for any one condition on a busy 2-core machine

if not Path(CHROMIUM).exists():
    pytest.skip(
        "chromium is not installed (make test installs it with apt-get: apt-get install chromium)",
        allow_module_level=True,
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is a dev extra")
expect = sync_api.expect
expect.set_options(timeout=DEADLINE_MS)


@pytest.fixture(scope="module")
def base_url(browser_stack_url: str) -> str:
    """The whole stack (``tabletop run``), shared with tests/e2e/test_invite_link.py
    (tests/e2e/conftest.py): every scenario here opens games of its own."""
    return browser_stack_url


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        # Debian's chromium, never a browser Playwright downloads (`playwright install`).
        launched = p.chromium.launch(executable_path=CHROMIUM)
        yield launched
        launched.close()


class Console:
    """The page's console errors and uncaught exceptions, and every request it sent; a test
    may allow expected errors (a refused move's 422 is logged as a failed resource)."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.requests: list[Any] = []
        self.allowed: list[re.Pattern[str]] = []

    def on_message(self, message: Any) -> None:
        if message.type == "error":
            self.errors.append(message.text)

    def on_exception(self, error: Any) -> None:
        self.errors.append(f"uncaught: {error}")

    def on_request(self, request: Any) -> None:
        self.requests.append(request)

    def allow(self, pattern: str) -> None:
        self.allowed.append(re.compile(pattern))

    def unexpected(self) -> list[str]:
        return [e for e in self.errors if not any(p.search(e) for p in self.allowed)]


@pytest.fixture
def console() -> Console:
    return Console()


@pytest.fixture
def open_page(browser: Any, base_url: str, console: Console) -> Iterator[Callable[..., Any]]:
    """``open_page(path, width=1100)``: a page in a fresh context (its own sessionStorage),
    with its console watched; at the end, no unexpected console error."""
    contexts = []

    def _open(path: str, width: int = 1100) -> Any:
        context = browser.new_context(viewport={"width": width, "height": 900}, base_url=base_url)
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(DEADLINE_MS)
        page.on("console", console.on_message)
        page.on("pageerror", console.on_exception)
        page.on("request", console.on_request)
        page.goto(path)
        return page

    yield _open
    for context in contexts:
        context.close()
    assert console.unexpected() == [], console.unexpected()


def shot(page: Any, name: str) -> None:
    """Save a screenshot; first, every control shown must have a name a screen reader reads."""
    unnamed = page.locator("button, input, select, a").evaluate_all(
        """els => els.filter(e => !(e.ariaLabel || e.labels?.length || e.textContent.trim()
                                    || e.title)).map(e => e.outerHTML.slice(0, 80))"""
    )
    assert unnamed == [], unnamed
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def version_of(page: Any, selector: str = ".game") -> int:
    return int(page.locator(selector).get_attribute("data-version") or 0)


def click_and_wait(page: Any, target: Any, *, keyboard: bool = False) -> None:
    """Click (or focus and press Enter), then wait until the board shows a later version: the
    next click sees the answer, never the view it was sent from."""
    before = version_of(page)
    if keyboard:
        target.focus()
        page.keyboard.press("Enter")
    else:
        target.click()
    page.wait_for_function(
        "v => Number(document.querySelector('.game').dataset.version) > v", arg=before
    )


def create_form(page: Any, game: str, seats: list[str], options: dict[str, str]) -> None:
    """Fill the new-game form: the game, each seat's kind, the options; start it."""
    page.get_by_label("Game", exact=True).select_option(game)
    page.get_by_label("Players", exact=True).select_option(str(len(seats)))
    for i, kind in enumerate(seats):
        page.get_by_label(f"Seat {i}", exact=True).select_option(kind)  # the API's numbering
    for name, value in options.items():
        field = page.locator(f"#opt-{name}")
        if field.evaluate("e => e.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)
    page.get_by_role("button", name="Start the game").click()


def api_game(base_url: str, body: dict[str, Any]) -> dict[str, Any]:
    created = requests.post(f"{base_url}/v1/games", json=body, timeout=10)
    assert created.status_code == 201, created.text
    doc: dict[str, Any] = created.json()
    return doc


def wait_finished(base_url: str, gid: str, seconds: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        view: dict[str, Any] = requests.get(f"{base_url}/v1/games/{gid}", timeout=10).json()
        if view["outcome"] is not None:
            return view
        time.sleep(0.2)  # bots play through Celery: a condition polled, with a deadline
    pytest.fail(f"game {gid} did not finish")


def test_a_whole_fox_game_against_the_random_bot_by_clicking(open_page: Any) -> None:
    page = open_page("/#/new")
    page.get_by_label("Your name").fill("ana")
    create_form(page, "fox", ["you", "random"], {"target": "1"})
    expect(page.locator(".game")).to_have_attribute("data-phase", re.compile(r"\w"))
    playable = page.locator(
        ".hand button.card:enabled, button:text('Keep the decree card'):enabled"
    )
    over = page.locator(".result")
    clicks = 0
    reloaded = False
    while True:
        expect(playable.first.or_(over).first).to_be_visible()
        if over.is_visible():
            break
        if clicks == 4 and not reloaded:
            # The seat's token is kept in the tab: a reload resumes the game.
            page.reload()
            reloaded = True
            continue
        if clicks == 3:
            shot(page, "fox")
        click_and_wait(page, playable.first, keyboard=clicks == 1)  # once by the keyboard
        clicks += 1
    assert clicks >= 13  # a round is 13 tricks; Fox and Woodcutter add choices
    expect(page.locator(".status")).to_contain_text("Game over")
    expect(page.get_by_role("link", name="Replay and verify this game")).to_be_visible()
    shot(page, "fox-over")


def test_a_skull_round_by_clicking(open_page: Any) -> None:
    page = open_page("/#/new")
    create_form(page, "skull", ["you", "random", "random"], {"first_player": "0"})
    info = page.locator(".board.skull .info")
    expect(info).to_contain_text("Round 1")
    actions = page.locator(".board.skull button:enabled")
    round_over = page.locator(".board.skull .info:not(:has-text('Round 1'))").or_(
        page.locator(".result")
    )
    flipped = False
    while True:
        expect(actions.first.or_(round_over).first).to_be_visible()
        if round_over.is_visible():
            break
        flips = page.locator(".player button:enabled")
        bids = page.locator(".bids button:enabled")
        place = page.get_by_role("button", name="Place a flower")
        if flips.count():
            click_and_wait(page, flips.first)
            if not flipped:
                shot(page, "skull")
            flipped = True
        elif bids.count():
            # Bid everything on the table: the bidding ends at once and this seat flips.
            click_and_wait(page, bids.last)
        elif place.count() and place.is_enabled():
            click_and_wait(page, place)
        else:
            click_and_wait(page, actions.first)  # a pass
    assert flipped
    expect(page.locator(".board.skull .players .player")).to_have_count(3)


def test_skull_your_own_skull_fails_your_challenge_and_you_lose_a_disc(open_page: Any) -> None:
    page = open_page("/#/new")
    create_form(page, "skull", ["you", "random", "random"], {"first_player": "0"})
    click_and_wait(page, page.get_by_role("button", name="Place a skull"))
    # Every seat places one disc before anyone bids; then this seat bids all three.
    bid = page.get_by_role("button", name="Bid 3")
    expect(bid).to_be_enabled()
    click_and_wait(page, bid)
    click_and_wait(page, page.get_by_role("button", name="Flip your own stack"))
    # Its own skull: the challenger discards one of its discs, and only it learns which.
    discard = page.get_by_role("button", name="Discard a flower")
    expect(discard).to_be_visible()
    click_and_wait(page, discard)
    expect(page.get_by_role("region", name="Your discs")).to_contain_text("You lost: flower")


def test_isle_of_skye_prices_a_refused_price_buying_and_placing(
    open_page: Any, console: Console
) -> None:
    console.allow(r"status of 422")  # the refused price, on purpose
    page = open_page("/#/new")
    create_form(page, "skye", ["you", "random"], {"first_player": "0"})
    form = page.get_by_role("form", name="Set your prices")
    expect(form).to_be_visible()
    prices = form.locator("input[type=number]:enabled")
    expect(prices).to_have_count(2)
    prices.first.fill("9")
    form.get_by_role("button", name="Set prices").click()
    alert = page.get_by_role("alert")
    expect(alert).to_contain_text("gold")  # the rule's explanation, from the problem body
    shot(page, "skye-prices")
    prices.first.fill("1")
    click_and_wait(page, form.get_by_role("button", name="Set prices"))
    expect(page.get_by_role("alert")).to_have_count(0)
    # Buying, once around from this seat: buy a tile when one is affordable, else pass.
    buying = page.get_by_role("region", name="Buy a tile")
    expect(buying).to_be_visible()
    buy = buying.get_by_role("button", name=re.compile(r"^Buy "))
    click_and_wait(page, buy.first if buy.count() else buying.get_by_role("button", name="Pass"))
    # Building: a spot, then a rotation.
    spot = page.get_by_role("button", name=re.compile(r"^Place here"))
    expect(spot.first).to_be_visible()
    placed = page.locator(".mine .territory .cell svg")
    expect(placed).to_have_count(1)  # the castle
    spot.first.click()
    turned = page.get_by_role("group", name="Rotation").get_by_role("button")
    expect(turned.first).to_be_visible()
    click_and_wait(page, turned.first)
    expect(placed).to_have_count(2)
    shot(page, "skye")


def test_take_an_open_seat_from_the_lobby(open_page: Any, base_url: str) -> None:
    created = api_game(base_url, {"game": "fox", "seats": [{"bot": "random"}, {"open": True}],
                                  "options": {"target": 1}})  # fmt: skip
    page = open_page("/")
    page.get_by_label("Your name").fill("bo")
    row = page.locator(f"li[data-game='{created['id']}']")
    expect(row).to_contain_text("open seat")
    shot(page, "lobby")
    # One numbering: the open seat at index 1 is "seat 1", its button "Join seat 1".
    expect(row).not_to_contain_text("Join seat 2")
    row.get_by_role("button", name="Join seat 1").click()
    expect(page).to_have_url(re.compile(f"#/play/{created['id']}$"))
    expect(page.get_by_role("region", name="Your hand")).to_be_visible()
    expect(page.locator(".hand button.card")).to_have_count(13)
    expect(page.locator(".seats")).to_contain_text("bo (you)")


def test_the_landing_page_opens_with_the_three_games_and_keeps_my_seats_past_the_tab(
    open_page: Any, base_url: str, console: Console
) -> None:
    types = requests.get(f"{base_url}/v1/game-types", timeout=10).json()["game_types"]
    page = open_page("/")
    cards = page.locator(".game-card")
    expect(cards).to_have_count(3)
    for i, t in enumerate(types):
        card = cards.nth(i)
        expect(card.get_by_role("heading", level=3)).to_have_text(t["title"])
        low, high = t["seats"]["min"], t["seats"]["max"]
        expect(card.locator(".players")).to_have_text(
            f"{low} players" if low == high else f"{low}–{high} players"
        )
        assert len(card.locator(".pitch").inner_text().strip()) > 20
        expect(card.get_by_role("button", name=f"Play {t['title']} against bots")).to_be_visible()
        expect(card.get_by_role("button", name=f"Open a table of {t['title']}")).to_be_visible()
    # The games come first, then the lobby; a list with nothing in it says what it would hold.
    first = page.locator("main h2").first
    expect(first).to_have_text("The games")
    expect(page.get_by_role("region", name="Finished").locator("ul, p.muted").first).to_be_visible()
    expect(page.locator("main")).not_to_contain_text("None.")
    expect(page.locator("main")).not_to_contain_text("Loading")
    shot(page, "landing")
    page.get_by_label("Your name").fill("cy")
    page.get_by_role("button", name="Play Skull against bots").click()
    expect(page).to_have_url(re.compile(r"#/play/[0-9a-f]+$"))
    gid = page.url.rsplit("/", 1)[1]
    created = requests.get(f"{base_url}/v1/games/{gid}", timeout=10).json()
    assert created["game"] == "skull" and created["seats"][0]["name"] == "cy"
    assert created["clock"]["turn_seconds"] > 0  # a game started from the page has a clock
    expect(page.locator(".board.skull")).to_be_visible()
    # The tab is closed; another one of this browser finds the seat under "my games".
    context = page.context
    page.close()
    again = context.new_page()
    again.on("console", console.on_message)
    again.on("pageerror", console.on_exception)
    again.goto("/")
    mine = again.get_by_role("region", name="My games").locator(f"li[data-game='{gid}']")
    expect(mine).to_contain_text("Skull")
    mine.get_by_role("link", name="Resume seat 0").click()
    expect(again.locator(".game-head")).to_contain_text("playing as cy")
    expect(again.locator(".board.skull")).to_be_visible()
    # A table opened from the page waits for players with its clock set, its seats open.
    again.goto("/")
    again.get_by_role("button", name="Open a table of The Fox in the Forest").click()
    expect(again).to_have_url(re.compile(r"#/play/[0-9a-f]+$"))
    table = requests.get(f"{base_url}/v1/games/{again.url.rsplit('/', 1)[1]}", timeout=10).json()
    assert table["phase"] == "waiting" and table["seats"][1]["open"] is True
    assert table["clock"]["turn_seconds"] > 0


def test_the_lobby_pages_on_and_filters_by_game(open_page: Any, base_url: str) -> None:
    tables = [
        api_game(base_url, {"game": "fox", "seats": [{"name": "h"}, {"open": True}]})["id"]
        for _ in range(13)
    ]
    seats = [{"name": "h"}, {"open": True}, {"open": True}]
    skull = api_game(base_url, {"game": "skull", "seats": seats})["id"]
    page = open_page("/")
    waiting = page.get_by_role("region", name="Waiting for players")
    expect(waiting.locator("li")).to_have_count(12)
    waiting.get_by_role("button", name="More: waiting for players").click()
    expect(waiting.locator(f"li[data-game='{tables[0]}']")).to_be_visible()
    assert waiting.locator("li").count() > 12
    page.get_by_label("Show").select_option("skull")
    expect(waiting.locator(f"li[data-game='{skull}']")).to_be_visible()
    expect(waiting).not_to_contain_text("Loading")
    expect(waiting.locator(f"li[data-game='{tables[-1]}']")).to_have_count(0)
    for text in waiting.locator("li").all_inner_texts():
        assert text.startswith("Skull"), text


def test_fox_counts_treasure_in_the_rounds_points_and_keeps_its_column(
    open_page: Any, base_url: str
) -> None:
    # Several rounds between bots: the Treasure column is the game's, as `scores` counts it.
    created = requests.post(
        f"{base_url}/v1/games",
        json={"game": "fox", "seed": "treasure-1", "options": {"target": 21},
              "seats": [{"bot": "random"}, {"bot": "random"}]},
        headers={"Authorization": f"Bearer {ORGANIZER_KEY}"},
        timeout=10,
    )  # fmt: skip
    assert created.status_code == 201, created.text
    view = wait_finished(base_url, created.json()["id"])
    rounds = view["round_scores"]
    treasure = [sum(r["treasure"][s] for r in rounds) for s in (0, 1)]
    assert sum(treasure) > 0 and view["treasure"] == [0, 0]  # a round with a 7 won, then reset
    page = open_page(f"/#/watch/{view['id']}")
    cells = page.locator("table.seats tbody td[data-treasure]")
    expect(cells).to_have_count(2)
    for s in (0, 1):
        expect(cells.nth(s)).to_have_text(str(treasure[s]))
    items = page.get_by_role("region", name="Rounds").locator("li")
    expect(items).to_have_count(len(rounds))
    for item, r in zip(items.all(), rounds, strict=True):
        for s in (0, 1):
            tricks, total = r["tricks"][s], r["total"][s]
            expect(item).to_contain_text(
                f"{tricks} trick{'' if tricks == 1 else 's'}, "
                f"{total} point{'' if total == 1 else 's'}"
            )
            assert r["total"][s] == r["points"][s] + r["treasure"][s]


def test_watch_a_game_update_live_without_any_secret(
    open_page: Any, base_url: str, console: Console
) -> None:
    created = api_game(base_url, {"game": "fox", "seats": [{"name": "ana"}, {"bot": "random"}],
                                  "options": {"target": 1, "first_dealer": 1}})  # fmt: skip
    gid, token = created["id"], created["tokens"][0]
    page = open_page(f"/#/watch/{gid}", width=390)  # and at a phone's width
    expect(page.locator(".board.fox")).to_be_visible()
    before = version_of(page)
    hand = requests.get(
        f"{base_url}/v1/games/{gid}", headers={"Authorization": f"Bearer {token}"}, timeout=10
    ).json()
    played = hand["legal_commands"][0]
    resp = requests.post(f"{base_url}/v1/games/{gid}/commands", json=played, timeout=10,
                         headers={"Authorization": f"Bearer {token}", "Prefer": "wait=10"})  # fmt: skip
    assert resp.status_code == 200, resp.text
    # The feed brings the move (no polling, no reload): a later version and the card shown.
    page.wait_for_function(
        "v => Number(document.querySelector('.game').dataset.version) > v", arg=before
    )
    card = played["card"]
    shown = page.get_by_role("img", name=f"ana played {card['rank']} of {card['suit']}")
    expect(shown.first).to_be_visible()  # in the trick, or in the last trick once answered
    expect(page.get_by_role("region", name="Your hand")).to_have_count(0)
    assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth + 1")
    shot(page, "watch-phone")
    # What the spectator's page fetched: public endpoints only, never a token.
    fetched = [r.url for r in console.requests if "/v1/" in r.url]
    assert any(f"/v1/games/{gid}/feed" in url for url in fetched), fetched
    for request in console.requests:
        assert "access_token" not in request.url and "authorization" not in request.headers
    # Nor does it show a card of ana's hand but the one she played.
    seen = page.locator("main").inner_text() + " ".join(
        page.locator("[aria-label]").evaluate_all("els => els.map(e => e.ariaLabel)")
    )
    for c in hand["hand"]:
        if c != card:
            assert not re.search(rf"(?<!\d){c['rank']} of {c['suit']}", seen), c


def test_replay_and_verify_finished_games(open_page: Any, base_url: str) -> None:
    fox = api_game(base_url, {"game": "fox", "seats": [{"bot": "random"}, {"bot": "random"}],
                              "options": {"target": 1}})  # fmt: skip
    skull = api_game(base_url, {"game": "skull", "seats": [{"bot": "random"}] * 3})
    skye = api_game(base_url, {"game": "skye", "seats": [{"bot": "random"}] * 3})
    for created, name in ((fox, "replay-fox"), (skull, "replay-skull"), (skye, "replay-skye")):
        final = wait_finished(base_url, created["id"])
        last = final["version"]
        page = open_page(f"/#/replay/{created['id']}")
        status = page.locator(".replay-bar .version")
        expect(status).to_have_text(f"Version {last} of {last}")
        expect(page.locator(".result")).to_be_visible()
        page.get_by_role("button", name="Back").click()
        expect(status).to_have_text(f"Version {last - 1} of {last}")
        page.get_by_role("button", name="Forward").click()
        expect(status).to_have_text(f"Version {last} of {last}")
        page.get_by_role("slider", name="Version").fill(str(last // 2))
        expect(status).to_have_text(f"Version {last // 2} of {last}")
        # What a seat saw at that version: its own hand, discs or territory.
        page.get_by_label("Seen by").select_option("0")
        mine = {"replay-fox": "Your hand", "replay-skull": "Your discs"}.get(name, "Your territory")
        expect(page.get_by_role("region", name=mine)).to_be_visible()
        page.get_by_label("Seen by").select_option("public")
        expect(page.get_by_role("region", name=mine)).to_have_count(0)
        if name == "replay-skye":
            page.get_by_role("button", name="Last").click()
            expect(status).to_have_text(f"Version {last} of {last}")
        page.get_by_role("button", name="Verify this game").click()
        verdict = page.locator(".verdict")
        expect(verdict).to_contain_text("Verification passed", timeout=60_000)
        expect(verdict).to_contain_text("seed commitment")
        expect(verdict).to_contain_text("hash chain")
        assert page.locator(".check-failed").count() == 0
        shot(page, name)


def test_verify_checks_the_export_against_the_hashes_this_browser_was_shown(
    open_page: Any, base_url: str
) -> None:
    """The page keeps the (version, head_hash) of every view it shows, in localStorage; after
    the game, "Verify this game" checks the export against them, and names the versions whose
    hash is not the one shown (here: one kept hash changed, as a rewritten history would)."""
    created = api_game(base_url, {"game": "fox", "seats": [{"name": "ana"}, {"bot": "random"}],
                                  "options": {"target": 1}})  # fmt: skip
    gid, auth = created["id"], {"Authorization": f"Bearer {created['tokens'][0]}"}
    page = open_page(f"/#/watch/{gid}")
    expect(page.locator(".board.fox")).to_be_visible()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        mine = requests.get(f"{base_url}/v1/games/{gid}", headers=auth, timeout=10).json()
        if mine["outcome"] is not None:
            break
        if 0 not in mine["to_act"]:
            time.sleep(0.1)  # the bot's move, through Celery: a condition polled, with a deadline
            continue
        resp = requests.post(f"{base_url}/v1/games/{gid}/commands", timeout=20,
                             json=mine["legal_commands"][0], headers={**auth, "Prefer": "wait=10"})  # fmt: skip
        assert resp.status_code == 200, resp.text
        # The page has shown that version (the feed brought it) before the next move.
        page.wait_for_function(
            "v => Number(document.querySelector('.game').dataset.version) >= v",
            arg=resp.json()["version"],
        )
    final = wait_finished(base_url, gid)
    page.wait_for_function(
        "v => Number(document.querySelector('.game').dataset.version) >= v", arg=final["version"]
    )
    kept = page.evaluate(f"JSON.parse(localStorage.getItem('tabletop.heads.{gid}'))")
    assert len(kept) >= 10 and kept[str(final["version"])] == final["head_hash"]
    page.goto(f"/#/replay/{gid}")
    page.get_by_role("button", name="Verify this game").click()
    verdict = page.locator(".verdict")
    expect(verdict).to_contain_text("Verification passed", timeout=60_000)
    history = verdict.locator("li", has_text="history you were shown")
    expect(history).to_have_class("check-ok")
    expect(history).to_contain_text(f"at each of the {len(kept)} versions it kept")
    expect(verdict.locator("li", has_text="bot moves")).to_have_class("check-unchecked")
    # A history other than the one shown: the kept hash of one version no longer matches.
    changed = sorted(int(v) for v in kept)[len(kept) // 2]
    page.evaluate(
        """([key, v]) => { const h = JSON.parse(localStorage.getItem(key));
                           h[v] = "0".repeat(64); localStorage.setItem(key, JSON.stringify(h)); }""",
        [f"tabletop.heads.{gid}", str(changed)],
    )
    page.get_by_role("button", name="Verify this game").click()
    expect(verdict).to_contain_text("Verification failed", timeout=60_000)
    expect(history).to_have_class("check-failed")
    expect(history).to_contain_text(f"at 1 of {len(kept)} versions: {changed}")
    assert verdict.locator(".check-failed").count() == 1  # the log itself still verifies


def test_a_turn_clock_counts_down_and_resigning_ends_the_game(open_page: Any) -> None:
    page = open_page("/#/new")
    page.get_by_label("Your name").fill("ana")
    page.get_by_label("Play with a turn clock").check()
    page.get_by_label("seconds a turn").fill("90")
    page.get_by_label("reserve seconds").fill("30")
    # first_dealer 1: seat 0 leads, so its clock runs at once.
    create_form(page, "fox", ["you", "random"], {"target": "1", "first_dealer": "1"})
    clock = page.get_by_label("Turn clock")
    expect(clock).to_contain_text(re.compile(r"ana: [12]:\d\d left"))
    first = clock.inner_text()
    expect(clock).not_to_have_text(first)  # it ticks between messages, fetching nothing
    expect(clock).to_contain_text("reserve 0:30")
    expect(clock).not_to_contain_text("random bot")  # bot seats have no clock
    shot(page, "fox-clock")
    page.get_by_role("button", name="Resign…").click()
    click_and_wait(page, page.get_by_role("button", name="Yes, resign"))
    expect(page.locator(".status")).to_contain_text("Game over: random bot 1 won")
    expect(page.locator(".seat-states")).to_contain_text("ana: resigned")


# ---- tournaments and registered bots ------------------------------------------------------------

ORG = {"Authorization": f"Bearer {ORGANIZER_KEY}"}


def js_fixed(x: float, digits: int = 2) -> str:
    """``x`` as the page writes it (charts.js ``fmt``: JavaScript's toFixed, which rounds an
    exact tie up, of the absolute value; a true minus sign)."""
    step = Decimal(1).scaleb(-digits)
    text = str(Decimal(abs(x)).quantize(step, rounding=ROUND_HALF_UP))
    return f"−{text}" if x < 0 and Decimal(text) != 0 else text


def js_pct(x: float, digits: int = 1) -> str:
    """A rate as the page writes it (charts.js ``pct``)."""
    return js_fixed(x * 100, digits) + "%"


def org_tournament(base_url: str, body: dict[str, Any]) -> str:
    created = requests.post(f"{base_url}/v1/tournaments", json=body, headers=ORG, timeout=10)
    assert created.status_code == 201, created.text
    tid: str = created.json()["id"]
    return tid


def tournament_doc(base_url: str, tid: str) -> dict[str, Any]:
    doc: dict[str, Any] = requests.get(
        f"{base_url}/v1/tournaments/{tid}", headers=ORG, timeout=10
    ).json()
    return doc


def wait_tournament(base_url: str, tid: str, seconds: float = 120) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        doc = tournament_doc(base_url, tid)
        if doc["status"] == "finished":
            return doc
        time.sleep(0.2)  # games play in Celery tasks: a condition polled, with a deadline
    pytest.fail(f"tournament {tid} did not finish")


def test_a_finished_sprt_match_shows_standings_ratings_heatmap_and_the_llr_with_its_bounds(
    open_page: Any, base_url: str, console: Console
) -> None:
    tid = org_tournament(base_url, {
        "game": "fox", "format": "sprt", "games": 8, "options": {"target": 1},
        "entrants": [{"name": "heur", "bot": "heuristic"}, {"name": "rand", "bot": "random"}],
    })  # fmt: skip
    doc = wait_tournament(base_url, tid)
    # The lobby lists tournaments only with a key, and says so until it has one.
    page = open_page("/")
    listed = page.get_by_role("region", name="Tournaments")
    expect(listed).to_contain_text("this browser has none")
    expect(listed.locator("li")).to_have_count(0)
    listed.get_by_label("Organizer or auditor key").fill(ORGANIZER_KEY)
    listed.get_by_role("button", name="Use this key").click()
    row = listed.locator(f"li[data-tournament='{tid}']")
    expect(row).to_contain_text("8 of 8 games")
    expect(row.get_by_role("progressbar")).to_have_attribute("value", "8")
    row.get_by_role("link").click()
    expect(page).to_have_url(re.compile(f"#/tournaments/{tid}$"))
    expect(page.locator(".tournament")).to_have_attribute("data-status", "finished")
    expect(page.get_by_role("status")).to_contain_text("Finished: 8 of 8 games played")
    # Standings: each entrant's win rate with its interval, mean score, mean rank.
    standings = page.get_by_role("region", name="Standings")
    for r in doc["standings"]:
        line = standings.locator(f"tr[data-entrant='{r['entrant']}']")
        lo, hi = r["win_rate_ci"]
        expect(line).to_contain_text(r["name"])
        expect(line).to_contain_text(f"{js_pct(r['win_rate'])} ({js_pct(lo)}–{js_pct(hi)})")
        expect(line).to_contain_text(js_fixed(r["mean_score"]))
        expect(line).to_contain_text(js_fixed(r["mean_rank"]))
    # Ratings: the 95% interval (mu +- 1.96 sigma) and the ordinal, in the API's order.
    ratings = page.get_by_role("region", name="Ratings").locator("tbody tr")
    expect(ratings).to_have_count(2)
    for i, r in enumerate(doc["ratings"]):
        assert r["mu_ci"] == pytest.approx(
            [r["mu"] - 1.96 * r["sigma"], r["mu"] + 1.96 * r["sigma"]], abs=1e-3
        )
        interval = f"{js_fixed(r['mu_ci'][0])} to {js_fixed(r['mu_ci'][1])}"
        expect(ratings.nth(i)).to_contain_text(r["name"])
        expect(ratings.nth(i)).to_contain_text(interval)
        expect(ratings.nth(i)).to_contain_text(js_fixed(r["ordinal"]))
    # The head-to-head heatmap: each met pair's rate, coloured on the legend's scale.
    h2h = page.get_by_role("region", name="Head to head")
    cells = h2h.locator("td.heat")
    expect(cells).to_have_count(2)
    matrix = doc["pairwise"]["matrix"]
    for cell, (a, b) in zip(cells.all(), [(0, 1), (1, 0)], strict=True):
        assert float(cell.get_attribute("data-rate") or "nan") == matrix[a][b]["rate"]
        expect(cell).to_contain_text(f"{matrix[a][b]['games']}")
    if matrix[0][1]["rate"] != matrix[1][0]["rate"]:  # a different rate, a different colour
        colours = [c.evaluate("e => getComputedStyle(e).backgroundColor") for c in cells.all()]
        assert colours[0] != colours[1], colours
    expect(h2h.locator(".legend")).to_contain_text("0%")
    expect(h2h.locator(".legend")).to_contain_text("100%")
    # The SPRT: its LLR drawn against both bounds, at its place on the chart's scale.
    s = doc["sprt"]
    chart = page.get_by_role("img", name=re.compile("^Log-likelihood ratio over pairs"))
    expect(chart).to_be_visible()
    expect(chart.locator(".llr-bound")).to_have_count(2)
    expect(chart.locator(".llr-bound.upper")).to_contain_text(f"H1 {js_fixed(s['upper'])}")
    expect(chart.locator(".llr-bound.lower")).to_contain_text(f"H0 {js_fixed(s['lower'])}")
    at = chart.evaluate("""svg => {
        const n = (sel, a) => Number(svg.querySelector(sel).getAttribute(a));
        return {upper: n('.llr-bound.upper line', 'y1'), lower: n('.llr-bound.lower line', 'y1'),
                now: n('.llr-now', 'cy'), x: n('.llr-now', 'cx'), left: n('.plot', 'x'),
                width: n('.plot', 'width')};
    }""")
    share = (s["upper"] - s["llr"]) / (s["upper"] - s["lower"])
    assert abs(at["now"] - (at["upper"] + share * (at["lower"] - at["upper"]))) < 0.5, (at, s)
    x_max = max(1, doc["progress"]["total"] // 2, s["pairs"])
    assert abs(at["x"] - (at["left"] + s["pairs"] / x_max * at["width"])) < 0.5, (at, s)
    sprt = page.get_by_role("region", name="Sequential test (SPRT)")
    expect(sprt.locator(".llr")).to_have_text(js_fixed(s["llr"]))
    if s.get("history"):  # the whole path when the API gives it: one vertex a point
        path = chart.locator(".llr-line").get_attribute("points") or ""
        expected = len(s["history"]) + (1 if s["history"][0][0] > 0 else 0)
        assert len(path.split()) == expected, path
    # Every game, to replay.
    expect(page.get_by_role("link", name=re.compile(r"^Replay game \d+$"))).to_have_count(8)
    shot(page, "tournament")
    # At a phone's width, in a browser without the key: a wrong key is refused, saying why.
    console.allow(r"status of 403")
    phone = open_page(f"/#/tournaments/{tid}", width=390)
    phone.get_by_label("Organizer or auditor key").fill("not-a-key")
    phone.get_by_role("button", name="Use this key").click()
    expect(phone.get_by_role("alert")).to_contain_text("neither an organizer's nor an auditor's")
    phone.get_by_role("button", name="Forget the key").click()
    phone.get_by_label("Organizer or auditor key").fill(ORGANIZER_KEY)
    phone.get_by_role("button", name="Use this key").click()
    expect(phone.get_by_role("img", name=re.compile("^Log-likelihood ratio"))).to_be_visible()
    expect(phone.get_by_role("region", name="Head to head").locator("td.heat")).to_have_count(2)
    assert phone.evaluate("document.scrollingElement.scrollWidth <= innerWidth + 1")
    shot(phone, "tournament-phone")


def test_a_running_tournament_refreshes_on_its_page_until_it_is_finished(
    open_page: Any, base_url: str, console: Console
) -> None:
    # A search bot makes it last seconds: long enough to be seen running.
    tid = org_tournament(base_url, {
        "game": "fox", "games": 8, "options": {"target": 1},
        "entrants": [{"bot": "ismcts", "budget_ms": 150}, {"bot": "random"}],
    })  # fmt: skip
    page = open_page(f"/#/tournaments/{tid}")
    expect(page.get_by_role("region", name="Ratings")).to_have_count(0)  # no key: nothing read
    page.get_by_label("Organizer or auditor key").fill(ORGANIZER_KEY)
    page.get_by_role("button", name="Use this key").click()
    board = page.locator(".tournament")
    expect(board).to_have_attribute("data-status", re.compile("^(queued|running)$"))
    expect(page.locator(".feed.live")).to_be_visible()
    page.evaluate("window.notReloaded = true")
    expect(board).to_have_attribute("data-status", "finished", timeout=120_000)
    assert page.evaluate("window.notReloaded === true")  # it polled; nobody reloaded it
    expect(page.get_by_role("status")).to_contain_text("Finished: 8 of 8 games played")
    expect(board.get_by_role("progressbar")).to_have_attribute("value", "8")
    assert tournament_doc(base_url, tid)["progress"] == {"done": 8, "total": 8}
    # Its games are reached through it, never in the lobby's lists, which list it instead.
    lobby = open_page("/")
    lobby.evaluate(f"localStorage.setItem('tabletop.key', {ORGANIZER_KEY!r})")
    lobby.reload()
    expect(lobby.locator(f"li[data-tournament='{tid}']")).to_contain_text("finished")
    expect(lobby.locator("#h-finished ~ ul, #h-finished ~ p").first).to_be_visible()
    assert lobby.locator(f"li[data-game^='{tid}-']").count() == 0
    listed = requests.get(f"{base_url}/v1/games", params={"tournament": tid}, timeout=10).json()
    assert [g["id"] for g in listed["games"]] == [f"{tid}-{i:05d}" for i in range(8)]
    polls = [r for r in console.requests if f"/v1/tournaments/{tid}?" in r.url]
    assert len(polls) >= 2, [r.url for r in polls]
    # The key goes to the tournament endpoints, and nowhere else.
    for request in console.requests:
        sent = request.headers.get("authorization")
        assert sent is None or "/v1/tournaments" in request.url, request.url
        assert sent is None or sent == f"Bearer {ORGANIZER_KEY}"


class _RandomKitBot:
    """A bot of the Python kit that plays a random legal command (the kit's example)."""

    def act(self, view: Any, legal_commands: Any) -> Any:
        return random.choice(legal_commands)


def test_a_registered_bots_page_shows_its_stats_and_its_games(
    open_page: Any, base_url: str
) -> None:
    kit = pytest.importorskip("tabletop_client.bot", reason="the bot kit (sdk/python)")
    port = free_port()
    registered = requests.post(f"{base_url}/v1/bots", timeout=10, json={
        "name": "kit random", "games": ["fox"], "transport": "webhook",
        "url": f"http://127.0.0.1:{port}/turn", "budget_ms": 500,
    })  # fmt: skip
    assert registered.status_code == 201, registered.text
    bot = registered.json()
    server = kit.make_webhook_server(_RandomKitBot(), bot["key"], "127.0.0.1", port)
    serving = threading.Thread(target=server.serve_forever, daemon=True)
    serving.start()
    try:
        game = api_game(base_url, {"game": "fox", "seats": [{"bot_id": bot["id"]},
                                   {"bot": "random"}], "options": {"target": 1}})  # fmt: skip
        wait_finished(base_url, game["id"])
    finally:
        server.shutdown()
        server.server_close()
    # Its stats are recorded before each of its moves is submitted: final once the game is.
    shown = requests.get(f"{base_url}/v1/bots/{bot['id']}", timeout=10).json()
    stats = shown["stats"]
    assert stats["decisions"] >= 10 and stats["fallbacks"] == 0, stats
    page = open_page("/")
    bots = page.get_by_role("region", name="Registered bots")
    bots.get_by_role("link", name="kit random").first.click()
    expect(page).to_have_url(re.compile(f"#/bots/{bot['id']}$"))
    expect(page.get_by_role("heading", level=2)).to_contain_text("kit random")
    expect(page.locator(".facts")).to_contain_text("webhook")
    expect(page.locator(".facts")).to_contain_text("The Fox in the Forest")
    expect(page.locator(".facts")).to_contain_text("500 ms")
    stat = page.locator("dl.stats")
    expect(stat.locator("[data-stat=decisions] dd")).to_have_text(str(stats["decisions"]))
    for name in ("p50", "p95", "max"):
        expect(stat.locator(f"[data-stat={name}] dd")).to_have_text(
            f"{stats['latency_ms'][name]} ms"
        )
    for name in ("timeouts", "illegal", "errors", "fallbacks"):
        expect(stat.locator(f"[data-stat={name}] dd")).to_have_text(f"{stats[name]} (0.0%)")
    latency = page.get_by_role("img", name=re.compile("^Latency: p50"))
    expect(latency).to_have_attribute("aria-label", re.compile("against a budget of 500 ms$"))
    # Its game, found in the lobby's newest games, to replay.
    mine = page.locator(f".tgames li[data-game='{game['id']}']")
    expect(mine).to_contain_text("seat 0")  # the API's numbering: it sat at index 0
    expect(mine.get_by_role("link", name=f"Replay {game['id']}")).to_be_visible()
    shot(page, "bot")
    phone = open_page(f"/#/bots/{bot['id']}", width=390)
    expect(phone.locator("dl.stats [data-stat=decisions] dd")).to_have_text(str(stats["decisions"]))
    assert phone.evaluate("document.scrollingElement.scrollWidth <= innerWidth + 1")
    shot(phone, "bot-phone")
