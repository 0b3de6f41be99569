"""Skull rules as scenarios: given these events, when this command, then these events (or error)."""

from __future__ import annotations

import dataclasses
import json
from functools import reduce
from typing import Any

import pytest

from shared.games import errors, skull
from shared.games.rng import Rng
from shared.games.skull import (
    FLOWER,
    SKULL,
    Bid,
    BidMade,
    BidPassed,
    ChallengeFailed,
    ChallengeStarted,
    ChallengeWon,
    ChooseStarter,
    Discard,
    DiscFlipped,
    DiscLost,
    DiscPlaced,
    DiscsShuffled,
    Flip,
    GameSetUp,
    GameWon,
    Pass,
    PickDisc,
    Place,
    PlayerEliminated,
    RoundStarted,
    StarterChoiceOffered,
    State,
    TurnStarted,
)

F = Place(disc=FLOWER)
S = Place(disc=SKULL)


# --- helpers -----------------------------------------------------------------------------------


def given(*events: Any) -> State:
    """The state these events make."""
    return reduce(skull.evolve, events, None)  # type: ignore[arg-type]


def new_game(seats: int = 4, first: int = 0, **options: Any) -> State:
    """A fresh game whose first round is started by ``first``."""
    opts = {"first_player": first, **options}
    return given(*skull.setup(seats, opts, Rng("setup-seed")))


def when(state: State, seat: int, command: Any, label: str = "v1") -> list[Any]:
    """The events ``command`` causes (decide only)."""
    return skull.decide(state, seat, command, Rng("test-seed", label))


def play(state: State, *moves: tuple[int, Any]) -> tuple[State, list[Any]]:
    """Apply ``(seat, command)`` moves through decide and evolve; the state and all events."""
    log: list[Any] = []
    for i, (seat, command) in enumerate(moves):
        events = when(state, seat, command, f"v{i}")
        log += events
        state = reduce(skull.evolve, events, state)
    return state, log


def rejected(state: State, seat: int, command: Any) -> errors.GameError:
    with pytest.raises(errors.GameError) as info:
        when(state, seat, command)
    return info.value


def assert_illegal(state: State, seat: int, command: Any, rule: str) -> None:
    err = rejected(state, seat, command)
    assert (err.code, err.rule) == (errors.ILLEGAL, rule), err.to_dict()


def first_pass(seats: int, first: int = 0, faces: dict[int, Place] | None = None):
    """Every seat places one disc from ``first`` on (flowers unless ``faces`` says)."""
    faces = faces or {}
    return [((first + k) % seats, faces.get((first + k) % seats, F)) for k in range(seats)]


def lose(seat: int, *discs: str) -> list[Any]:
    """Events that take ``discs`` away from ``seat`` (to set up a given state)."""
    return [DiscLost(seat=seat, disc=d, picked_by=seat) for d in discs]


def challenge_state(**options: Any) -> State:
    """Three seats; seat 1 started. Stacks: seat 0 [flower], seat 1 [flower, skull (top)],
    seat 2 [flower]; seat 2 opened the bidding at 1 and seat 0 is to bid."""
    state = new_game(3, 1, **options)
    state, _ = play(state, (1, F), (2, F), (0, F), (1, S), (2, Bid(count=1)))
    return state


# --- setup and options -------------------------------------------------------------------------


@pytest.mark.parametrize("seats", [3, 6, 7, 12])
def test_every_player_starts_with_three_flowers_and_one_skull(seats: int) -> None:
    # Given a new game (7-12 players: two boxes combined, discs per player unchanged)
    state = new_game(seats)
    # Then everyone holds 4 discs, 3 flowers and a skull, and nothing is on the table
    for seat in range(seats):
        v = skull.view(state, seat)
        assert v["hand"] == {FLOWER: 3, SKULL: 1}
        assert v["stack"] == []
    assert [p["discs"] for p in skull.view(state, None)["players"]] == [4] * seats
    assert skull.view(state, None)["phase"] == "placing"


def test_first_player_option_starts_the_first_round() -> None:
    events = skull.setup(5, {"first_player": 3}, Rng("x"))
    assert events == [GameSetUp(seats=5), RoundStarted(round=1, starter=3)]
    assert skull.to_act(given(*events)) == (3,)


def test_default_first_player_is_drawn_with_the_rng_and_recorded() -> None:
    starters = {skull.setup(6, {}, Rng(f"seed{i}"))[1].starter for i in range(40)}
    assert starters == set(range(6))  # drawn, so every seat comes up
    # and the draw is reproducible from the seed
    assert skull.setup(6, {}, Rng("a")) == skull.setup(6, {}, Rng("a"))


@pytest.mark.parametrize(
    ("seats", "options", "field"),
    [
        (2, {}, "seats"),
        (13, {}, "seats"),
        (4, {"next_starter": "french"}, "next_starter"),
        (4, {"first_player": 4}, "first_player"),
        (4, {"first_player": True}, "first_player"),
        (4, {"colour": "red"}, "colour"),
    ],
)
def test_bad_options_are_rejected(seats: int, options: dict[str, Any], field: str) -> None:
    with pytest.raises(errors.GameError) as info:
        skull.parse_options(seats, options)
    assert info.value.code == errors.INVALID_OPTIONS
    assert field in info.value.errors


def test_options_defaults() -> None:
    assert skull.parse_options(3, {}) == {"next_starter": "czech", "first_player": None}
    assert skull.parse_options(12, {"next_starter": "english", "first_player": 11}) == {
        "next_starter": "english",
        "first_player": 11,
    }


# --- the rule book's worked example ------------------------------------------------------------


