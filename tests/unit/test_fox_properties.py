"""The Fox in the Forest engine: properties of random legal play-outs (hypothesis)."""

from __future__ import annotations

from functools import reduce
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.games import errors, fox
from shared.games.errors import GameError
from shared.games.rng import Rng
from tests.unit.playouts import playout

SETTINGS = settings(max_examples=100, deadline=None)


def named(state: fox.State) -> fox.StateFields:
    """The state with named fields."""
    return fox.state_fields(state)


def hand_of(state: fox.State, seat: int) -> int:
    """``seat``'s hand (a bitmask)."""
    f = named(state)
    return f.hand1 if seat else f.hand0


def cards_in(doc: Any) -> int:
    """The bitmask of every ``{"suit", "rank"}`` card mentioned anywhere in JSON ``doc``."""
    if isinstance(doc, dict):
        if set(doc) == {"suit", "rank"}:
            return 1 << fox.parse_card(doc)
        return reduce(lambda m, v: m | cards_in(v), doc.values(), 0)
    if isinstance(doc, list):
        return reduce(lambda m, v: m | cards_in(v), doc, 0)
    return 0


def hidden_from(state: fox.State, seat: int | None) -> int:
    """The cards ``seat`` (None: a spectator) must not see in ``state``."""
    f = named(state)
    deck = fox.mask_of(f.deck)
    # A "hand or deck" set names cards that were publicly known in a hand (checked by
    # test_hand_or_deck_sets_name_only_cards_known_before): naming them again reveals nothing.
    sets = under_cards(state, 0) | under_cards(state, 1)
    if seat is None:
        return ((f.hand0 | f.hand1) & ~(f.known[0] | f.known[1]) | deck) & ~sets
    return ((hand_of(state, 1 - seat) & ~f.known[1 - seat]) | (deck & ~f.returned[seat])) & ~sets


def under_cards(state: fox.State, seat: int) -> int:
    """The cards of ``seat``'s "hand or deck" set (0 if none)."""
    return fox._under_of(named(state).voids, seat)[0]


def accounted(state: fox.State) -> bool:
    """The 33 cards are each in exactly one place: a hand, the deck, the decree, played."""
    f = named(state)
    parts = [f.hand0, f.hand1, fox.mask_of(f.deck), 1 << f.decree, f.played]
    sizes = [f.hand0.bit_count(), f.hand1.bit_count(), len(f.deck), 1, f.played.bit_count()]
    return reduce(lambda a, b: a | b, parts) == fox.ALL_CARDS and sum(sizes) == fox.CARD_COUNT


MAX_ACTIONS = 10_000  # a bound, so that a bug that never ends the game fails the test


def random_game(tag: str, seed: int, **options: Any) -> tuple[list[fox.State], list[list[Any]]]:
    """Given a game with ``options`` played out by the play-out driver's random bots from
    ``seed`` (``tag`` keeps each test's games apart): the states (after setup, then after each
    action) and the event batches (setup, then one per action)."""
    game = playout("fox", 2, options, f"fox-{tag}-{seed}", max_actions=MAX_ACTIONS)
    return game.states, game.batches


def all_events(batches: list[list[Any]]) -> list[Any]:
    """The events of every batch, in order."""
    return [e for batch in batches for e in batch]


def determinized(state: fox.State, seat: int, rng: Rng) -> fox.State:
    """When ``seat`` determinizes its view of ``state``: the state, which shows ``seat`` the
    same view."""
    v = fox.view(state, seat)
    d = fox.determinize(v, seat, rng)
    assert fox.view(d, seat) == v
    return d


seeds = st.integers(min_value=0, max_value=2**32)
targets = st.sampled_from([1, 10, 21, 35])


@SETTINGS
@given(seed=seeds, target=targets)
def test_random_games_finish_and_keep_every_card(seed: int, target: int) -> None:
    states, batches = random_game("g", seed, target=target)
    final = states[-1]
    assert fox.outcome(final) is not None and fox.to_act(final) == ()
    assert batches[-1][-1].TYPE == "game_ended"
    for state in states:
        if named(state).phase != fox.PHASE_OVER:
            assert accounted(state)
            assert len(named(state).deck) in (5, 6)  # 5 only while a Woodcutter's return is pending
    result = fox.outcome(final)
    assert result is not None
    assert max(result["scores"]) >= target
    assert result["draw"] == (len(result["winners"]) == 2)
    assert all(result["ranks"][w] == 1 for w in result["winners"])


