"""The Fox in the Forest engine: rules as given/when/then scenarios on known deals."""

from __future__ import annotations

import math
from functools import reduce
from typing import Any

import pytest

from shared.games import errors, fox
from shared.games.errors import GameError
from shared.games.rng import Rng

BELLS, KEYS, MOONS = "bells", "keys", "moons"


def named(state: fox.State) -> fox.StateFields:
    """The state with named fields."""
    return fox.state_fields(state)


def c(suit: str, rank: int) -> int:
    """A card int."""
    return fox.card_code(suit, rank)


def j(card: int) -> dict[str, Any]:
    """A card as client JSON."""
    return fox.card_json(card)


def play(card: int) -> dict[str, Any]:
    return {"type": "play", "card": j(card)}


def exchange(card: int) -> dict[str, Any]:
    return {"type": "exchange_decree", "card": j(card)}


def give_back(card: int) -> dict[str, Any]:
    return {"type": "return_card", "card": j(card)}


KEEP = {"type": "keep_decree"}


def deal(
    h0: tuple[int, ...] = (),
    h1: tuple[int, ...] = (),
    *,
    decree: int | None = None,
    deck: tuple[int, ...] = (),
    dealer: int = 1,
    void0: tuple[str, ...] = (),
    void1: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A full first deal with these cards where given; hands are filled with other cards
    (not of the ``void`` suits), then the decree card and the deck take what is left.
    ``dealer=1`` by default, so seat 0 leads the first trick."""
    given = [*h0, *h1, *deck] + ([decree] if decree is not None else [])
    assert len(set(given)) == len(given)
    free = [x for x in range(33) if x not in given]

    def fill(hand: tuple[int, ...], void: tuple[str, ...]) -> list[int]:
        out = list(hand)
        for x in list(free):
            if len(out) == 13:
                break
            if fox.SUITS[x // 11] not in void:
                out.append(x)
                free.remove(x)
        assert len(out) == 13
        return out

    # The hand with voids picks first so that it is not starved of allowed suits.
    if len(void1) > len(void0):
        hand1 = fill(h1, void1)
        hand0 = fill(h0, void0)
    else:
        hand0 = fill(h0, void0)
        hand1 = fill(h1, void1)
    dec = decree if decree is not None else free.pop(0)
    dk = list(deck) + [free.pop(0) for _ in range(6 - len(deck))]
    return {
        "dealer": dealer,
        "hands": [[j(x) for x in hand0], [j(x) for x in hand1]],
        "decree": j(dec),
        "deck": [j(x) for x in dk],
    }


def start(d: dict[str, Any] | None = None, target: int = 21) -> fox.State:
    options: dict[str, Any] = {"target": target}
    if d is not None:
        options["deal"] = d
    return reduce(fox.evolve, fox.setup(2, options, Rng("test-seed")), None)  # type: ignore[arg-type]


def act(state: fox.State, seat: int, doc: dict[str, Any]) -> tuple[fox.State, list[Any]]:
    """The state after ``seat`` sends ``doc``, and the events it caused."""
    events = fox.decide(state, seat, fox.parse_command(doc), Rng("test-seed", "next"))
    for e in events:
        state = fox.evolve(state, e)
    return state, events


def types(events: list[Any]) -> list[str]:
    return [e.TYPE for e in events]


def rejected(state: fox.State, seat: int, doc: dict[str, Any]) -> GameError:
    """Then: ``seat`` sending ``doc`` fails, and the state is untouched; the error."""
    before = state
    with pytest.raises(GameError) as info:
        act(state, seat, doc)
    assert state == before
    return info.value


def assert_illegal(state: fox.State, seat: int, doc: dict[str, Any], rule: str) -> None:
    """Then: ``seat`` sending ``doc`` breaks ``rule``."""
    err = rejected(state, seat, doc)
    assert (err.code, err.rule) == (errors.ILLEGAL, rule), err


def trick(
    state: fox.State, lead: int, second: int, *, leader: int = 0
) -> tuple[fox.State, list[Any]]:
    """When ``leader`` leads ``lead`` and the other seat plays ``second``: the state after and
    the events of the second card."""
    state, _ = act(state, leader, play(lead))
    return act(state, 1 - leader, play(second))


def won(events: list[Any]) -> fox.TrickWon:
    """Then: the ``trick_won`` that ends ``events``."""
    assert type(events[-1]) is fox.TrickWon, types(events)
    return events[-1]


def first_trick(
    lead: int, second: int, *, decree: int | None = None, **deal_options: Any
) -> fox.TrickWon:
    """Given a deal where seat 0 holds ``lead`` and seat 1 ``second`` (the decree card moons 4
    unless ``decree`` says), when seat 0 leads and seat 1 follows: the trick's result."""
    decree = c(MOONS, 4) if decree is None else decree
    s = start(deal((lead,), (second,), decree=decree, **deal_options))
    _, events = trick(s, lead, second)
    return won(events)


def fox_follows_bells_10(
    *, decree: int, hand0: tuple[int, ...] = (), deck: tuple[int, ...] = ()
) -> tuple[fox.State, list[Any]]:
    """Given seat 0 holding bells 10 (and ``hand0``) and seat 1 no bells but the keys Fox and
    keys 8, when seat 0 leads bells 10 and seat 1 plays its Fox: the state (the Fox's owner to
    decide) and the Fox's events."""
    s = start(deal((c(BELLS, 10), *hand0), (c(KEYS, 3), c(KEYS, 8)), decree=decree, deck=deck,
                   void1=(BELLS,)))  # fmt: skip
    return trick(s, c(BELLS, 10), c(KEYS, 3))


def determinized(view: dict[str, Any], seat: int, rng: Rng) -> fox.State:
    """When ``seat`` determinizes its ``view``: the state, which shows ``seat`` that view."""
    state = fox.determinize(view, seat, rng)
    assert fox.view(state, seat) == view
    return state


def at_last_trick(
    hand0: list[int],
    hand1: list[int],
    *,
    leader: int = 0,
    tricks: tuple[int, int] = (6, 6),
    treasure: tuple[int, int] = (0, 0),
    decree: int | None = None,
    scores: tuple[int, int] = (0, 0),
    target: int = 21,
) -> fox.State:
    """Given: a consistent position before the 13th trick (all other cards played)."""
    s = start(deal(tuple(hand0[:1]), tuple(hand1[:1])))
    decree = named(s).decree if decree is None else decree
    deck = [x for x in range(33) if x not in (*hand0, *hand1, decree)][:6]
    rest = fox.ALL_CARDS & ~fox.mask_of([*hand0, *hand1, decree, *deck])
    return fox.replace_state(
        s,
        hand0=fox.mask_of(hand0),
        hand1=fox.mask_of(hand1),
        leader=leader,
        turn=leader,
        tricks=tricks,
        treasure=treasure,
        decree=decree,
        deck=tuple(deck),
        played=rest,
        game=named(s).game._replace(scores=scores, target=target),
    )


def last_trick_taken_by_seat_0(**given: Any) -> tuple[fox.State, list[Any]]:
    """Given ``at_last_trick`` (with ``given``'s options) where seat 0 holds bells 10 and seat
    1 bells 2, when seat 0 leads and wins the trick: the state after and the events of seat
    1's card (the trick, the round's score, then the next deal or the game's end)."""
    s = at_last_trick([c(BELLS, 10)], [c(BELLS, 2)], **given)
    return trick(s, c(BELLS, 10), c(BELLS, 2))


# --- setup and options ---------------------------------------------------------------------


def test_setup_deals_13_each_a_decree_and_6_in_the_deck() -> None:
    events = fox.setup(2, {}, Rng("any"))
    assert types(events) == ["game_started", "round_dealt"]
    dealt = events[1]
    assert [len(h) for h in dealt.hands] == [13, 13]
    assert len(dealt.deck) == 6
    assert sorted([*dealt.hands[0], *dealt.hands[1], dealt.decree, *dealt.deck]) == list(range(33))
    state = reduce(fox.evolve, events, None)
    assert fox.to_act(state) == (1 - dealt.dealer,)  # the non-dealer leads
    assert fox.view(state, 0)["trump"] == fox.SUITS[dealt.decree // 11]


def test_setup_is_a_function_of_the_seed() -> None:
    assert fox.setup(2, {}, Rng("a")) == fox.setup(2, {}, Rng("a"))
    deals = {fox.setup(2, {}, Rng(f"seed{i}"))[1].hands for i in range(5)}
    assert len(deals) == 5


@pytest.mark.parametrize("dealer", [0, 1])
def test_fixed_deal_and_non_dealer_leads(dealer: int) -> None:
    s = start(deal((c(BELLS, 2),), (c(KEYS, 2),), decree=c(MOONS, 4), dealer=dealer))
    assert named(s).game.dealer == dealer
    assert fox.to_act(s) == (1 - dealer,)
    v = fox.view(s, 0)
    assert v["decree"] == j(c(MOONS, 4)) and v["trump"] == MOONS
    assert j(c(BELLS, 2)) in v["hand"] and v["hand_sizes"] == [13, 13]
    assert v["deck_size"] == 6 and v["round"] == 1 and v["dealer"] == dealer


def test_options_defaults_and_idempotence() -> None:
    opts = fox.parse_options(2, {})
    assert opts == {"target": 21, "first_dealer": None, "deal": None}
    full = fox.parse_options(2, {"target": 16, "deal": deal()})
    assert full["first_dealer"] == 1 and full["target"] == 16
    assert fox.parse_options(2, full) == full
    assert fox.parse_options(2, {"target": 35, "first_dealer": 0})["first_dealer"] == 0


def test_first_dealer_option_and_drawn_dealer() -> None:
    for dealer in (0, 1):
        s = reduce(fox.evolve, fox.setup(2, {"first_dealer": dealer}, Rng("x")), None)
        assert named(s).game.dealer == dealer and fox.to_act(s) == (1 - dealer,)
    drawn = {fox.setup(2, {}, Rng(f"d{i}"))[0].first_dealer for i in range(20)}
    assert drawn == {0, 1}


@pytest.mark.parametrize(
    ("seats", "options", "field"),
    [
        (3, {}, "seats"),
        (2, {"target": 0}, "target"),
        (2, {"target": -5}, "target"),
        (2, {"target": "21"}, "target"),
        (2, {"target": True}, "target"),
        (2, {"target": 2.5}, "target"),
        (2, {"first_dealer": 2}, "first_dealer"),
        (2, {"colour": "red"}, "colour"),
        (2, {"deal": "abc"}, "deal"),
        (2, {"deal": {**deal(), "deck": deal()["deck"][:5]}}, "deal"),
        (2, {"deal": {**deal(), "hands": [deal()["hands"][0]]}}, "deal"),
        (2, {"deal": {**deal(), "decree": {"suit": "stars", "rank": 1}}}, "deal"),
        (2, {"deal": {**deal(), "decree": deal()["deck"][0]}}, "deal"),  # a card twice
        (2, {"deal": deal(dealer=0), "first_dealer": 1}, "first_dealer"),
        (2, {"deal": {**deal(), "dealer": 3}}, "deal"),
    ],
)
def test_bad_options_are_rejected(seats: int, options: dict[str, Any], field: str) -> None:
    with pytest.raises(GameError) as info:
        fox.parse_options(seats, options)
    assert info.value.code == errors.INVALID_OPTIONS
    assert field in info.value.errors
    assert info.value.detail


# --- following suit and winning tricks -----------------------------------------------------


def test_follow_suit_is_enforced() -> None:
    # Given seat 1 holds a bells card, when bells is led, then it may not play keys.
    s = start(deal((c(BELLS, 2),), (c(BELLS, 8), c(KEYS, 10)), decree=c(MOONS, 4)))
    s, _ = act(s, 0, play(c(BELLS, 2)))
    assert_illegal(s, 1, play(c(KEYS, 10)), "follow_suit")
    assert all(cmd.card // 11 == 0 for cmd in fox.legal_commands(s, 1))
    s, events = act(s, 1, play(c(BELLS, 8)))
    assert types(events) == ["card_played", "trick_won"]
    assert won(events).winner == 1


def test_void_follower_may_play_anything_and_trump_wins() -> None:
    s = start(deal((c(BELLS, 10),), (c(MOONS, 2),), decree=c(MOONS, 4), void1=(BELLS,)))
    s, _ = act(s, 0, play(c(BELLS, 10)))
    assert len(fox.legal_commands(s, 1)) == 13
    s, events = act(s, 1, play(c(MOONS, 2)))
    assert won(events).winner == 1 and won(events).next_leader == 1
    assert fox.to_act(s) == (1,)
    assert named(s).tricks == (0, 1)


def test_without_trump_the_led_suit_wins() -> None:
    s = start(deal((c(BELLS, 4),), (c(KEYS, 11),), decree=c(MOONS, 4), void1=(BELLS,)))
    s, events = trick(s, c(BELLS, 4), c(KEYS, 11))  # higher, but not the led suit, not trump
    assert won(events).winner == 0 and fox.to_act(s) == (0,)


def test_higher_card_of_led_suit_wins() -> None:
    s = start(deal((c(BELLS, 4),), (c(BELLS, 6),), decree=c(MOONS, 4)))
    s, events = trick(s, c(BELLS, 4), c(BELLS, 6))
    assert won(events).winner == 1
    v = fox.view(s, 0)
    assert v["last_trick"] == {
        "cards": [{"seat": 0, "card": j(c(BELLS, 4))}, {"seat": 1, "card": j(c(BELLS, 6))}],
        "winner": 1,
    }
    assert v["trick"] == [] and v["tricks_won"] == [0, 1]


def test_higher_trump_wins_over_lower_trump() -> None:
    assert first_trick(c(MOONS, 8), c(MOONS, 10)).winner == 1


# --- Swan (1) ------------------------------------------------------------------------------


def test_swan_loser_leads_the_next_trick() -> None:
    # Seat 0 leads the Swan and loses: seat 0 still leads next.
    s = start(deal((c(BELLS, 1),), (c(BELLS, 8),), decree=c(MOONS, 4)))
    s, events = trick(s, c(BELLS, 1), c(BELLS, 8))
    assert won(events).winner == 1 and won(events).next_leader == 0
    assert fox.to_act(s) == (0,) and named(s).tricks == (0, 1)


def test_swan_follower_who_loses_leads_next() -> None:
    s = start(deal((c(BELLS, 8),), (c(BELLS, 1),), decree=c(MOONS, 4)))
    s, events = trick(s, c(BELLS, 8), c(BELLS, 1))
    assert won(events).winner == 0 and won(events).next_leader == 1
    assert fox.to_act(s) == (1,)


def test_swan_that_wins_changes_nothing() -> None:
    result = first_trick(c(MOONS, 1), c(BELLS, 8), void1=(MOONS,))  # a trump Swan
    assert result.winner == 0 and result.next_leader == 0


def test_two_swans_the_loser_leads() -> None:
    s = start(deal((c(BELLS, 1),), (c(KEYS, 1),), decree=c(MOONS, 4), void1=(BELLS,)))
    s, events = trick(s, c(BELLS, 1), c(KEYS, 1))
    assert won(events).winner == 0 and won(events).next_leader == 1
    assert fox.to_act(s) == (1,)


# --- Fox (3) -------------------------------------------------------------------------------


def test_fox_as_second_card_exchange_decides_this_trick() -> None:
    # Given trump moons, bells 10 led, seat 1 (void in bells) plays the keys Fox...
    s, events = fox_follows_bells_10(decree=c(MOONS, 4))
    assert types(events) == ["card_played"]
    assert fox.view(s, 0)["phase"] == "fox_exchange" and fox.to_act(s) == (1,)
    assert [cmd.TYPE for cmd in fox.legal_commands(s, 1)].count("keep_decree") == 1
    # ...when it makes keys 8 the decree, then keys is trump already for this trick.
    s, events = act(s, 1, exchange(c(KEYS, 8)))
    assert types(events) == ["decree_exchanged", "trick_won"]
    assert events[0].card == c(KEYS, 8) and events[0].old == c(MOONS, 4)
    assert won(events).winner == 1
    assert named(s).decree == c(KEYS, 8) and fox.view(s, 0)["trump"] == KEYS
    assert (
        fox.mask_of([c(MOONS, 4)]) & named(s).hand1
        and not fox.mask_of([c(KEYS, 8)]) & named(s).hand1
    )


def test_fox_as_second_card_keep_decree_loses() -> None:
    s, _ = fox_follows_bells_10(decree=c(MOONS, 4))
    s, events = act(s, 1, KEEP)
    assert types(events) == ["decree_kept", "trick_won"]
    assert won(events).winner == 0 and named(s).decree == c(MOONS, 4)


def test_fox_led_exchange_happens_before_the_opponent_plays() -> None:
    # Seat 0 leads the bells Fox and makes bells 9 the decree: bells is trump; seat 1 must
    # still follow bells (the led suit) and its moons (old trump) no longer win.
    s = start(deal((c(BELLS, 3), c(BELLS, 9)), (c(BELLS, 2), c(MOONS, 11)), decree=c(MOONS, 4)))
    s, _ = act(s, 0, play(c(BELLS, 3)))
    assert rejected(s, 1, play(c(BELLS, 2))).code == errors.NOT_YOUR_TURN
    s, events = act(s, 0, exchange(c(BELLS, 9)))
    assert types(events) == ["decree_exchanged"]
    assert fox.to_act(s) == (1,) and named(s).decree == c(BELLS, 9)
    assert_illegal(s, 1, play(c(MOONS, 11)), "follow_suit")
    s, events = act(s, 1, play(c(BELLS, 2)))
    assert won(events).winner == 0


def test_fox_led_new_trump_beats_old_trump() -> None:
    s = start(deal((c(BELLS, 3), c(BELLS, 9)), (c(MOONS, 11),), decree=c(MOONS, 4), void1=(BELLS,)))
    s, _ = act(s, 0, play(c(BELLS, 3)))
    s, _ = act(s, 0, exchange(c(BELLS, 9)))
    s, events = act(s, 1, play(c(MOONS, 11)))  # no longer trump
    assert won(events).winner == 0


def test_old_decree_is_shown_to_the_opponent_until_played() -> None:
    s = start(deal((c(BELLS, 3), c(KEYS, 6)), (c(BELLS, 2),), decree=c(MOONS, 4), void0=(MOONS,)))
    s, _ = act(s, 0, play(c(BELLS, 3)))
    s, _ = act(s, 0, exchange(c(KEYS, 6)))
    assert fox.view(s, 1)["opponent_known_cards"] == [j(c(MOONS, 4))]
    assert fox.view(s, None)["known_cards"] == [[j(c(MOONS, 4))], []]
    assert fox.view(s, 0)["opponent_known_cards"] == []
    assert fox.view(s, 1)["decree"] == j(c(KEYS, 6))
    s, _ = act(s, 1, play(c(BELLS, 2)))  # seat 0 wins and leads
    s, _ = act(s, 0, play(c(MOONS, 4)))
    assert fox.view(s, 1)["opponent_known_cards"] == []


def test_exchange_needs_a_card_from_hand() -> None:
    s = start(deal((c(BELLS, 3),), (c(KEYS, 6),), decree=c(MOONS, 4)))
    s, _ = act(s, 0, play(c(BELLS, 3)))
    assert_illegal(s, 0, exchange(c(KEYS, 6)), "card_not_in_hand")
    assert_illegal(s, 0, exchange(c(BELLS, 3)), "card_not_in_hand")  # on the table


def test_pending_fox_blocks_other_commands() -> None:
    s = start(deal((c(BELLS, 3), c(BELLS, 7)), (c(KEYS, 6),), decree=c(MOONS, 4)))
    s, _ = act(s, 0, play(c(BELLS, 3)))
    assert_illegal(s, 0, play(c(BELLS, 7)), "pending_fox_decision")
    assert_illegal(s, 0, give_back(c(BELLS, 7)), "pending_fox_decision")
    assert fox.legal_commands(s, 1) == []


# --- Woodcutter (5) ------------------------------------------------------------------------


def test_woodcutter_draws_then_returns_a_card_under_the_deck() -> None:
    top = c(MOONS, 10)
    s = start(deal((c(BELLS, 5), c(KEYS, 2)), (c(BELLS, 6),), decree=c(MOONS, 4), deck=(top,)))
    s, events = act(s, 0, play(c(BELLS, 5)))
    assert types(events) == ["card_played", "card_drawn"]
    assert events[1].card == top
    assert fox.view(s, 0)["phase"] == "woodcutter_return" and fox.to_act(s) == (0,)
    assert j(top) in fox.view(s, 0)["hand"] and fox.view(s, 0)["deck_size"] == 5
    # The opponent sees that a card was drawn, not which.
    assert fox.redact(events[1], 1) == {"type": "card_drawn", "data": {"seat": 0, "card": None}}
    assert fox.redact(events[1], 0)["data"]["card"] == j(top)
    assert str(j(top)) not in str(fox.view(s, 1))
    assert_illegal(s, 0, play(c(KEYS, 2)), "pending_woodcutter_return")
    assert_illegal(s, 0, KEEP, "pending_woodcutter_return")
    s, events = act(s, 0, give_back(c(KEYS, 2)))
    assert types(events) == ["card_returned"]
    assert fox.redact(events[0], 1)["data"]["card"] is None
    assert fox.redact(events[0], None)["data"]["card"] is None
    assert named(s).deck[-1] == c(KEYS, 2) and len(named(s).deck) == 6
    assert fox.view(s, 0)["deck_known"] == [None] * 5 + [j(c(KEYS, 2))]
    assert fox.view(s, 1)["deck_known"] == [None] * 6
    assert fox.view(s, 0)["hand_sizes"] == [12, 13]  # 13 - played 1 + drew 1 - returned 1
    s, events = act(s, 1, play(c(BELLS, 6)))
    assert won(events).winner == 1


def test_woodcutter_may_return_the_card_just_drawn() -> None:
    top = c(MOONS, 10)
    s = start(deal((c(BELLS, 5),), (c(BELLS, 6),), decree=c(MOONS, 4), deck=(top,)))
    hand_before = named(s).hand0
    s, _ = act(s, 0, play(c(BELLS, 5)))
    s, _ = act(s, 0, give_back(top))
    assert named(s).hand0 == hand_before & ~fox.mask_of([c(BELLS, 5)])
    assert named(s).deck[-1] == top


def test_woodcutter_as_second_card_trick_is_decided_after_the_return() -> None:
    s = start(deal((c(BELLS, 4),), (c(BELLS, 5),), decree=c(MOONS, 4)))
    s, _ = act(s, 0, play(c(BELLS, 4)))
    s, events = act(s, 1, play(c(BELLS, 5)))
    assert types(events) == ["card_played", "card_drawn"]
    s, events = act(s, 1, give_back(events[1].card))
    assert types(events) == ["card_returned", "trick_won"] and won(events).winner == 1


def test_woodcutter_on_the_13th_trick() -> None:
    s = at_last_trick([c(BELLS, 5)], [c(BELLS, 2)], leader=0)
    top = named(s).deck[0]
    s, events = act(s, 0, play(c(BELLS, 5)))
    assert types(events) == ["card_played", "card_drawn"]
    assert [cmd.card for cmd in fox.legal_commands(s, 0)] == [top]  # the one card in hand
    s, events = act(s, 0, give_back(top))
    assert types(events) == ["card_returned"]
    s, events = act(s, 1, play(c(BELLS, 2)))
    assert types(events) == ["card_played", "trick_won", "round_scored", "round_dealt"]


def test_fox_on_the_13th_trick_can_only_keep() -> None:
    s = at_last_trick([c(BELLS, 3)], [c(BELLS, 2)], leader=0)
    s, _ = act(s, 0, play(c(BELLS, 3)))
    assert fox.legal_commands(s, 0) == [fox.KEEP_DECREE]
    s, events = act(s, 0, KEEP)
    assert types(events) == ["decree_kept"]


def test_woodcutter_clears_publicly_known_cards() -> None:
    # Seat 0 took the old decree with a Fox; after its Woodcutter it may be under the deck.
    s = start(deal((c(BELLS, 3), c(KEYS, 6), c(KEYS, 5)), (c(BELLS, 2),), decree=c(MOONS, 4)))
    s, _ = act(s, 0, play(c(BELLS, 3)))
    s, _ = act(s, 0, exchange(c(KEYS, 6)))
    s, _ = act(s, 1, play(c(BELLS, 2)))
    assert fox.view(s, 1)["opponent_known_cards"] == [j(c(MOONS, 4))]
    s, events = act(s, 0, play(c(KEYS, 5)))
    s, _ = act(s, 0, give_back(events[1].card))
    assert fox.view(s, 1)["opponent_known_cards"] == []
    # ...but everyone knows it is in that hand or the deck's bottom card.
    for seat in (0, 1, None):
        assert fox.view(s, seat)["hand_or_deck"] == [
            {"cards": [j(c(MOONS, 4))], "deck_index": 5},
            None,
        ]


def woodcut_after_fox(returned: int | None = None) -> fox.State:
    """Given seat 0 took the moons 4 decree with its Fox and then played a Woodcutter,
    returning ``returned`` (default: the card it drew): the state, seat 1 to lead."""
    moons = tuple(c(MOONS, r) for r in fox.RANKS if r != 4)
    s = start(deal((c(BELLS, 3), c(KEYS, 6), c(KEYS, 5)), (c(BELLS, 2), c(KEYS, 2), c(KEYS, 11),
                   *moons), decree=c(MOONS, 4), deck=tuple(c(KEYS, r) for r in (3, 4, 7, 8, 9, 10)),
                   void0=(MOONS,)))  # fmt: skip
    s, _ = act(s, 0, play(c(BELLS, 3)))
    s, _ = act(s, 0, exchange(c(KEYS, 6)))
    s, _ = act(s, 1, play(c(BELLS, 2)))
    s, events = act(s, 0, play(c(KEYS, 5)))
    s, _ = act(s, 0, give_back(events[1].card if returned is None else returned))
    s, _ = act(s, 1, play(c(KEYS, 11)))  # the trump Monarch wins: seat 1 leads
    return s


def test_determinize_puts_a_hand_or_deck_card_in_the_hand_or_its_slot() -> None:
    s = woodcut_after_fox()
    v = fox.view(s, 1)
    assert v["hand_or_deck"][0] == {"cards": [j(c(MOONS, 4))], "deck_index": 5}
    hand = v["hand_sizes"][0]
    # Every deal consistent with the view counts once: the card is at its slot in 1 of
    # (hand + 1) of them. 1,200 fixed draws: about 4 standard deviations either side.
    under = 0
    draws = 1200
    for i in range(draws):
        d = determinized(v, 1, Rng("hand-or-deck", str(i)))
        in_hand = named(d).hand0 >> c(MOONS, 4) & 1
        at_slot = named(d).deck[5] == c(MOONS, 4)
        assert in_hand != at_slot
        under += at_slot
    expected = draws / (hand + 1)
    assert abs(under - expected) < 4 * (expected * (1 - 1 / (hand + 1))) ** 0.5, (under, expected)


def test_a_hand_or_deck_card_of_a_void_suit_is_under_the_deck() -> None:
    # Given seat 0 put the moons 4 under the deck and then did not follow moons...
    s = woodcut_after_fox(returned=c(MOONS, 4))
    s, _ = act(s, 1, play(c(MOONS, 8)))
    follow = fox.legal_commands(s, 0)[0]
    s, _ = act(s, 0, fox.command_to_json(follow))
    v = fox.view(s, 1)
    assert MOONS in v["voids"][0] and v["hand_or_deck"][0] is not None
    # ...then every determinization puts it at its slot.
    for i in range(50):
        d = determinized(v, 1, Rng("forced", str(i)))
        assert named(d).deck[v["hand_or_deck"][0]["deck_index"]] == c(MOONS, 4)


def test_a_monarch_answer_caps_the_answering_suit() -> None:
    # Given seat 1 holds bells 6 and 2 and the bells 7-9 are in the deck...
    s = start(deal((c(BELLS, 11), c(BELLS, 10)), (c(BELLS, 6), c(BELLS, 2)), decree=c(MOONS, 4),
                   deck=(c(BELLS, 7), c(BELLS, 8), c(BELLS, 9))))  # fmt: skip
    assert named(s).hand1 & suit_mask(BELLS) == 1 << c(BELLS, 6) | 1 << c(BELLS, 2)
    # ...when seat 0 leads its Monarch, seat 1 must answer its highest bell, the 6...
    s, _ = act(s, 0, play(c(BELLS, 11)))
    assert fox.legal_commands(s, 1) == [fox.parse_command(play(c(BELLS, 6)))]
    s, _ = act(s, 1, play(c(BELLS, 6)))
    # ...so everyone knows it holds no bell of rank 6 or more...
    for seat in (0, 1, None):
        assert fox.view(s, seat)["ranks_below"] == [{}, {"bells": 6}]
    # ...and seat 0's determinizations leave the bells 7-9 in the deck.
    v = fox.view(s, 0)
    high = fox.mask_of([c(BELLS, r) for r in range(6, 12)])
    for i in range(100):
        d = determinized(v, 0, Rng("monarch", str(i)))
        assert named(d).hand1 & high == 0
        assert {c(BELLS, r) for r in (7, 8, 9)} <= set(named(d).deck)
    # Without the cap the same draws would give seat 1 a high bell.
    blind = {**v, "ranks_below": [{}, {}]}
    assert any(named(fox.determinize(blind, 0, Rng("monarch", str(i)))).hand1 & high
               for i in range(100))  # fmt: skip


def test_a_monarch_answered_with_the_one_tells_nothing() -> None:
    s = start(deal((c(BELLS, 11),), (c(BELLS, 1), c(BELLS, 9)), decree=c(MOONS, 4)))
    s, _ = act(s, 0, play(c(BELLS, 11)))
    s, _ = act(s, 1, play(c(BELLS, 1)))
    assert fox.view(s, 0)["ranks_below"] == [{}, {}]


def test_a_draw_ends_the_drawers_caps() -> None:
    s = start(deal((c(BELLS, 11), c(MOONS, 2)), (c(BELLS, 6), c(BELLS, 2), c(MOONS, 5)),
                   decree=c(KEYS, 4), deck=(c(BELLS, 7), c(BELLS, 8), c(BELLS, 9))))  # fmt: skip
    s, _ = act(s, 0, play(c(BELLS, 11)))
    s, _ = act(s, 1, play(c(BELLS, 6)))
    assert fox.view(s, 0)["ranks_below"] == [{}, {"bells": 6}]
    # Seat 0 won the Monarch's trick and leads; seat 1's Woodcutter draws a card unseen...
    s, _ = act(s, 0, play(c(MOONS, 2)))
    s, events = act(s, 1, play(c(MOONS, 5)))
    assert types(events) == ["card_played", "card_drawn"]
    # ...which may be a high bell.
    assert fox.view(s, 0)["ranks_below"] == [{}, {}]


# --- Treasure (7) --------------------------------------------------------------------------


def test_one_treasure_scores_one_point_for_the_winner_at_once() -> None:
    s = start(deal((c(BELLS, 7),), (c(BELLS, 9),), decree=c(MOONS, 4)))
    s, events = trick(s, c(BELLS, 7), c(BELLS, 9))
    assert won(events).winner == 1 and won(events).points == 1
    assert fox.view(s, 0)["scores"] == [0, 1] and fox.view(s, 0)["treasure"] == [0, 1]


def test_two_treasures_score_two_points() -> None:
    s = start(deal((c(BELLS, 7),), (c(MOONS, 7),), decree=c(MOONS, 4), void1=(BELLS,)))
    s, events = trick(s, c(BELLS, 7), c(MOONS, 7))
    assert won(events).winner == 1 and won(events).points == 2
    assert fox.view(s, 1)["scores"] == [0, 2]


def test_no_treasure_no_points() -> None:
    s = start(deal((c(BELLS, 6),), (c(BELLS, 8),), decree=c(MOONS, 4)))
    s, events = trick(s, c(BELLS, 6), c(BELLS, 8))
    assert won(events).points == 0 and fox.view(s, 1)["scores"] == [0, 0]


# --- Witch (9) -----------------------------------------------------------------------------


def test_single_witch_counts_as_trump() -> None:
    assert first_trick(c(BELLS, 10), c(KEYS, 9), void1=(BELLS,)).winner == 1


def test_led_witch_counts_as_trump_against_the_led_suit() -> None:
    # Keys 11 follows keys, higher, but the lone Witch is trump.
    assert first_trick(c(KEYS, 9), c(KEYS, 11)).winner == 0


def test_witch_as_trump_loses_to_a_higher_trump() -> None:
    assert first_trick(c(MOONS, 10), c(KEYS, 9), void1=(MOONS,)).winner == 0


def test_witch_beats_a_lower_trump() -> None:
    assert first_trick(c(MOONS, 8), c(KEYS, 9), void1=(MOONS,)).winner == 1


def test_two_witches_cancel_trump_nine_wins() -> None:
    assert first_trick(c(KEYS, 9), c(MOONS, 9), void1=(KEYS,)).winner == 1


def test_two_witches_cancel_led_nine_wins() -> None:
    assert first_trick(c(BELLS, 9), c(KEYS, 9), void1=(BELLS,)).winner == 0


def test_witch_cannot_dodge_following_trump() -> None:
    s = start(deal((c(MOONS, 2),), (c(MOONS, 5), c(KEYS, 9)), decree=c(MOONS, 4)))
    s, _ = act(s, 0, play(c(MOONS, 2)))
    assert_illegal(s, 1, play(c(KEYS, 9)), "follow_suit")


def test_witch_led_must_be_followed_in_its_own_suit() -> None:
    s = start(deal((c(KEYS, 9),), (c(KEYS, 2), c(MOONS, 11)), decree=c(MOONS, 4)))
    s, _ = act(s, 0, play(c(KEYS, 9)))
    assert_illegal(s, 1, play(c(MOONS, 11)), "follow_suit")


# --- Monarch (11) --------------------------------------------------------------------------


def test_monarch_led_forces_the_one_or_the_highest() -> None:
    s = start(
        deal(
            (c(BELLS, 11),),
            (c(BELLS, 1), c(BELLS, 4), c(BELLS, 8), c(KEYS, 10)),
            decree=c(MOONS, 4),
            void1=(BELLS,),
        )
    )
    s, _ = act(s, 0, play(c(BELLS, 11)))
    assert sorted(cmd.card for cmd in fox.legal_commands(s, 1)) == [c(BELLS, 1), c(BELLS, 8)]
    assert_illegal(s, 1, play(c(BELLS, 4)), "monarch")
    assert_illegal(s, 1, play(c(KEYS, 10)), "follow_suit")
    _, events = act(s, 1, play(c(BELLS, 1)))
    assert won(events).winner == 0 and won(events).next_leader == 1  # losing Swan leads


def test_monarch_led_without_the_one_forces_the_highest() -> None:
    s = start(deal((c(BELLS, 11),), (c(BELLS, 4), c(BELLS, 6)), decree=c(MOONS, 4), void1=(BELLS,)))
    s, _ = act(s, 0, play(c(BELLS, 11)))
    assert [cmd.card for cmd in fox.legal_commands(s, 1)] == [c(BELLS, 6)]
    assert_illegal(s, 1, play(c(BELLS, 4)), "monarch")


def test_monarch_led_when_the_opponent_lacks_the_suit() -> None:
    s = start(deal((c(BELLS, 11),), (c(MOONS, 2),), decree=c(MOONS, 4), void1=(BELLS,)))
    s, _ = act(s, 0, play(c(BELLS, 11)))
    assert len(fox.legal_commands(s, 1)) == 13
    _, events = act(s, 1, play(c(MOONS, 2)))
    assert won(events).winner == 1


def test_monarch_as_second_card_has_no_effect() -> None:
    s = start(deal((c(BELLS, 2), c(BELLS, 11)), (c(BELLS, 4), c(BELLS, 6)), decree=c(MOONS, 4)))
    s, _ = act(s, 0, play(c(BELLS, 2)))
    assert len(fox.legal_commands(s, 1)) >= 2  # any bells, not just 1 or highest


# --- round scoring and the end of the game -------------------------------------------------


@pytest.mark.parametrize("before", range(13))
def test_scoring_table_for_every_trick_count(before: int) -> None:
    # Seat 0 wins the last trick: it ends with before + 1 tricks, seat 1 with 12 - before.
    s, events = last_trick_taken_by_seat_0(tricks=(before, 12 - before))
    scored = events[2]
    assert scored.TYPE == "round_scored"
    table = {0: 6, 1: 6, 2: 6, 3: 6, 4: 1, 5: 2, 6: 3, 7: 6, 8: 6, 9: 6, 10: 0, 11: 0, 12: 0, 13: 0}
    assert scored.tricks == (before + 1, 12 - before)
    assert scored.points == (table[before + 1], table[12 - before])
    assert fox.view(s, 0)["scores"] == list(scored.points)


def test_round_scores_include_treasure() -> None:
    s = at_last_trick([c(BELLS, 7)], [c(BELLS, 9)], tricks=(3, 9), treasure=(1, 0), scores=(4, 2))
    assert fox.view(s, 0)["scores"] == [5, 2]
    s, events = trick(s, c(BELLS, 7), c(BELLS, 9))
    scored = events[2]
    assert scored.tricks == (3, 10) and scored.points == (6, 0)
    assert scored.treasure == (1, 1) and scored.total == (7, 1) and scored.scores == (11, 3)
    v = fox.view(s, 0)
    assert v["scores"] == [11, 3]
    assert v["round_scores"] == [
        {"round": 1, "tricks": [3, 10], "points": [6, 0], "treasure": [1, 1], "total": [7, 1]}
    ]


def test_next_round_dealer_alternates_and_non_dealer_leads() -> None:
    s = at_last_trick([c(BELLS, 10)], [c(BELLS, 2)])
    assert named(s).game.dealer == 1
    s, _ = act(s, 0, play(c(BELLS, 10)))
    before = s
    s, events = act(s, 1, play(c(BELLS, 2)))
    dealt = events[-1]
    assert dealt.TYPE == "round_dealt" and dealt.round == 2 and dealt.dealer == 0
    assert named(s).game.dealer == 0 and fox.to_act(s) == (1,)
    assert named(s).tricks == (0, 0) and named(s).treasure == (0, 0) and len(named(s).deck) == 6
    assert fox.view(s, 0)["hand_sizes"] == [13, 13] and fox.view(s, 1)["round"] == 2
    assert fox.view(s, 0)["last_trick"] is None and fox.view(s, 0)["played"] == []
    # The next deal comes from the rng the command is decided with, and only from it.
    cmd = fox.parse_command(play(c(BELLS, 2)))
    assert fox.decide(before, 1, cmd, Rng("test-seed", "next"))[-1] == dealt
    assert fox.decide(before, 1, cmd, Rng("test-seed", "other"))[-1] != dealt


def test_game_ends_after_the_round_that_reaches_the_target() -> None:
    s, events = last_trick_taken_by_seat_0(tricks=(7, 5), scores=(15, 3))
    assert types(events) == ["card_played", "trick_won", "round_scored", "game_ended"]
    assert events[-1].scores == (21, 5) and events[-1].winners == (0,)
    assert fox.outcome(s) == {"scores": [21, 5], "winners": [0], "ranks": [1, 2], "draw": False}
    assert fox.to_act(s) == () and fox.view(s, 0)["phase"] == "game_over"
    assert fox.view(s, 1)["outcome"] == fox.outcome(s)
    assert fox.legal_commands(s, 0) == [] and fox.legal_commands(s, 1) == []
    err = rejected(s, 0, play(c(BELLS, 10)))
    assert err.code == errors.GAME_OVER


def test_game_goes_on_below_the_target() -> None:
    s, events = last_trick_taken_by_seat_0(tricks=(7, 5), scores=(14, 3))
    assert events[-1].TYPE == "round_dealt" and fox.outcome(s) is None
    assert fox.view(s, 0)["scores"] == [20, 5]


def test_a_short_game_of_target_one_ends_after_round_one() -> None:
    # Someone always scores in a round, so target 1 ends the game after the first round.
    _, events = last_trick_taken_by_seat_0(target=1)
    assert events[-1].TYPE == "game_ended"


def test_tie_goes_to_more_points_in_the_last_round() -> None:
    # 13 vs 15 before; this round seat 0 gets 6 (7 tricks), seat 1 gets 3 + 1 treasure: 19-19.
    s, events = last_trick_taken_by_seat_0(
        tricks=(6, 6), treasure=(0, 1), scores=(13, 15), target=19
    )
    ended = events[-1]
    assert ended.TYPE == "game_ended" and ended.scores == (19, 19)
    assert ended.winners == (0,) and ended.ranks == (1, 2) and not ended.draw
    assert fox.outcome(s) == {"scores": [19, 19], "winners": [0], "ranks": [1, 2], "draw": False}


def test_tie_in_total_and_last_round_is_a_draw() -> None:
    # 7 tricks vs 6 tricks plus 3 treasure: 6 vs 3 + 3 in the round, 20 + 6 = 20 + 6.
    s, events = last_trick_taken_by_seat_0(
        tricks=(6, 6), treasure=(0, 3), scores=(20, 20), target=21
    )
    ended = events[-1]
    assert ended.scores == (26, 26) and ended.draw and ended.winners == (0, 1)
    assert fox.outcome(s) == {"scores": [26, 26], "winners": [0, 1], "ranks": [1, 1], "draw": True}


# --- bad input -----------------------------------------------------------------------------


def test_card_not_in_hand() -> None:
    s = start(deal((c(BELLS, 2),), (c(KEYS, 2),)))
    assert_illegal(s, 0, play(c(KEYS, 2)), "card_not_in_hand")


def test_not_your_turn() -> None:
    s = start(deal((c(BELLS, 2),), (c(KEYS, 2),)))
    assert rejected(s, 1, play(c(KEYS, 2))).code == errors.NOT_YOUR_TURN
    assert rejected(s, 5, play(c(KEYS, 2))).code == errors.NOT_YOUR_TURN
    assert fox.legal_commands(s, 1) == []


def test_commands_of_the_wrong_phase() -> None:
    s = start(deal((c(BELLS, 2),), (c(KEYS, 2),)))
    assert_illegal(s, 0, exchange(c(BELLS, 2)), "wrong_phase")
    assert_illegal(s, 0, KEEP, "wrong_phase")
    assert_illegal(s, 0, give_back(c(BELLS, 2)), "wrong_phase")
    with pytest.raises(GameError) as info:
        fox.decide(s, 0, {"type": "play"}, Rng("x"))  # not parsed: not a command object
    assert info.value.code == errors.INVALID_COMMAND


@pytest.mark.parametrize(
    ("doc", "field"),
    [
        ({"type": "dance"}, "type"),
        ({}, "type"),
        ({"type": 3}, "type"),
        ({"type": "play"}, "card"),
        ({"type": "play", "card": None}, "card"),
        ({"type": "play", "card": "bells-3"}, "card"),
        ({"type": "play", "card": {"suit": "stars", "rank": 3}}, "card"),
        ({"type": "play", "card": {"suit": "bells", "rank": 0}}, "card"),
        ({"type": "play", "card": {"suit": "bells", "rank": 12}}, "card"),
        ({"type": "play", "card": {"suit": "bells", "rank": "3"}}, "card"),
        ({"type": "play", "card": {"suit": "bells", "rank": True}}, "card"),
        ({"type": "play", "card": {"suit": "bells", "rank": 3.0}}, "card"),
        ({"type": "play", "card": {"rank": 3}}, "card"),
        ({"type": "exchange_decree", "card": {"suit": "keys"}}, "card"),
        ({"type": "return_card"}, "card"),
    ],
)
def test_malformed_commands(doc: dict[str, Any], field: str) -> None:
    with pytest.raises(GameError) as info:
        fox.parse_command(doc)
    assert info.value.code == errors.INVALID_COMMAND and field in info.value.errors


def test_parse_command_ignores_extra_keys_and_round_trips() -> None:
    doc = {"type": "play", "card": {"suit": "moons", "rank": 11}, "expected_version": 7, "id": "x"}
    cmd = fox.parse_command(doc)
    assert cmd == fox.Play(card=c(MOONS, 11))
    assert fox.command_to_json(cmd) == {"type": "play", "card": {"suit": "moons", "rank": 11}}
    for command in [*fox.PLAY, *fox.EXCHANGE, *fox.RETURN, fox.KEEP_DECREE]:
        assert fox.parse_command(fox.command_to_json(command)) == command
    assert fox.parse_command({"type": "keep_decree", "card": "ignored"}) == fox.KEEP_DECREE
    assert set(fox.COMMANDS) == {"play", "exchange_decree", "keep_decree", "return_card"}


def test_commands_built_in_code_are_checked() -> None:
    for bad in (-1, 33, "3", True, None):
        with pytest.raises(GameError) as info:
            fox.Play(card=bad)  # type: ignore[arg-type]
        assert info.value.code == errors.INVALID_COMMAND


# --- views, redaction, serialization -------------------------------------------------------


def test_view_keys_and_spectator() -> None:
    s = start(deal((c(BELLS, 2),), (c(KEYS, 2),), decree=c(MOONS, 4)))
    v = fox.view(s, 0)
    for key in (
        "phase", "hand", "hand_sizes", "decree", "trump", "trick", "last_trick", "leader",
        "dealer", "tricks_won", "scores", "round", "round_scores", "deck_size", "target",
        "played", "opponent_known_cards", "known_cards", "voids", "legal_commands", "to_act",
    ):  # fmt: skip
        assert key in v, key
    assert v["legal_commands"] == [fox.command_to_json(x) for x in fox.legal_commands(s, 0)]
    assert len(v["legal_commands"]) == 13
    spectator = fox.view(s, None)
    assert spectator["hand"] is None and spectator["legal_commands"] == []
    assert spectator["deck_known"] is None and spectator["opponent_known_cards"] is None
    other_hand = {str(j(x)) for x in fox.cards_of(named(s).hand1)}
    assert not any(h in str(v) for h in other_hand)
    assert not any(
        str(j(x)) in str(spectator) for x in fox.cards_of(named(s).hand0 | named(s).hand1)
    )


def test_trick_on_the_table_is_public() -> None:
    s = start(deal((c(BELLS, 2),), (c(KEYS, 2),), decree=c(MOONS, 4)))
    s, _ = act(s, 0, play(c(BELLS, 2)))
    for seat in (0, 1, None):
        v = fox.view(s, seat)
        assert v["trick"] == [{"seat": 0, "card": j(c(BELLS, 2))}]
        assert v["played"] == [j(c(BELLS, 2))] and v["to_act"] == [1]


def test_redact_the_deal() -> None:
    events = fox.setup(2, {"deal": deal()}, Rng("x"))
    dealt = events[1]
    for seat in (0, 1):
        doc = fox.redact(dealt, seat)
        assert doc is not None
        assert doc["data"]["hands"][seat] == [j(x) for x in dealt.hands[seat]]
        assert doc["data"]["hands"][1 - seat] is None
        assert doc["data"]["deck"] is None and doc["data"]["deck_size"] == 6
        assert doc["data"]["decree"] == j(dealt.decree)
    spectator = fox.redact(dealt, None)
    assert spectator is not None and spectator["data"]["hands"] == [None, None]
    assert fox.redact(events[0], None) == fox.event_to_json(events[0])


def test_every_event_type_round_trips_through_json() -> None:
    samples = [
        fox.GameStarted(target=21, first_dealer=1),
        fox.RoundDealt(
            round=1,
            dealer=0,
            hands=(tuple(range(13)), tuple(range(13, 26))),
            decree=26,
            deck=tuple(range(27, 33)),
        ),  # fmt: skip
        fox.CardPlayed(seat=1, card=c(MOONS, 11)),
        fox.DecreeExchanged(seat=0, card=c(KEYS, 3), old=c(BELLS, 1)),
        fox.DecreeKept(seat=1),
        fox.CardDrawn(seat=0, card=5),
        fox.CardReturned(seat=1, card=6),
        fox.TrickWon(winner=1, points=2, next_leader=0),
        fox.RoundScored(
            round=2, tricks=(7, 6), points=(6, 3), treasure=(1, 0), total=(7, 3), scores=(20, 9)
        ),
        fox.GameEnded(scores=(26, 26), winners=(0, 1), ranks=(1, 1), draw=True),
    ]
    assert {type(e) for e in samples} == set(fox.EVENTS.values())
    for event in samples:
        doc = fox.event_to_json(event)
        assert doc["type"] == event.TYPE
        assert fox.event_from_json(doc) == event
    played = fox.event_to_json(samples[2])
    assert played == {
        "type": "card_played",
        "data": {"seat": 1, "card": {"suit": "moons", "rank": 11}},
    }
    assert "game_created" not in fox.EVENTS and "seed_revealed" not in fox.EVENTS


def test_decide_does_not_mutate_the_state() -> None:
    s = start(deal((c(BELLS, 5),), (c(KEYS, 2),)))
    copy = tuple(s)
    fox.decide(s, 0, fox.parse_command(play(c(BELLS, 5))), Rng("x"))
    assert s == copy


def test_determinize_gives_a_state_with_the_same_view() -> None:
    s = start(deal((c(BELLS, 3), c(KEYS, 6), c(KEYS, 5)), (c(BELLS, 2),), decree=c(MOONS, 4)))
    s, _ = act(s, 0, play(c(BELLS, 3)))
    s, _ = act(s, 0, exchange(c(KEYS, 6)))
    s, _ = act(s, 1, play(c(BELLS, 2)))
    s, events = act(s, 0, play(c(KEYS, 5)))
    s, _ = act(s, 0, give_back(c(MOONS, 4)))
    for seat in (0, 1):
        v = fox.view(s, seat)
        for i in range(5):
            f = named(determinized(v, seat, Rng("det", str(i))))
            everything = f.hand0 | f.hand1 | fox.mask_of(f.deck) | f.played | 1 << f.decree
            assert everything == fox.ALL_CARDS
    # Seat 0 knows where the card it returned is; seat 1 knows it holds no Fox's old decree.
    assert named(determinized(fox.view(s, 0), 0, Rng("det"))).deck[-1] == c(MOONS, 4)


# --- voids: suits a seat is known to lack ---------------------------------------------------


def voids(state: fox.State) -> list[list[str]]:
    """The ``voids`` every view shows; asserts that seats and spectators see the same."""
    seen = [fox.view(state, seat)["voids"] for seat in (0, 1, None)]
    assert seen[0] == seen[1] == seen[2]
    return seen[0]


def unknown_hand(state: fox.State, seat: int) -> int:
    """``seat``'s hand without its publicly known cards."""
    f = named(state)
    return (f.hand1 if seat else f.hand0) & ~f.known[seat]


def suit_mask(suit: str) -> int:
    return fox.mask_of([c(suit, r) for r in fox.RANKS])


def test_a_follower_off_the_led_suit_shows_a_void() -> None:
    # Given seat 1 holds no bells...
    s = start(deal((c(BELLS, 10), c(KEYS, 4)), (c(KEYS, 2), c(KEYS, 6)), decree=c(MOONS, 4),
                   void1=(BELLS,)))  # fmt: skip
    assert voids(s) == [[], []]
    # ...when seat 0 leads bells, nothing is learnt yet; when seat 1 plays keys to it...
    s, _ = act(s, 0, play(c(BELLS, 10)))
    assert voids(s) == [[], []]
    s, _ = act(s, 1, play(c(KEYS, 2)))
    # ...then everyone knows seat 1 has no bells; following suit later shows nothing new.
    assert voids(s) == [[], [BELLS]]
    s, _ = trick(s, c(KEYS, 4), c(KEYS, 6))
    assert voids(s) == [[], [BELLS]]


def test_a_woodcutter_draw_ends_only_the_drawers_voids() -> None:
    # Given seat 1 shows no bells (trick 1) and seat 0 no keys (trick 2)...
    s = start(deal((c(BELLS, 10), c(BELLS, 8)), (c(MOONS, 2), c(KEYS, 2), c(KEYS, 5)),
                   decree=c(MOONS, 4), void0=(KEYS,), void1=(BELLS,)))  # fmt: skip
    s, _ = trick(s, c(BELLS, 10), c(MOONS, 2))  # trump: seat 1 wins and leads
    s, _ = trick(s, c(KEYS, 2), c(BELLS, 8), leader=1)
    assert voids(s) == [[KEYS], [BELLS]]
    # ...when seat 1 draws with its Woodcutter, then its drawn card may be a bell: its void
    # is over, seat 0's stays.
    s, events = act(s, 1, play(c(KEYS, 5)))
    assert types(events) == ["card_played", "card_drawn"]
    assert voids(s) == [[KEYS], []]
    s, _ = act(s, 1, give_back(events[1].card))
    assert voids(s) == [[KEYS], []]


def test_a_void_shown_on_the_last_trick_ends_with_the_deal() -> None:
    s = at_last_trick([c(BELLS, 10)], [c(KEYS, 2)])
    s, _ = act(s, 0, play(c(BELLS, 10)))
    before = s
    s, events = act(s, 1, play(c(KEYS, 2)))
    assert types(events) == ["card_played", "trick_won", "round_scored", "round_dealt"]
    assert voids(reduce(fox.evolve, events[:3], before)) == [[], [BELLS]]
    assert voids(s) == [[], []]


def test_a_fox_taking_the_decree_of_a_void_suit_keeps_the_void() -> None:
    # Given bells is trump and seat 1 has no bells: it plays its Fox to a bell...
    s, _ = fox_follows_bells_10(decree=c(BELLS, 4))
    # ...when it takes the bells decree card, then that bell is known and it has no other.
    s, _ = act(s, 1, exchange(c(KEYS, 8)))
    assert voids(s) == [[], [BELLS]]
    assert fox.view(s, 0)["opponent_known_cards"] == [j(c(BELLS, 4))]
    assert unknown_hand(s, 1) & suit_mask(BELLS) == 0


def test_determinize_never_gives_a_seat_a_suit_it_lacks() -> None:
    # Given seat 1 showed no bells and holds a known bell taken by its Fox (see above)...
    s, _ = fox_follows_bells_10(
        decree=c(BELLS, 4), hand0=(c(KEYS, 4),), deck=(c(BELLS, 2), c(BELLS, 6))
    )
    s, _ = act(s, 1, exchange(c(KEYS, 8)))
    v = fox.view(s, 0)
    unseen_bells = suit_mask(BELLS) & ~named(s).hand0 & ~named(s).played & ~(1 << c(BELLS, 4))
    assert unseen_bells  # bells whose place seat 0 cannot see
    for i in range(200):
        # ...when seat 0 determinizes, then seat 1's hand is its known bell and no other bell,
        # and the unseen bells are in the deck.
        d = determinized(v, 0, Rng("voids", str(i)))
        assert named(d).hand1 & suit_mask(BELLS) == 1 << c(BELLS, 4)
        assert fox.mask_of(named(d).deck) & unseen_bells == unseen_bells


def test_determinize_spreads_held_back_cards_over_the_whole_deck() -> None:
    # Cards a void keeps out of the opponent's hand land in every deck slot about as often
    # (the deck's order matters: a Woodcutter draws its top). 600 draws, 6 slots, chi-square
    # with 5 degrees of freedom: 25 is far in the tail (p < 0.0002); the seeds are fixed.
    s = start(deal((c(BELLS, 10),), (c(KEYS, 2),), decree=c(MOONS, 4),
                   deck=(c(BELLS, 2), c(BELLS, 6)), void1=(BELLS,)))  # fmt: skip
    s, _ = trick(s, c(BELLS, 10), c(KEYS, 2))
    v = fox.view(s, 0)
    held_back = fox.cards_of(suit_mask(BELLS) & ~named(s).hand0 & ~named(s).played)
    counts = [0] * 6
    for i in range(600 // len(held_back)):
        deck = named(determinized(v, 0, Rng("spread", str(i)))).deck
        for slot, card in enumerate(deck):
            counts[slot] += card in held_back
    expected = sum(counts) / 6
    assert sum((n - expected) ** 2 / expected for n in counts) < 25, counts


def test_determinize_rejects_voids_that_cannot_hold() -> None:
    s = start(deal((c(BELLS, 10),), (c(KEYS, 2),), decree=c(MOONS, 4), void1=(BELLS,)))
    s, _ = act(s, 0, play(c(BELLS, 10)))
    v = fox.view(s, 0)
    with pytest.raises(ValueError):  # seat 1 can lack no suit at all of 33 cards
        fox.determinize({**v, "voids": [[], list(fox.SUITS)]}, 0, Rng("x"))
    assert j(c(MOONS, 3)) in v["hand"]
    with pytest.raises(ValueError):  # seat 0 holds moons: it cannot lack them
        fox.determinize({**v, "voids": [[MOONS], []]}, 0, Rng("x"))


# --- the deal, for auditors ----------------------------------------------------------------


def documented_deal(rng: Rng) -> tuple[tuple[int, ...], tuple[int, ...], int, tuple[int, ...]]:
    """The deal as fox._shuffle's docstring spells it, written the plain way."""
    k = rng.below(math.perm(33, 20))
    cards = list(range(33))
    for i in range(32, 12, -1):
        k, j = divmod(k, i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return tuple(sorted(cards[:13])), tuple(sorted(cards[13:26])), cards[26], tuple(cards[27:])


def test_the_deal_follows_the_documented_algorithm() -> None:
    for i in range(40):
        # With the first dealer fixed, the deal is the setup stream's first draw.
        dealt = fox.setup(2, {"first_dealer": 0}, Rng("audit", f"v{i}"))[1]
        hands, decree, deck = dealt.hands, dealt.decree, dealt.deck
        assert (hands[0], hands[1], decree, deck) == documented_deal(Rng("audit", f"v{i}"))


def test_the_deal_is_not_lopsided() -> None:
    # Every card turns up as the decree card about as often (33 * 100 deals, chi-square test
    # with 32 degrees of freedom: 70 is far in the tail, p < 0.0002; the seeds are fixed).
    counts = [0] * 33
    for i in range(3300):
        counts[fox.setup(2, {"first_dealer": 1}, Rng("uniform", str(i)))[1].decree] += 1
    chi2 = sum((n - 100) ** 2 / 100 for n in counts)
    assert chi2 < 70, counts


def test_state_fields_name_the_tuple() -> None:
    s = start(deal((c(BELLS, 2),), (c(KEYS, 2),), decree=c(MOONS, 4)))
    assert type(s) is tuple and len(s) == len(fox.StateFields._fields)
    # The engine's index constants (fox._TALLY, ...) follow StateFields' order.
    for index, name in enumerate(fox.StateFields._fields):
        assert getattr(fox, f"_{name.upper()}") == index, name
    assert named(s).decree == c(MOONS, 4) and named(s).tricks == (0, 0)
    changed = fox.replace_state(s, tricks=(3, 4), treasure=(1, 0))
    assert named(changed).tricks == (3, 4) and named(changed).treasure == (1, 0)
    assert named(changed).tally & 15 == 7
    assert fox.replace_state(s) == s