def test_rule_book_example_filip_katka_jana_marek() -> None:
    filip, katka, jana, marek = 0, 1, 2, 3
    # Given everyone placed a disc (Katka starts), then Katka, Jana and Marek one more each;
    # Jana's skull lies under a flower
    state = new_game(4, first=katka)
    state, _ = play(
        state,
        (katka, F),
        (jana, S),
        (marek, F),
        (filip, F),
        (katka, F),
        (jana, F),
        (marek, F),
    )
    # When Filip opens with 2, Katka says 3, Jana 4, Marek 5, and the others pass
    state, log = play(
        state,
        (filip, Bid(count=2)),
        (katka, Bid(count=3)),
        (jana, Bid(count=4)),
        (marek, Bid(count=5)),
        (filip, Pass()),
        (katka, Pass()),
        (jana, Pass()),
    )
    # Then Marek is the challenger for 5
    assert log[-2:] == [BidPassed(seat=jana), ChallengeStarted(seat=marek, bid=5)]
    assert skull.to_act(state) == (marek,)
    # When he flips his own two flowers, Filip's flower, Jana's flower, then Jana's skull
    state, log = play(state, (marek, Flip(seat=marek)))
    assert log == [DiscFlipped(seat=marek, disc=FLOWER)] * 2
    state, log = play(state, (marek, Flip(seat=filip)), (marek, Flip(seat=jana)))
    assert log == [DiscFlipped(seat=filip, disc=FLOWER), DiscFlipped(seat=jana, disc=FLOWER)]
    state, log = play(state, (marek, Flip(seat=jana)))
    # Then the challenge fails on Jana's skull, and Marek's four discs are shuffled face down
    assert log[:2] == [
        DiscFlipped(seat=jana, disc=SKULL),
        ChallengeFailed(seat=marek, skull_owner=jana),
    ]
    shuffle = log[2]
    assert isinstance(shuffle, DiscsShuffled)
    assert (shuffle.seat, shuffle.count, sorted(shuffle.order)) == (
        marek,
        4,
        [FLOWER] * 3 + [SKULL],
    )
    assert skull.to_act(state) == (jana,)
    # When Jana picks one of them blindly
    state, log = play(state, (jana, PickDisc(index=2)))
    lost = shuffle.order[2]
    # Then Marek loses it, and Marek starts the next round
    assert log == [
        DiscLost(seat=marek, disc=lost, picked_by=jana, index=2),
        RoundStarted(round=2, starter=marek),
    ]
    assert skull.view(state, marek)["lost"] == [lost]
    assert skull.view(state, jana)["lost"] == []
    assert skull.view(state, None)["players"][marek]["discs"] == 3
    assert skull.view(state, marek)["hand"][lost] == (3 if lost == FLOWER else 1) - 1
    assert skull.to_act(state) == (marek,)
    assert [p["stack_size"] for p in skull.view(state, None)["players"]] == [0] * 4


# --- placing -----------------------------------------------------------------------------------


def test_everyone_places_a_first_disc_before_anyone_bids() -> None:
    # Given seats 0 and 1 placed their first disc
    state, _ = play(new_game(4), (0, F), (1, F))
    # When seat 2 tries to open the bidding, then it may not yet
    assert_illegal(state, 2, Bid(count=1), "place_first_disc")
    assert all(c.TYPE == "place" for c in skull.legal_commands(state, 2))


def test_after_the_first_pass_a_player_places_or_bids() -> None:
    state, _ = play(new_game(3), *first_pass(3))
    # Then the starter may place either face or bid 1..3
    assert skull.legal_commands(state, 0) == [F, S, Bid(count=1), Bid(count=2), Bid(count=3)]
    # When it places, then the disc goes on top of its own stack and the turn goes left
    state, log = play(state, (0, S))
    assert log == [DiscPlaced(seat=0, disc=SKULL), TurnStarted(seat=1)]
    assert skull.view(state, 0)["stack"] == [FLOWER, SKULL]
    assert skull.view(state, 0)["hand"] == {FLOWER: 2, SKULL: 0}


def test_a_player_with_no_disc_in_hand_must_bid() -> None:
    # Given seat 0 has placed all four discs
    state, _ = play(
        new_game(3), *first_pass(3), (0, F), (1, F), (2, F), (0, F), (1, F), (2, F), (0, S)
    )
    state, _ = play(state, (1, S), (2, S))
    # When it is seat 0's turn again, then it cannot place, only bid
    assert skull.to_act(state) == (0,)
    assert_illegal(state, 0, F, "must_bid_empty_hand")
    assert all(isinstance(c, Bid) for c in skull.legal_commands(state, 0))


def test_an_empty_hand_forces_the_opening_bid_but_not_a_raise() -> None:
    # Given seat 1 has one disc left and placed it in the first pass
    state = given(
        GameSetUp(seats=3), *lose(1, FLOWER, FLOWER, SKULL), RoundStarted(round=2, starter=0)
    )
    state, _ = play(state, *first_pass(3))
    # When no one has bid yet, then on its turn it must open the bidding
    placed, _ = play(state, (0, F))
    assert skull.legal_commands(placed, 1) == [Bid(count=c) for c in range(1, 5)]
    # When seat 0 opened instead, then it raises or passes like anyone else ("buď přebít
    # nabídku ..., nebo hlásit pas")
    state, _ = play(state, (0, Bid(count=1)))
    assert skull.legal_commands(state, 1) == [Bid(count=2), Bid(count=3), Pass()]
    _, log = play(state, (1, Pass()))
    assert log == [BidPassed(seat=1), TurnStarted(seat=2)]


def test_placing_a_disc_you_do_not_hold() -> None:
    state, _ = play(new_game(3), (0, S), (1, F), (2, F))
    assert_illegal(state, 0, S, "no_such_disc")


def test_placing_out_of_turn() -> None:
    err = rejected(new_game(3), 1, F)
    assert err.code == errors.NOT_YOUR_TURN


def test_eliminated_players_are_skipped() -> None:
    # Given seat 1 has lost every disc
    state = given(
        GameSetUp(seats=4),
        *lose(1, FLOWER, FLOWER, FLOWER, SKULL),
        RoundStarted(round=1, starter=0),
    )
    # When seat 0 places, then seat 2 is next
    _, log = play(state, (0, F))
    assert log[-1] == TurnStarted(seat=2)
    assert_illegal(state, 1, F, "eliminated")
    # and seat 1's empty stack does not block the bidding
    state, _ = play(state, (0, F), (2, F), (3, F))
    assert Bid(count=3) in skull.legal_commands(state, 0)


# --- bidding -----------------------------------------------------------------------------------