@SETTINGS
@given(seed=seeds, target=targets)
def test_scores_follow_the_table(seed: int, target: int) -> None:
    states, batches = random_game("s", seed, target=target)
    scores = [0, 0]
    treasure = [0, 0]
    tricks = [0, 0]
    rounds = 0
    for e in all_events(batches):
        if e.TYPE == "trick_won":
            tricks[e.winner] += 1
            treasure[e.winner] += e.points
        elif e.TYPE == "round_scored":
            rounds += 1
            assert e.round == rounds and sum(e.tricks) == 13
            assert list(e.tricks) == tricks and list(e.treasure) == treasure
            assert list(e.points) == [fox.SCORE_BY_TRICKS[t] for t in tricks]
            assert list(e.total) == [p + t for p, t in zip(e.points, treasure, strict=True)]
            scores = [s + t for s, t in zip(scores, e.total, strict=True)]
            assert list(e.scores) == scores
            tricks, treasure = [0, 0], [0, 0]
        elif e.TYPE == "round_dealt":
            assert e.dealer == (named(states[0]).game.first_dealer + e.round - 1) % 2
        elif e.TYPE == "game_ended":
            assert list(e.scores) == scores and max(scores) >= target
    # The game ended after the first round that reached the target, not later.
    round_ends = [e for e in all_events(batches) if e.TYPE == "round_scored"]
    assert all(max(r.scores) < target for r in round_ends[:-1])
    assert fox.view(states[-1], 0)["scores"] == scores


@SETTINGS
@given(seed=seeds)
def test_treasure_points_count_the_sevens_won(seed: int) -> None:
    _, batches = random_game("t", seed, target=1)
    table: list[int] = []
    for e in all_events(batches):
        if e.TYPE == "card_played":
            table.append(e.card)
        elif e.TYPE == "trick_won":
            assert len(table) == 2
            assert e.points == sum(1 for card in table if card % 11 + 1 == fox.TREASURE)
            table = []


@SETTINGS
@given(seed=seeds, target=targets)
def test_replay_and_json_replay_equal_the_live_state(seed: int, target: int) -> None:
    states, batches = random_game("r", seed, target=target)
    events = all_events(batches)
    assert reduce(fox.evolve, events, None) == states[-1]
    docs = [fox.event_to_json(e) for e in events]
    assert [fox.event_from_json(d) for d in docs] == events
    assert reduce(fox.evolve, [fox.event_from_json(d) for d in docs], None) == states[-1]
    # Replaying a prefix gives the state at that point.
    k = 0
    for i, batch in enumerate(batches):
        k += len(batch)
        if i % 17 == 0:
            assert reduce(fox.evolve, events[:k], None) == states[i]


@SETTINGS
@given(seed=seeds)
def test_legal_commands_are_exactly_what_decide_accepts(seed: int) -> None:
    states, _ = random_game("l", seed, target=10)
    for state in states[:-1]:
        seat = fox.to_act(state)[0]
        legal = set(fox.legal_commands(state, seat))
        assert legal and fox.legal_commands(state, 1 - seat) == []
        candidates = [*fox.PLAY, *fox.EXCHANGE, *fox.RETURN, fox.KEEP_DECREE]
        for command in candidates:
            try:
                fox.decide(state, seat, command, Rng("x"))
                accepted = True
            except GameError as exc:
                assert exc.code == errors.ILLEGAL and exc.rule
                accepted = False
            assert accepted == (command in legal), (command, fox.view(state, seat))
        with_other = fox.PLAY[0]
        try:
            fox.decide(state, 1 - seat, with_other, Rng("x"))
            raise AssertionError("the other seat may not act")
        except GameError as exc:
            assert exc.code == errors.NOT_YOUR_TURN


