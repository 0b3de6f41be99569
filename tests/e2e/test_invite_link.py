"""A new user's first hour on the web page (issue 37), in Debian's headless Chromium on the
real stack, as tests/e2e/test_browser.py drives it (its fixtures and skip rules, reused).

The invite: a table opened on the landing page shows the link to send; a friend who opens it
in another browser (its own context: no seat of this one's) is offered the open seats and
joins, from the invite link, the game's own address or its watch page; the game starts and
they play. Then the page's smaller things: the name asked before the play buttons, lobby rows
and the event log in words, the new-game options without schema text, the clock counting the
reserve once, wide tables that say they scroll at a phone's width, a stopped SPRT match
counted by the games it played, code in the verifier's details and counts in the right number.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.e2e import test_browser as tb

# The stack, the browser and the watched page of test_browser.py (its module-level skip, when
# chromium or playwright is missing, skips this module too).
base_url = tb.base_url
browser = tb.browser
console = tb.console
open_page = tb.open_page
expect = tb.expect

pytestmark = tb.pytestmark


def place_if_asked(page: Any) -> bool:
    """Place a flower when this seat may: True if it did (and its board moved on)."""
    place = page.get_by_role("button", name="Place a flower")
    if place.count() and place.is_enabled():
        tb.click_and_wait(page, place)
        return True
    return False


def test_a_friend_joins_by_the_invite_link_and_they_play(open_page: Any, base_url: str) -> None:
    host = open_page("/")
    host.get_by_label("Your name").fill("ana")
    host.get_by_role("button", name="Open a table of Skull").click()
    expect(host).to_have_url(re.compile(r"#/play/[0-9a-f]+$"))
    gid = host.url.rsplit("/", 1)[1]
    # The page the table was opened on shows the link to send, and who sits where.
    invite = host.get_by_role("region", name="Invite friends")
    expect(invite).to_contain_text("waits for 2 more players")
    link = invite.get_by_label("Invite link")
    expect(link).to_have_value(f"{base_url}/#/join/{gid}")
    invite.get_by_role("button", name="Copy link").click()
    expect(invite.get_by_role("status")).to_contain_text(re.compile("Copied|Selected"))
    tb.shot(host, "invite")

    # A friend opens the link in another browser: the open seats, a name, a Join button.
    friend = open_page(link.input_value().removeprefix(base_url))
    offer = friend.get_by_role("region", name="Join this table")
    expect(offer).to_contain_text("ana")
    expect(offer.get_by_role("button", name=re.compile(r"^Join seat"))).to_have_count(2)
    offer.get_by_label("Your name").fill("bo")
    tb.shot(friend, "invite-join")
    offer.get_by_role("button", name="Join seat 1").click()
    expect(friend.locator(".game-head")).to_contain_text("playing as bo")
    expect(friend.get_by_role("region", name="Join this table")).to_have_count(0)
    # The host's page sees the friend sit down, live.
    expect(invite).to_contain_text("At the table: ana, bo, seat 2 open")
    expect(invite).to_contain_text("waits for 1 more player.")

    # A third opens the game's own address, no invite route: it offers the last seat too;
    # the watch page does as well, and joining from it goes to the seat's page.
    third = open_page(f"/#/watch/{gid}")
    offer = third.get_by_role("region", name="Join this table")
    expect(offer.get_by_role("button", name=re.compile(r"^Join seat"))).to_have_count(1)
    plain = open_page(f"/#/play/{gid}")
    expect(plain.get_by_role("button", name="Join seat 2")).to_be_visible()
    offer.get_by_label("Your name").fill("cy")
    offer.get_by_role("button", name="Join seat 2").click()
    expect(third).to_have_url(re.compile(f"#/play/{gid}$"))
    expect(third.locator(".game-head")).to_contain_text("playing as cy")
    # The last seat taken, the game is dealt: every seat's page shows the board, no offer.
    for page in (host, friend, third):
        expect(page.locator(".board.skull .players .player")).to_have_count(3)
        expect(page.get_by_role("region", name="Invite friends")).to_have_count(0)
    expect(plain.get_by_role("region", name="Join this table")).to_have_count(0)
    expect(plain.locator(".game-head")).to_contain_text("spectator")
    expect(host.locator(".board.skull")).to_contain_text("bo")

    # They play: each seat places a flower when asked, until the friend has placed one.
    placed = {"ana": False, "bo": False, "cy": False}
    for _ in range(12):
        for name, page in (("ana", host), ("bo", friend), ("cy", third)):
            placed[name] = place_if_asked(page) or placed[name]
        if placed["bo"]:
            break
        host.wait_for_timeout(200)  # the feed brings the next turn to the others' pages
    assert placed["bo"], placed
    expect(host.locator('[aria-label^="bo\'s stack: 1 face down"]')).to_be_visible()
    # The log says which events it lists, not a bare count.
    expect(host.locator(".log summary")).to_have_text(re.compile(r"^Events \d+–\d+ of \d+$"))


def test_the_landing_page_asks_the_name_first_and_lobby_rows_read_in_words(
    open_page: Any, base_url: str
) -> None:
    table = tb.api_game(base_url, {"game": "fox", "seats": [{"name": "h"}, {"open": True}]})
    page = open_page("/", width=390)
    name = page.get_by_label("Your name")
    play = page.get_by_role("button", name=re.compile("against bots$")).first
    name_box, play_box = name.bounding_box(), play.bounding_box()
    assert name_box and play_box and name_box["y"] < play_box["y"], (name_box, play_box)
    row = page.locator(f"li[data-game='{table['id']}']")
    expect(row).to_contain_text("opened")
    assert not re.search(r"\bv\d+\b", row.inner_text()), row.inner_text()


def test_the_new_game_options_read_in_words(open_page: Any) -> None:
    page = open_page("/#/new")
    form = page.get_by_role("form", name="New game")
    for game, option in (
        ("skull", "first_player"),
        ("fox", "first_dealer"),
        ("skye", "first_player"),
    ):
        page.get_by_label("Game", exact=True).select_option(game)
        field = page.locator(f"#opt-{option}")
        expect(field).to_be_visible()
        assert field.evaluate("e => e.tagName") == "SELECT"
        texts = field.locator("option").all_inner_texts()
        assert texts[0] == "drawn at random" and texts[1].startswith("seat 0: you"), texts
        text = form.inner_text()
        assert "null" not in text and "_" not in text, text


def render_in_page(page: Any, module: str, component: str, props: dict[str, Any]) -> str:
    """The text one of the page's own components renders with `props` (its modules as the
    page loads them)."""
    text: str = page.evaluate(
        """async ([module, component, props]) => {
            const { render, h } = await import("preact");
            const mod = await import(module);
            const el = document.createElement("div");
            document.body.append(el);
            render(h(mod[component], props), el);
            await new Promise((r) => setTimeout(r, 50));
            return el.innerText;
        }""",
        [module, component, props],
    )
    return text


def test_the_clock_counts_the_reserve_once_and_counts_read_in_the_right_number(
    open_page: Any,
) -> None:
    page = open_page("/")
    now = page.evaluate("Date.now()")
    # Armed at the turn's start: deadline = start + turn (60 s) + reserve (300 s).
    view = {
        "seats": [{"name": "ana"}, {"name": "bo"}],
        "outcome": None,
        "clock": {"turn_seconds": 60, "reserve_seconds": 300, "seats": [
            {"seat": 0, "reserve_ms": 300_000, "deadline_ms": now + 360_000},
            {"seat": 1, "reserve_ms": 200_000, "deadline": None},
        ]},
    }  # fmt: skip
    text = render_in_page(page, "/web/ui.js", "Clock", {"view": view})
    assert re.search(r"ana: (1:00|0:59) left this turn", text), text
    assert "reserve 5:00" in text and "6:00" not in text and "5:59" not in text, text
    assert "bo: reserve 3:20" in text, text
    # Its turn's time spent, the reserve runs: 4:00 of it left.
    view["clock"]["seats"][0]["deadline_ms"] = now + 240_000
    text = render_in_page(page, "/web/ui.js", "Clock", {"view": view})
    assert re.search(r"ana: turn time spent · reserve (4:00|3:59) left", text), text
    said = page.evaluate(
        """async () => { const { plural } = await import("/web/ui.js");
                         return [plural(1, "point"), plural(2, "point"), plural(0, "trick")]; }"""
    )
    assert said == ["1 point", "2 points", "0 tricks"]


def ladder_doc(game: str) -> dict[str, Any]:
    rows = [
        {"rank": i + 1, "bot": f"ismcts:budget_ms={100 * (i + 1)},exploration=1.4142",
         "games": 40 + i, "mu": 30.0 - i, "sigma": 1.5, "mu_ci": [27.0 - i, 33.0 - i],
         "ordinal": 25.5 - i}
        for i in range(3)
    ]  # fmt: skip
    return {"game": game, "ratings": rows}


def stopped_sprt_doc(tid: str) -> dict[str, Any]:
    """An SPRT match decided at 266 of at most 400 games (its games' list is the plan's)."""
    entrants = [{"entrant": 0, "name": "candidate-with-a-long-name", "spec": {"bot": "ismcts"},
                 "label": "ismcts:budget_ms=200"},
                {"entrant": 1, "name": "baseline-with-a-long-name", "spec": {"bot": "heuristic"},
                 "label": "heuristic"}]  # fmt: skip
    standings = [
        {"entrant": i, "name": e["name"], "games": 266, "wins": 150 - 34 * i,
         "win_rate": 0.56 - 0.12 * i, "win_rate_ci": [0.5 - 0.12 * i, 0.62 - 0.12 * i],
         "mean_score": 12.5, "mean_score_ci": [11.0, 14.0], "mean_rank": 1.44 + 0.12 * i}
        for i, e in enumerate(entrants)
    ]  # fmt: skip
    return {
        "id": tid, "game": "fox", "format": "sprt", "players": 2, "options": {},
        "entrants": entrants, "created_at": "2026-01-01T10:00:00Z",
        "finished_at": "2026-01-01T11:00:00Z", "status": "finished",
        "progress": {"done": 266, "total": 400}, "paused": False, "paused_reason": None,
        "rated_games": 266, "standings": standings, "ratings": [], "head_to_head": None,
        "pairwise": None, "draws": 0, "candidate": 0, "field": None,
        "games": {"offset": 0, "limit": 20, "total": 400, "items": [
            {"index": i, "id": f"{tid}-{i:05d}", "seats": [e["name"] for e in entrants],
             "deal": i // 2, "finished": True} for i in range(20)]},
        "sprt": {"llr": 2.96, "lower": -2.94, "upper": 2.94, "elo0": 0, "elo1": 10,
                 "alpha": 0.05, "beta": 0.05, "pairs": 133, "result": "H1",
                 "pentanomial": [5, 20, 60, 30, 18]},
    }  # fmt: skip


def test_wide_tables_scroll_with_a_cue_and_a_stopped_sprt_counts_its_games(
    open_page: Any,
) -> None:
    page = open_page("/", width=390)
    page.route(
        re.compile(r"/v1/ratings\?game=fox$"),
        lambda route: route.fulfill(content_type="application/json",
                                    body=json.dumps(ladder_doc("fox"))),
    )  # fmt: skip
    tid = "t-stopped"
    page.route(
        re.compile(rf"/v1/tournaments/{tid}\?"),
        lambda route: route.fulfill(content_type="application/json",
                                    body=json.dumps(stopped_sprt_doc(tid))),
    )  # fmt: skip
    page.goto("/#/ladder?game=fox")
    expect(page.locator("table.ladder tbody tr")).to_have_count(3)
    frame = page.locator(".scroll-frame").first
    expect(frame.locator(".scroll-hint")).to_be_visible()
    expect(frame).to_have_class(re.compile(r"\bmore-right\b"))
    scroller = page.get_by_role("region", name="Ladder (scrolls sideways)")
    scroller.evaluate("e => { e.scrollLeft = e.scrollWidth; }")
    expect(frame).to_have_class(re.compile(r"\bmore-left\b"))
    assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth + 1")

    page.evaluate(f"localStorage.setItem('tabletop.key', {tb.ORGANIZER_KEY!r})")
    page.goto(f"/#/tournaments/{tid}")
    expect(page.get_by_role("status")).to_contain_text("Finished: 266 of 266 games played")
    expect(page.get_by_role("status")).to_contain_text("up to 400 were planned")
    bar = page.locator(".tournament > .progress progress")
    expect(bar).to_have_attribute("max", "266")
    expect(bar).to_have_attribute("value", "266")
    expect(page.get_by_role("heading", name=re.compile("^Games"))).to_have_text(
        "Games 1–20 of 266 played"
    )
    standings = page.get_by_role("region", name="Standings (scrolls sideways)")
    expect(standings).to_be_visible()
    expect(page.locator(".scroll-frame.wide .scroll-hint").first).to_be_visible()
    expect(page.get_by_role("region", name="Sequential test (SPRT)")).to_contain_text(
        "after 133 complete pairs"
    )
    assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth + 1")
    tb.shot(page, "tournament-stopped-phone")


def test_the_verifier_shows_code_as_code(open_page: Any, base_url: str) -> None:
    game = tb.api_game(base_url, {"game": "fox", "seats": [{"bot": "random"}, {"bot": "random"}],
                                  "options": {"target": 1}})  # fmt: skip
    tb.wait_finished(base_url, game["id"])
    page = open_page(f"/#/replay/{game['id']}")
    page.get_by_role("button", name="Verify this game").click()
    bots = page.locator(".checks li", has_text="bot moves")
    expect(bots).to_be_visible(timeout=60_000)
    expect(bots.locator("code")).to_have_text("tabletop audit")
    assert "`" not in page.locator(".checks").inner_text()