def test_bid_above_the_discs_on_the_table() -> None:
    state, _ = play(new_game(3), *first_pass(3))
    assert_illegal(state, 0, Bid(count=4), "bid_above_cap")


def test_bid_not_higher_than_the_current_bid() -> None:
    state, _ = play(new_game(4), *first_pass(4), (0, F), (1, Bid(count=3)))
    assert_illegal(state, 2, Bid(count=3), "bid_not_higher")
    assert_illegal(state, 2, Bid(count=2), "bid_not_higher")
    assert skull.legal_commands(state, 2) == [Bid(count=4), Bid(count=5), Pass()]


def test_no_more_discs_once_the_bidding_opened() -> None:
    state, _ = play(new_game(3), *first_pass(3), (0, Bid(count=1)))
    assert skull.view(state, None)["phase"] == "bidding"
    assert_illegal(state, 1, F, "wrong_phase")


def test_pass_is_only_for_the_bidding() -> None:
    state, _ = play(new_game(3), *first_pass(3))
    assert_illegal(state, 0, Pass(), "wrong_phase")


def test_a_bid_of_every_disc_on_the_table_ends_the_bidding_at_once() -> None:
    state, _ = play(new_game(4), *first_pass(4), (0, Bid(count=1)))
    _, log = play(state, (1, Bid(count=4)))
    assert log == [BidMade(seat=1, count=4), ChallengeStarted(seat=1, bid=4)]


def test_opening_with_every_disc_on_the_table_is_allowed() -> None:
    state, _ = play(new_game(3), *first_pass(3))
    _, log = play(state, (0, Bid(count=3)))
    assert log == [BidMade(seat=0, count=3), ChallengeStarted(seat=0, bid=3)]


def test_a_passed_player_is_out_of_this_bidding() -> None:
    # Given seat 0 opened, seat 1 passed and seat 2 raised
    state, log = play(
        new_game(4), *first_pass(4), (0, Bid(count=1)), (1, Pass()), (2, Bid(count=2))
    )
    assert log[-1] == TurnStarted(seat=3)
    # When seat 3 raises, then the turn skips seat 1 and goes to seat 0
    state, log = play(state, (3, Bid(count=3)))
    assert log[-1] == TurnStarted(seat=0)
    assert skull.view(state, None)["players"][1]["passed"] is True
    # and seat 1 can neither bid nor pass again
    assert_illegal(state, 1, Bid(count=4), "passed")
    assert_illegal(state, 1, Pass(), "passed")
    assert skull.legal_commands(state, 1) == []


def test_when_all_others_passed_the_highest_bidder_challenges() -> None:
    state, _ = play(new_game(4), *first_pass(4), (0, Bid(count=1)), (1, Bid(count=2)))
    state, log = play(state, (2, Pass()), (3, Pass()))
    assert log[-1] == TurnStarted(seat=0)
    state, log = play(state, (0, Pass()))
    assert log == [BidPassed(seat=0), ChallengeStarted(seat=1, bid=2)]
    assert skull.view(state, None)["challenger"] == 1
    assert skull.view(state, None)["phase"] == "flipping"


# --- flipping ----------------------------------------------------------------------------------


def test_flip_others_before_own_discs_is_illegal() -> None:
    state, _ = play(challenge_state(), (0, Bid(count=2)), (1, Pass()), (2, Pass()))
    assert_illegal(state, 0, Flip(seat=2), "own_discs_first")
    assert skull.legal_commands(state, 0) == [Flip(seat=0)]


def test_flipping_your_own_seat_turns_the_whole_stack_top_down() -> None:
    # Given seat 0 has flower, skull, flower (top) and bids everything
    state, _ = play(new_game(3), (0, F), (1, F), (2, F), (0, S), (1, F), (2, F), (0, F))
    state, _ = play(state, (1, F), (2, F))  # 9 discs: seat 0 has 3
    state, _ = play(state, (0, Bid(count=9)))
    # When it flips its own stack, then the top flower then its skull: the challenge fails
    _, log = play(state, (0, Flip(seat=0)))
    assert log == [
        DiscFlipped(seat=0, disc=FLOWER),
        DiscFlipped(seat=0, disc=SKULL),
        ChallengeFailed(seat=0, skull_owner=0),
    ]


def test_own_stack_turns_over_whole_even_past_the_bid() -> None:
    # Given seat 0 has two flowers and bid 1
    state, _ = play(new_game(3), *first_pass(3), (0, F), (1, Bid(count=1)))
    state, _ = play(state, (2, Pass()), (0, Pass()))
    assert skull.to_act(state) == (1,)
    state, _ = play(new_game(3), *first_pass(3), (0, F), (1, F), (2, F), (0, Bid(count=1)))
    state, _ = play(state, (1, Pass()), (2, Pass()))
    # When it flips its own seat, then both own flowers turn (the book: first ALL your own
    # discs), and the bid of 1 is met
    _, log = play(state, (0, Flip(seat=0)))
    assert log == [
        DiscFlipped(seat=0, disc=FLOWER),
        DiscFlipped(seat=0, disc=FLOWER),
        ChallengeWon(seat=0, wins=1),
        RoundStarted(round=2, starter=0),
    ]


def test_an_own_skull_under_enough_flowers_still_fails_the_challenge() -> None:
    # Given seat 0 placed a skull, then two flowers on it, and challenges for only 2
    state, _ = play(new_game(3), (0, S), (1, F), (2, F), (0, F), (1, F), (2, F), (0, F))
    state, _ = play(state, (1, Bid(count=1)), (2, Pass()), (0, Bid(count=2)), (1, Pass()))
    assert state.challenger == 0 and state.bid == 2
    # When it flips its own stack, then all three discs turn, the skull too: it has failed
    _, log = play(state, (0, Flip(seat=0)))
    assert log[:3] == [
        DiscFlipped(seat=0, disc=FLOWER),
        DiscFlipped(seat=0, disc=FLOWER),
        DiscFlipped(seat=0, disc=SKULL),
    ]
    assert log[3] == ChallengeFailed(seat=0, skull_owner=0)