@SETTINGS
@given(seed=seeds)
def test_views_and_redacted_events_never_leak(seed: int) -> None:
    states, batches = random_game("v", seed, target=10)
    state = None
    for batch in batches:
        for e in batch:
            before, state = state, fox.evolve(state, e)
            for seat in (0, 1, None):
                doc = fox.redact(e, seat)
                assert doc is not None
                # An event may show a card hidden before it only if the card is public after
                # it (a card played, an old decree taken by a Fox) or the seat's own.
                if before is not None:
                    assert not cards_in(doc) & hidden_from(before, seat) & hidden_from(state, seat)
                if e.TYPE == "round_dealt":
                    assert doc["data"]["deck"] is None
                    assert all(h is None for s, h in enumerate(doc["data"]["hands"]) if s != seat)
        for seat in (0, 1, None):
            assert not cards_in(fox.view(state, seat)) & hidden_from(state, seat)
    for e in batches[0]:
        if e.TYPE == "round_dealt":
            assert fox.redact(e, None)["data"]["hands"] == [None, None]  # type: ignore[index]


@SETTINGS
@given(seed=seeds, data=st.data())
def test_view_is_blind_to_what_the_seat_cannot_see(seed: int, data: st.DataObject) -> None:
    states, _ = random_game("b", seed, target=10)
    for state in data.draw(st.lists(st.sampled_from(states[:-1]), min_size=1, max_size=8)):
        for seat in (0, 1):
            other = 1 - seat
            f = named(state)
            opp_hand = hand_of(state, other)
            opp_free = fox.cards_of(opp_hand & ~f.known[other])
            deck_free = [i for i, x in enumerate(f.deck) if not f.returned[seat] >> x & 1]
            if not opp_free or not deck_free:
                continue
            x = data.draw(st.sampled_from(opp_free))
            i = data.draw(st.sampled_from(deck_free))
            y = f.deck[i]
            new_hand = opp_hand & ~(1 << x) | (1 << y)
            deck = list(f.deck)
            deck[i] = x
            swapped = fox.replace_state(state, deck=tuple(deck), **{f"hand{other}": new_hand})
            returned = list(named(swapped).returned)
            returned[other] = 0
            swapped = fox.replace_state(swapped, returned=tuple(returned))
            assert accounted(swapped)
            assert fox.view(swapped, seat) == fox.view(state, seat)
            assert fox.view(swapped, None) == fox.view(state, None)


@SETTINGS
@given(seed=seeds, data=st.data())
def test_determinize_is_consistent_with_the_view(seed: int, data: st.DataObject) -> None:
    states, _ = random_game("d", seed, target=10)
    picks = data.draw(st.lists(st.sampled_from(states), min_size=1, max_size=8))
    for i, state in enumerate(picks):
        for seat in (0, 1):
            d = determinized(state, seat, Rng(f"det{seed}", f"{i}"))
            if named(state).phase != fox.PHASE_OVER:
                assert accounted(d)
                assert hand_of(d, seat) == hand_of(state, seat)
                # Play goes on from a determinized state.
                if fox.to_act(d):
                    who = fox.to_act(d)[0]
                    cmd = fox.legal_commands(d, who)[0]
                    reduce(fox.evolve, fox.decide(d, who, cmd, Rng("x")), d)


def void_cards(state: fox.State, seat: int) -> int:
    """Every card ``seat`` is recorded to lack: the suits of its voids, and the ranks at or
    above its caps from Monarch answers."""
    return fox._lacking(named(state).voids, seat)


def contradicts_a_deduction(state: fox.State) -> bool:
    """A hand holds, besides its publicly known cards, a card its deductions rule out; or a
    "hand or deck" set has more than one card outside the hand, or one not at its slot."""
    f = named(state)
    hands = (f.hand0, f.hand1)
    if any(h & ~f.known[s] & void_cards(state, s) for s, h in enumerate(hands)):
        return True
    for s, h in enumerate(hands):
        cards, slot = fox._under_of(f.voids, s)
        away = cards & ~h
        if away.bit_count() > 1 or (away and f.deck[slot] != away.bit_length() - 1):
            return True
    return False