def test_flip_an_empty_stack() -> None:
    # Given seat 0 challenges for 3 and flipped its own flower, then seat 2's only disc
    state, _ = play(challenge_state(), (0, Bid(count=3)), (1, Pass()), (2, Pass()))
    state, _ = play(state, (0, Flip(seat=0)), (0, Flip(seat=2)))
    # When it flips seat 2 again (or its own seat), then there is nothing face down there
    assert_illegal(state, 0, Flip(seat=2), "empty_stack")
    assert_illegal(state, 0, Flip(seat=0), "empty_stack")
    assert skull.legal_commands(state, 0) == [Flip(seat=1)]


def test_flip_only_the_top_disc_of_another_stack() -> None:
    # Given seat 1 has flower under skull, and seat 0 flipped its own flower
    state, _ = play(challenge_state(), (0, Bid(count=2)), (1, Pass()), (2, Pass()))
    state, _ = play(state, (0, Flip(seat=0)))
    # When it flips seat 1, then the top disc (the skull) comes up and the challenge fails
    _, log = play(state, (0, Flip(seat=1)))
    assert log[:2] == [DiscFlipped(seat=1, disc=SKULL), ChallengeFailed(seat=0, skull_owner=1)]


def test_flipping_is_for_the_challenger_only() -> None:
    state, _ = play(challenge_state(), (0, Bid(count=2)), (1, Pass()), (2, Pass()))
    assert rejected(state, 1, Flip(seat=2)).code == errors.NOT_YOUR_TURN
    assert_illegal(state, 0, Bid(count=3), "wrong_phase")


def test_success_scores_a_win_marker_and_the_challenger_starts() -> None:
    state, _ = play(challenge_state(), (0, Bid(count=2)), (1, Pass()), (2, Pass()))
    state, log = play(state, (0, Flip(seat=0)), (0, Flip(seat=2)))
    assert log[-2:] == [ChallengeWon(seat=0, wins=1), RoundStarted(round=2, starter=0)]
    v = skull.view(state, None)
    assert v["scores"] == [1, 0, 0]
    assert [p["stack_size"] for p in v["players"]] == [0, 0, 0]  # discs back in hand
    assert skull.view(state, 0)["hand"] == {FLOWER: 3, SKULL: 1}


def test_second_success_wins_the_game() -> None:
    # Given seat 0 already won a challenge
    state = given(
        GameSetUp(seats=3), ChallengeWon(seat=0, wins=1), RoundStarted(round=2, starter=0)
    )
    state, _ = play(state, *first_pass(3), (0, Bid(count=3)))
    state, log = play(state, (0, Flip(seat=0)), (0, Flip(seat=1)), (0, Flip(seat=2)))
    assert log[-2:] == [
        ChallengeWon(seat=0, wins=2),
        GameWon(winners=(0,), reason="challenges"),
    ]
    assert skull.outcome(state) == {
        "scores": [2, 0, 0],
        "winners": [0],
        "ranks": [1, 2, 2],
        "draw": False,
    }
    assert skull.to_act(state) == ()
    assert skull.view(state, None)["phase"] == "game_over"
    # and no command is accepted any more
    assert rejected(state, 1, F).code == errors.GAME_OVER


def test_outcome_is_none_while_the_game_runs() -> None:
    assert skull.outcome(new_game(3)) is None


# --- failure and the penalty -------------------------------------------------------------------


def failed_on_seat_1(**options: Any) -> tuple[State, DiscsShuffled]:
    """Seat 0 challenged for 2 and met seat 1's skull."""
    state, _ = play(challenge_state(**options), (0, Bid(count=2)), (1, Pass()), (2, Pass()))
    state, log = play(state, (0, Flip(seat=0)), (0, Flip(seat=1)))
    assert isinstance(log[-1], DiscsShuffled)
    return state, log[-1]


def test_failure_shuffles_the_challengers_discs_for_the_skull_owner() -> None:
    state, shuffle = failed_on_seat_1()
    assert skull.view(state, None)["phase"] == "penalty"
    assert skull.to_act(state) == (1,)
    assert skull.legal_commands(state, 1) == [PickDisc(index=i) for i in range(4)]
    # the order is drawn from the rng and recorded, so replay needs no seed
    assert sorted(shuffle.order) == [FLOWER, FLOWER, FLOWER, SKULL]
    # but no seat (not even the challenger) sees it
    for seat in (None, 0, 1, 2):
        assert skull.redact(shuffle, seat)["data"]["order"] is None
        assert skull.view(state, seat)["pick_from"] == 4
    # and everyone took their discs back
    assert [p["stack_size"] for p in skull.view(state, None)["players"]] == [0, 0, 0]
    assert skull.view(state, None)["flipped"] == [
        {"seat": 0, "disc": FLOWER},
        {"seat": 1, "disc": SKULL},
    ]


def test_shuffle_order_depends_on_the_rng() -> None:
    state, _ = play(challenge_state(), (0, Bid(count=2)), (1, Pass()), (2, Pass()))
    state, _ = play(state, (0, Flip(seat=0)))
    orders = {
        skull.decide(state, 0, Flip(seat=1), Rng("seed", f"v{i}"))[-1].order for i in range(30)
    }
    assert len(orders) == 4  # the skull lands in each of the four places


def test_pick_by_a_seat_that_is_not_the_skull_owner() -> None:
    state, _ = failed_on_seat_1()
    assert_illegal(state, 2, PickDisc(index=0), "not_skull_owner")
    assert_illegal(state, 0, PickDisc(index=0), "not_skull_owner")


def test_pick_an_index_that_does_not_exist() -> None:
    state, _ = failed_on_seat_1()
    assert_illegal(state, 1, PickDisc(index=4), "no_such_disc")


def test_the_skull_owner_cannot_choose_by_face() -> None:
    state, _ = failed_on_seat_1()
    assert_illegal(state, 1, Discard(disc=SKULL), "not_own_skull")