@SETTINGS
@given(seed=seeds)
def test_deductions_follow_the_public_events(seed: int) -> None:
    # An independent model of what the public events say: voids (suit not followed), caps
    # (a led Monarch answered in suit, not with the 1), both until that seat draws; and the
    # "hand or deck" set a Woodcutter makes of the cards known in that hand.
    _, batches = random_game("o", seed, target=10)
    expected = [0, 0]  # per seat, a bit per suit
    caps: list[dict[str, int]] = [{}, {}]
    sets: list[tuple[int, int]] = [(0, 0), (0, 0)]
    lead = -1
    state = None
    for e in all_events(batches):
        before, state = state, fox.evolve(state, e)
        if e.TYPE == "round_dealt":
            expected, lead = [0, 0], -1
            caps, sets = [{}, {}], [(0, 0), (0, 0)]
        elif e.TYPE == "card_played" and lead < 0:
            lead = e.card
        elif e.TYPE == "card_played":
            if e.card // 11 != lead // 11:
                expected[e.seat] |= 1 << lead // 11
            elif lead % 11 == 10 and e.card % 11 != 0:
                caps[e.seat][fox.SUITS[lead // 11]] = e.card % 11 + 1
            lead = -1
        elif e.TYPE == "card_drawn":
            expected[e.seat] = 0
            caps[e.seat] = {}
            for s_ in (0, 1):
                cards, slot = sets[s_]
                sets[s_] = (0, 0) if not cards or slot == 0 else (cards, slot - 1)
        elif e.TYPE == "card_returned":
            assert before is not None
            known = named(before).known[e.seat]
            sets[e.seat] = (known, len(named(before).deck)) if known else (0, 0)
        if e.TYPE in ("card_played", "decree_exchanged"):
            gone = 1 << e.card
            cards, slot = sets[e.seat]
            if cards & gone:
                sets[e.seat] = (cards & ~gone, slot) if cards & ~gone else (0, 0)
        assert named(state).voids & 0x3F == expected[0] | expected[1] << 3
        assert not contradicts_a_deduction(state)
        shown = fox.view(state, None)
        assert shown["voids"] == [[fox.SUITS[i] for i in range(3) if m >> i & 1] for m in expected]
        assert shown["ranks_below"] == caps
        assert shown["hand_or_deck"] == [
            {"cards": fox._cards_json(c), "deck_index": k} if c else None for c, k in sets
        ]


@SETTINGS
@given(seed=seeds)
def test_hand_or_deck_sets_name_only_cards_known_before(seed: int) -> None:
    states, _ = random_game("k", seed, target=10)
    for before, after in zip(states, states[1:], strict=False):
        for s_ in (0, 1):
            new = under_cards(after, s_) & ~under_cards(before, s_)
            assert not new & ~named(before).known[s_]


@SETTINGS
@given(seed=seeds, data=st.data())
def test_determinized_states_never_contradict_a_deduction(seed: int, data: st.DataObject) -> None:
    states, _ = random_game("n", seed, target=10)
    deduced = [s for s in states if named(s).voids and named(s).phase != fox.PHASE_OVER]
    with_sets = [s for s in deduced if named(s).voids >> 32]
    pool = with_sets + deduced if with_sets else (deduced or states)
    picks = data.draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8))
    for i, state in enumerate(picks):
        for seat in (0, 1):
            d = determinized(state, seat, Rng(f"void{seed}", f"{i}"))
            assert named(d).voids == named(state).voids
            assert not contradicts_a_deduction(d)


@SETTINGS
@given(order=st.permutations(list(range(33))), dealer=st.sampled_from([0, 1]), seed=seeds)
def test_any_fixed_deal_plays_out(order: list[int], dealer: int, seed: int) -> None:
    deal = {
        "dealer": dealer,
        "hands": [[fox.card_json(x) for x in order[:13]], [fox.card_json(x) for x in order[13:26]]],
        "decree": fox.card_json(order[26]),
        "deck": [fox.card_json(x) for x in order[27:]],
    }
    states, batches = random_game("f", seed, deal=deal, target=1)
    dealt = batches[0][1]
    assert dealt.deck == tuple(order[27:]) and dealt.decree == order[26]
    assert fox.to_act(states[0]) == (1 - dealer,)
    assert fox.outcome(states[-1]) is not None
    assert sum(1 for e in all_events(batches) if e.TYPE == "trick_won") == 13