def test_the_lost_disc_is_known_only_to_its_owner() -> None:
    state, shuffle = failed_on_seat_1()
    state, log = play(state, (1, PickDisc(index=0)))
    lost_event = log[0]
    assert lost_event == DiscLost(seat=0, disc=shuffle.order[0], picked_by=1, index=0)
    assert skull.redact(lost_event, 0)["data"]["disc"] == shuffle.order[0]
    for seat in (None, 1, 2):
        assert skull.redact(lost_event, seat)["data"] == {
            "seat": 0,
            "disc": None,
            "picked_by": 1,
            "index": 0,
        }
        assert shuffle.order[0] not in json.dumps(skull.view(state, seat)["lost"] or [])
    assert skull.view(state, 0)["lost"] == [shuffle.order[0]]
    assert log[-1] == RoundStarted(round=2, starter=0)


def test_own_skull_the_challenger_chooses_which_disc_to_lose() -> None:
    # Given seat 0 challenged with its own skull on its stack
    state, _ = play(new_game(3), (0, S), (1, F), (2, F), (0, Bid(count=2)))
    state, _ = play(state, (1, Pass()), (2, Pass()))
    state, log = play(state, (0, Flip(seat=0)))
    # Then no shuffle: the challenger itself must discard
    assert log == [DiscFlipped(seat=0, disc=SKULL), ChallengeFailed(seat=0, skull_owner=0)]
    assert skull.to_act(state) == (0,)
    assert skull.legal_commands(state, 0) == [Discard(disc=FLOWER), Discard(disc=SKULL)]
    assert_illegal(state, 0, PickDisc(index=0), "own_skull_discard")
    assert_illegal(state, 1, PickDisc(index=0), "not_skull_owner")
    # When it discards its skull
    state, log = play(state, (0, Discard(disc=SKULL)))
    assert log == [
        DiscLost(seat=0, disc=SKULL, picked_by=0, index=None),
        RoundStarted(round=2, starter=0),
    ]
    # Then only it knows what it lost
    assert skull.redact(log[0], 1)["data"]["disc"] is None
    assert skull.view(state, 0)["lost"] == [SKULL]
    assert skull.view(state, 0)["hand"] == {FLOWER: 3, SKULL: 0}
    assert skull.view(state, 1)["players"][0]["discs"] == 3


def test_discard_a_disc_you_no_longer_own() -> None:
    state = given(
        GameSetUp(seats=3), *lose(0, FLOWER, FLOWER, FLOWER), RoundStarted(round=2, starter=0)
    )
    state, _ = play(state, (0, S), (1, F), (2, F), (0, Bid(count=1)), (1, Pass()), (2, Pass()))
    state, _ = play(state, (0, Flip(seat=0)))
    assert_illegal(state, 0, Discard(disc=FLOWER), "no_such_disc")
    assert skull.legal_commands(state, 0) == [Discard(disc=SKULL)]


def test_challenger_losing_the_last_disc_is_eliminated_and_the_left_player_starts() -> None:
    # Given seat 1 has only a flower left, seat 2 is already out, and seat 1 challenges
    state = given(
        GameSetUp(seats=4),
        *lose(1, FLOWER, FLOWER, SKULL),
        *lose(2, FLOWER, FLOWER, FLOWER, SKULL),
        RoundStarted(round=5, starter=1),
    )
    state, _ = play(state, (1, F), (3, S), (0, F), (1, Bid(count=2)), (3, Pass()), (0, Pass()))
    state, _ = play(state, (1, Flip(seat=1)))
    # When it meets seat 3's skull and seat 3 takes its last disc
    state, log = play(state, (1, Flip(seat=3)))
    assert log[-1] == DiscsShuffled(seat=1, count=1, order=(FLOWER,))
    state, log = play(state, (3, PickDisc(index=0)))
    # Then seat 1 is out, and the next seat still in on its left (3, skipping 2) starts
    assert log == [
        DiscLost(seat=1, disc=FLOWER, picked_by=3, index=0),
        PlayerEliminated(seat=1),
        RoundStarted(round=6, starter=3),
    ]
    assert skull.view(state, None)["players"][1]["eliminated"] is True
    assert skull.legal_commands(state, 1) == []


def test_the_last_player_with_discs_wins() -> None:
    # Given three players, seat 2 out, seat 0 down to its skull
    state = given(
        GameSetUp(seats=3),
        ChallengeWon(seat=0, wins=1),
        *lose(0, FLOWER, FLOWER, FLOWER),
        *lose(2, FLOWER, FLOWER, FLOWER, SKULL),
        RoundStarted(round=7, starter=0),
    )
    state, _ = play(state, (0, S), (1, F), (0, Bid(count=1)), (1, Pass()))
    # When seat 0 flips its own skull and must discard it
    state, _ = play(state, (0, Flip(seat=0)))
    state, log = play(state, (0, Discard(disc=SKULL)))
    # Then seat 1 wins though seat 0 has a win marker
    assert log == [
        DiscLost(seat=0, disc=SKULL, picked_by=0, index=None),
        PlayerEliminated(seat=0),
        GameWon(winners=(1,), reason="last_standing"),
    ]
    assert skull.outcome(state) == {
        "scores": [1, 0, 0],
        "winners": [1],
        "ranks": [2, 1, 3],
        "draw": False,
    }


def test_czech_rule_challenger_starts_even_after_another_players_skull() -> None:
    state, _ = failed_on_seat_1()
    _, log = play(state, (1, PickDisc(index=0)))
    assert log[-1] == RoundStarted(round=2, starter=0)


# --- the English next-starter option -----------------------------------------------------------


def test_english_rule_the_skull_owner_starts() -> None:
    state, _ = failed_on_seat_1(next_starter="english")
    _, log = play(state, (1, PickDisc(index=0)))
    assert log[-1] == RoundStarted(round=2, starter=1)


def test_english_rule_after_a_success_the_challenger_starts() -> None:
    state, _ = play(
        challenge_state(next_starter="english"), (0, Bid(count=2)), (1, Pass()), (2, Pass())
    )
    _, log = play(state, (0, Flip(seat=0)), (0, Flip(seat=2)))
    assert log[-1] == RoundStarted(round=2, starter=0)


def english_own_skull(*given_events: Any) -> State:
    state = given(
        GameSetUp(seats=3, next_starter="english"),
        *given_events,
        RoundStarted(round=1, starter=0),
    )
    state, _ = play(state, (0, S), (1, F), (2, F), (0, Bid(count=1)), (1, Pass()), (2, Pass()))
    state, _ = play(state, (0, Flip(seat=0)))
    return state


def test_english_rule_own_skull_the_challenger_chooses_the_starter() -> None:
    state = english_own_skull()
    state, log = play(state, (0, Discard(disc=FLOWER)))
    assert log[-1] == StarterChoiceOffered(seat=0)
    assert skull.view(state, None)["phase"] == "choosing_starter"
    assert skull.legal_commands(state, 0) == [ChooseStarter(seat=s) for s in range(3)]
    assert rejected(state, 1, ChooseStarter(seat=1)).code == errors.NOT_YOUR_TURN
    assert_illegal(state, 0, ChooseStarter(seat=3), "no_such_seat")
    _, log = play(state, (0, ChooseStarter(seat=2)))
    assert log == [RoundStarted(round=2, starter=2)]


def test_english_rule_an_eliminated_challenger_still_chooses_among_the_others() -> None:
    state = english_own_skull(*lose(0, FLOWER, FLOWER, FLOWER))
    state, log = play(state, (0, Discard(disc=SKULL)))
    assert log[-2:] == [PlayerEliminated(seat=0), StarterChoiceOffered(seat=0)]
    assert skull.legal_commands(state, 0) == [ChooseStarter(seat=1), ChooseStarter(seat=2)]
    assert_illegal(state, 0, ChooseStarter(seat=0), "eliminated")
    assert_illegal(state, 0, F, "wrong_phase")


# --- commands from JSON ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "command"),
    [
        ({"type": "place", "disc": "flower"}, Place(disc=FLOWER)),
        ({"type": "place", "disc": "skull", "expected_version": 7}, Place(disc=SKULL)),
        ({"type": "bid", "count": 3}, Bid(count=3)),
        ({"type": "pass"}, Pass()),
        ({"type": "flip", "seat": 2}, Flip(seat=2)),
        ({"type": "pick_disc", "index": 0}, PickDisc(index=0)),
        ({"type": "discard", "disc": "flower"}, Discard(disc=FLOWER)),
        ({"type": "choose_starter", "seat": 1}, ChooseStarter(seat=1)),
    ],
)
def test_parse_command(data: dict[str, Any], command: Any) -> None:
    assert skull.parse_command(data) == command
    assert skull.parse_command(skull.command_to_json(command)) == command


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"type": "shuffle"}, "type"),
        ({}, "type"),
        ({"type": 3}, "type"),
        ({"type": "place", "disc": "rose"}, "disc"),
        ({"type": "place"}, "disc"),
        ({"type": "bid", "count": "3"}, "count"),
        ({"type": "bid", "count": 0}, "count"),
        ({"type": "bid", "count": True}, "count"),
        ({"type": "bid", "count": 2.0}, "count"),
        ({"type": "flip", "seat": -1}, "seat"),
        ({"type": "flip"}, "seat"),
        ({"type": "pick_disc", "index": None}, "index"),
        ({"type": "discard", "disc": None}, "disc"),
    ],
)
def test_parse_command_rejects_malformed_input(data: dict[str, Any], field: str) -> None:
    with pytest.raises(errors.GameError) as info:
        skull.parse_command(data)
    assert info.value.code == errors.INVALID_COMMAND
    assert field in info.value.errors


@pytest.mark.parametrize(
    "data",
    [
        {"type": "fly"},
        {"type": "Bid"},
        {"type": "buy", "tile": "L07"},  # an Isle of Skye command
        {"type": ""},
        {"type": None},
        {"type": ["bid"]},
        {"count": 2},
    ],
)
def test_unknown_command_type_is_command_invalid(data: dict[str, Any]) -> None:
    # Given any game, when a command of no Skull type arrives, then command/invalid naming the
    # type field, with no rule (no rule of the game is involved).
    with pytest.raises(errors.GameError) as info:
        skull.parse_command(data)
    assert (info.value.code, info.value.rule) == (errors.INVALID_COMMAND, None)
    assert "type" in info.value.errors


@pytest.mark.parametrize("body", [[], "pass", None, 3])
def test_a_command_that_is_no_object_is_command_invalid_naming_the_body(body: Any) -> None:
    # The same field as Isle of Skye and Fox name for it: body.
    with pytest.raises(errors.GameError) as info:
        skull.parse_command(body)
    assert info.value.code == errors.INVALID_COMMAND
    assert "body" in info.value.errors


@dataclasses.dataclass(frozen=True)
class Fly:
    """No Skull command: what decide gets when a caller skips parse_command."""

    TYPE = "fly"


@pytest.mark.parametrize("command", [Fly(), {"type": "bid", "count": 1}, None])
@pytest.mark.parametrize(
    ("label", "seat"),
    [("to act", 0), ("not to act", 1), ("eliminated", 2)],
)
def test_decide_answers_command_invalid_for_an_object_that_is_no_command(
    command: Any, label: str, seat: int
) -> None:
    # Given seat 0 to place and seat 2 out of the game, when decide gets something that is no
    # Skull command, then command/invalid whoever sends it (before: not_your_turn, or
    # move/illegal "eliminated", for a seat not to act).
    state = given(
        GameSetUp(seats=4),
        *lose(2, FLOWER, FLOWER, FLOWER, SKULL),
        RoundStarted(round=1, starter=0),
    )
    err = rejected(state, seat, command)
    assert (err.code, err.rule) == (errors.INVALID_COMMAND, None), (label, err.to_dict())
    assert "type" in err.errors


@pytest.mark.parametrize("seat", [-1, 4, "0", None])
def test_decide_for_a_seat_that_does_not_exist_is_not_your_turn(seat: Any) -> None:
    # As in Isle of Skye: a seat number outside the table (or no number) is not to act.
    err = rejected(new_game(4), seat, F)
    assert err.code == errors.NOT_YOUR_TURN


def test_flip_of_a_seat_that_does_not_exist() -> None:
    state, _ = play(challenge_state(), (0, Bid(count=2)), (1, Pass()), (2, Pass()))
    state, _ = play(state, (0, Flip(seat=0)))
    assert_illegal(state, 0, Flip(seat=3), "no_such_seat")


# --- views, redaction, determinize, serialization ----------------------------------------------


def test_views_hide_other_seats_discs() -> None:
    # Given seat 1 placed its skull and seat 2 a flower
    state, _ = play(new_game(3), (0, F), (1, S), (2, F))
    v0 = skull.view(state, 0)
    assert v0["hand"] == {FLOWER: 2, SKULL: 1}
    assert v0["stack"] == [FLOWER]
    assert v0["players"][1] == {
        "seat": 1,
        "stack_size": 1,
        "face_down": 1,
        "hand_size": 3,
        "discs": 4,
        "wins": 0,
        "passed": False,
        "eliminated": False,
        "known_skull": True,
    }
    # Then seat 0's view is the same whichever face seat 1 placed
    other, _ = play(new_game(3), (0, F), (1, F), (2, F))
    assert skull.view(other, 0) == v0
    assert skull.view(other, None) == skull.view(state, None)
    assert skull.view(other, 1) != skull.view(state, 1)
    spectator = skull.view(state, None)
    assert (spectator["hand"], spectator["stack"], spectator["lost"]) == (None, None, None)
    assert spectator["legal_commands"] == []
    assert skull.view(state, 0)["legal_commands"] == [
        {"type": "place", "disc": "flower"},
        {"type": "place", "disc": "skull"},
        {"type": "bid", "count": 1},
        {"type": "bid", "count": 2},
        {"type": "bid", "count": 3},
    ]
    json.dumps(v0)


def test_redact_hides_a_placed_disc_from_everyone_but_its_owner() -> None:
    event = DiscPlaced(seat=1, disc=SKULL)
    assert skull.redact(event, 1) == {"type": "disc_placed", "data": {"seat": 1, "disc": "skull"}}
    for seat in (None, 0, 2):
        assert skull.redact(event, seat) == {
            "type": "disc_placed",
            "data": {"seat": 1, "disc": None},
        }
    assert skull.redact(DiscFlipped(seat=1, disc=SKULL), 0)["data"]["disc"] == SKULL


def test_determinize_is_consistent_with_the_view() -> None:
    state, _ = failed_on_seat_1()
    for seat in range(3):
        v = skull.view(state, seat)
        for i in range(10):
            full = skull.determinize(v, seat, Rng("det", str(i)))
            assert skull.view(full, seat) == v
    # while flipping, too: seat 1's skull is known on top of its stack
    state, _ = play(challenge_state(), (0, Bid(count=3)), (1, Pass()), (2, Pass()))
    state, _ = play(state, (0, Flip(seat=0)), (0, Flip(seat=2)))
    v = skull.view(state, 2)
    full = skull.determinize(v, 2, Rng("det"))
    assert skull.view(full, 2) == v
    assert full.players[0].stack == (FLOWER,)
    assert full.players[2].stack == (FLOWER,)
    # and from the service's projection, whose extra keys (``seats`` a list) it ignores
    projected = {**v, "seats": [{"seat": s} for s in range(3)], "seat": 2, "outcome": None}
    assert skull.view(skull.determinize(projected, 2, Rng("det")), 2) == v


# --- what every seat can deduce across rounds ---------------------------------------------------


def known(state: State) -> list[bool | None]:
    """Every seat's public ``known_skull`` (the same in every seat's view)."""
    views = [skull.view(state, s) for s in (None, *range(state.seats))]
    facts = {tuple(p["known_skull"] for p in v["players"]) for v in views}
    assert len(facts) == 1, facts
    return list(facts.pop())


def dealt(state: State, seat: int, of: int, seeds: int = 40) -> set[tuple[int, int]]:
    """The (flowers, skulls) that ``determinize`` deals seat ``of`` from ``seat``'s view over
    many seeds; every determinized state shows ``seat`` its view back."""
    v = skull.view(state, seat)
    out: set[tuple[int, int]] = set()
    for i in range(seeds):
        full = skull.determinize(v, seat, Rng("det", str(i)))
        assert skull.view(full, seat) == v
        assert full.players[seat] == state.players[seat]  # its own discs, stack and losses
        out.add((full.players[of].flowers, full.players[of].skulls))
    return out


def test_a_revealed_skull_stays_known_until_its_owner_loses_a_disc() -> None:
    # Given seat 1 lost a disc earlier: 3 left, and nobody else knows whether its skull is one
    state = given(GameSetUp(seats=3), *lose(1, FLOWER), RoundStarted(round=2, starter=1))
    assert known(state) == [True, None, True]
    assert dealt(state, 2, of=1) == {(3, 0), (2, 1)}
    # When seat 0 challenges for 2, meets seat 1's skull, and seat 1 takes one of its discs
    state, _ = play(state, (1, F), (2, F), (0, F), (1, S), (2, Bid(count=1)), (0, Bid(count=2)))
    state, _ = play(state, (1, Pass()), (2, Pass()), (0, Flip(seat=0)), (0, Flip(seat=1)))
    state, log = play(state, (1, PickDisc(index=0)))
    assert log[-1] == RoundStarted(round=3, starter=0)
    # Then in the next round everyone still knows seat 1 holds a skull, while seat 0's loss
    # (seen by seat 0 alone) leaves its skull unknown to the others
    assert known(state) == [None, True, True]
    for seat in (0, 2):
        assert dealt(state, seat, of=1) == {(2, 1)}
    assert dealt(state, 2, of=0) == {(3, 0), (2, 1)}
    assert dealt(state, 0, of=0) == {(state.players[0].flowers, state.players[0].skulls)}
    # When seat 1 fails a challenge on seat 2's skull and loses a disc unseen
    state, _ = play(state, (0, F), (1, F), (2, S), (0, Bid(count=1)), (1, Bid(count=2)))
    state, _ = play(state, (2, Pass()), (0, Pass()), (1, Flip(seat=1)), (1, Flip(seat=2)))
    assert known(state) == [None, True, True]  # discs back, not yet lost
    state, _ = play(state, (2, PickDisc(index=1)))
    # Then its skull is unknown again (to all but seat 1)
    assert known(state) == [None, None, True]
    assert dealt(state, 0, of=1) == {(2, 0), (1, 1)}


def test_a_player_who_shows_every_disc_as_a_flower_is_known_to_have_no_skull() -> None:
    # Given seat 0 discarded its skull earlier: 3 flowers left, which only seat 0 knows
    state = given(GameSetUp(seats=3), *lose(0, SKULL), RoundStarted(round=2, starter=0))
    assert known(state) == [None, True, True]
    # When it places all three and wins a challenge for 3 by turning them up
    state, _ = play(state, *first_pass(3), (0, F), (1, F), (2, F), (0, F), (1, Bid(count=1)))
    state, log = play(state, (2, Pass()), (0, Bid(count=3)), (1, Pass()), (0, Flip(seat=0)))
    assert log[-2:] == [ChallengeWon(seat=0, wins=1), RoundStarted(round=3, starter=0)]
    # Then everyone knows it has no skull, and no determinization deals it one
    assert known(state) == [False, True, True]
    assert dealt(state, 1, of=0) == {(3, 0)}
    # and losing more discs does not change that; once out, a player owns no skull either
    assert known(reduce(skull.evolve, lose(0, FLOWER), state)) == [False, True, True]
    out = given(GameSetUp(seats=3), *lose(2, FLOWER, SKULL, FLOWER, FLOWER))
    assert known(out) == [True, True, False]


def test_flowers_shown_in_one_round_pin_a_player_down_while_flipping() -> None:
    # Given seat 2 has two discs left (skull unknown) and both are on its stack
    state = given(GameSetUp(seats=3), *lose(2, FLOWER, SKULL), RoundStarted(round=3, starter=0))
    state, _ = play(state, *first_pass(3), (0, F), (1, F), (2, F), (0, Bid(count=5)))
    state, _ = play(state, (1, Pass()), (2, Pass()), (0, Flip(seat=0)), (0, Flip(seat=2)))
    # When the challenger has turned up one of its flowers, then the skull is still open
    assert known(state)[2] is None
    assert dealt(state, 1, of=2) == {(2, 0), (1, 1)}
    # When it turns up the second, then seat 2 has shown all its discs as flowers
    state, _ = play(state, (0, Flip(seat=2)))
    assert known(state)[2] is False
    assert dealt(state, 1, of=2) == {(2, 0)}


def test_determinize_never_contradicts_what_the_seat_knows() -> None:
    # Given seat 1 (3 discs) showed its skull in round 1 and has lost nothing since, and in
    # round 2's flipping the challenger has turned up seat 1's top disc, a flower
    state = given(GameSetUp(seats=4), *lose(1, FLOWER), RoundStarted(round=1, starter=0))
    state, _ = play(state, *first_pass(4, faces={1: S}), (0, Bid(count=2)), (1, Pass()))
    state, _ = play(state, (2, Pass()), (3, Pass()), (0, Flip(seat=0)), (0, Flip(seat=1)))
    state, _ = play(state, (1, PickDisc(index=3)))
    faces = {1: S}
    state, _ = play(state, *first_pass(4, faces=faces), *first_pass(4), (0, Bid(count=4)))
    state, _ = play(state, (1, Pass()), (2, Pass()), (3, Pass()), (0, Flip(seat=0)))
    state, _ = play(state, (0, Flip(seat=1)))
    assert state.flipped[-1] == (1, FLOWER)
    assert known(state)[1] is True
    v = skull.view(state, 3)
    for i in range(60):
        full = skull.determinize(v, 3, Rng("never", str(i)))
        assert skull.view(full, 3) == v
        # then seat 1 always has its skull, and seat 0's turned-up flowers are where they were
        assert full.players[1].skulls == 1 and full.players[1].lost == (FLOWER,)
        assert full.players[0].stack == (FLOWER, FLOWER)
        assert full.players[3] == state.players[3]


EXAMPLES: list[Any] = [
    GameSetUp(seats=7, next_starter="english"),
    RoundStarted(round=1, starter=2),
    DiscPlaced(seat=1, disc=SKULL),
    TurnStarted(seat=2),
    BidMade(seat=2, count=3),
    BidPassed(seat=0),
    ChallengeStarted(seat=2, bid=3),
    DiscFlipped(seat=0, disc=FLOWER),
    ChallengeWon(seat=2, wins=1),
    ChallengeFailed(seat=2, skull_owner=1),
    DiscsShuffled(seat=2, count=3, order=(FLOWER, SKULL, FLOWER)),
    DiscLost(seat=2, disc=FLOWER, picked_by=1, index=1),
    PlayerEliminated(seat=2),
    StarterChoiceOffered(seat=2),
    GameWon(winners=(1,), reason="last_standing"),
]


def test_every_event_type_round_trips_through_json() -> None:
    assert {type(e) for e in EXAMPLES} == set(skull.EVENTS.values())
    for event in EXAMPLES:
        doc = json.loads(json.dumps(skull.event_to_json(event)))
        assert skull.event_from_json(doc) == event
        for seat in (None, 0, 1, 2):
            redacted = skull.redact(event, seat)
            assert redacted is not None
            skull.event_from_json(json.loads(json.dumps(redacted)))  # reads back too


def test_decide_never_mutates_the_state() -> None:
    state, _ = failed_on_seat_1()
    before = dataclasses.replace(state)
    when(state, 1, PickDisc(index=0))
    assert state == before
    assert state.shuffled == before.shuffled


def test_engine_names() -> None:
    assert (skull.NAME, skull.MIN_SEATS, skull.MAX_SEATS) == ("skull", 3, 12)
    assert "game_created" not in skull.EVENTS and "seed_revealed" not in skull.EVENTS
    assert set(skull.COMMANDS) >= {"place", "bid", "pass", "flip", "pick_disc", "discard"}


def test_decide_rejects_faces_that_do_not_exist() -> None:
    # Commands built in code skip parse_command; decide still refuses an unknown face
    assert_illegal(new_game(3), 0, Place(disc="rose"), "no_such_disc")
