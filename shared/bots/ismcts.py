"""A game-agnostic information-set Monte Carlo tree search bot (single-observer ISMCTS, UCT).

The bot sees one seat's view and nothing else. It searches one tree for that seat (the "root
seat"); every iteration:

1. **Determinize**: ``engine.determinize(view, seat, rng)`` deals a full state consistent with
   the view (hidden cards, discs or prices drawn at random). Each iteration gets a new one, so
   the statistics average over the states the seat cannot tell apart.
2. **Select**: from the root, at each node, the seat to act in *this* determinization (the
   root seat if it is among several to act, else the first) has some legal commands. Children
   are keyed by command, so a node is an information set of the root seat's search rather
   than one state: a child exists for every command ever legal there, but only those legal now
   are candidates, and each candidate's *availability* count ``N_avail`` goes up by one. UCB1
   with availability (Cowling, Powley and Whitehouse 2012) picks among them:
   ``reward / visits + C * sqrt(ln(N_avail) / visits)``, where ``reward`` is from the point of
   view of the seat that made that move. Opponents' moves are in the tree too; their
   candidates come from the determinized state's ``legal_commands``.
3. **Expand**: the first candidate without a child (drawn at random among them) gets one.
4. **Play out**: uniformly random legal commands to the end of the game, or ``PLAYOUT_CAP``
   moves; a capped play-out is scored by score rank instead. A game's search hooks may give
   their own play-out (``playout_rollout``: a policy that models the other seats).
5. **Back-propagate**: one reward per seat (a win 1, a win shared by ``k`` seats ``1/k``, a
   loss 0, from ``outcome(state)["winners"]``); each node on the path adds the reward of the
   seat that moved into it, so every seat plays for itself (also with 3+ seats).

The answer is the root's most visited child (visits are less noisy than mean rewards).

The root's candidates are the view's own ``legal_commands`` (what the seat knows it may do),
and the answer is sent as the view listed it. A command is its own child key (frozen
dataclasses hash by value; the engines share their command objects), so the loop builds no
JSON; one that holds a dict (a map of prices) is keyed by its canonical JSON. A kernel that
lists one shared object per command (``SHARED_COMMANDS``) has its commands keyed by identity
(a frozen dataclass hashes in Python), and the root's children are keyed by candidate index.
Below the root a listed command is applied with the kernel's ``apply_listed`` where it has one
(the same events, past the checks). In a simultaneous phase the root seat moves first in the
tree: its choice then never depends on the others' (hidden) simultaneous ones, while theirs,
in the tree, see its choice: optimistic for them, a cost paid for one tree instead of one per
seat.

Commands that cannot be listed (``TRAITS.lists_all_commands`` false: prices chosen from a
range, listed as one ``template``): at the root, when the root seat itself faces such a decision,
``ROOT_SAMPLES`` commands drawn with the engine's ``random_command`` are the candidates. Deeper
in the tree such a decision is not a branching point: one ``random_command`` draw is applied
and the search stays at the same node, like a chance event. Play-outs draw them the same way.
A seat's view for ``random_command`` is built as ``shared.match.projections.game_view`` builds it.

Every step of the search runs on the game's kernel (``engine.KERNEL``,
``shared/games/kernel.py``): a determinization is thawed once, and each move is the kernel's
``apply`` with its own mutators, the very rules ``decide`` runs (so the search draws exactly as
the engine-driven loop did). A game's search hooks (its package's ``SEARCH``) may provide,
each optional: ``playout_rollout`` (see ``default_rollout``), ``kernel_rollout(kernel, rand)``
(``playout_rollout`` of the state ``kernel`` holds, played on that kernel itself, which the
search throws away afterwards: no freeze and thaw between the tree and the play-out),
``determinizer(view, seat)`` (when the engine has none: the view read
once, a deal per iteration), ``sample_command(state, seat, rand)`` (one ``random_command``
draw as an engine command on the kernel, without building a view), ``root_commands(view, rand)`` (the root's candidates for any decision, or None
for the default ones: a game may narrow them to its heuristic's choice and its alternatives;
one candidate is played without a search), ``FLAT_SEARCH`` (true: every iteration plays out
right below the root's move, for a rollout that models the other seats instead of a tree over
their moves), ``prepare(view, seat)`` (a timed search's set-up, before its clock starts:
memoise what every iteration of the view's position reads, drawing nothing, so that the budget
buys iterations at their steady rate in a process whose memos are cold) and
``root_search(engine, view, rand, iterations, budget_s, rollout)`` (the whole root search of a
decision, run by the game: ``(command, iterations, children)`` as ``SearchResult`` holds them,
or None, drawing nothing from ``rand``, for the search here; ``budget_s`` is the seconds its
play-outs may take when a budget is given, its clock started at its first play-out, else None
and ``iterations`` counts play-outs). Each must keep the distribution (or, for candidates, the
legality) of what it replaces; the game's search tests prove it.

A time budget (``budget_ms``) is the time of the iterations: its clock starts at the first
one, once the search is set up (the game's package loaded, the root's candidates made, the
deals' template dealt, the hooks' ``prepare`` run), and the search takes that set-up on top.
Issue 38: a live bot's search runs in a search worker's process, which loads a game's package
on its first search (90-190 ms for a large game) and plays none of the other seats' moves, so
the heuristic's valuations the set-up and the first play-outs read (memoised per process) are
cold there (in ``tabletop simulate`` the heuristic seats had computed many of them): with the
clock started before the set-up, a 100 ms price search ran 1 iteration live (its answer a
random candidate), and from tens to hundreds in process.

Randomness and determinism: the caller's ``rng`` (HMAC-based, slow) gives one 64-bit seed to a
``random.Random``, which alone drives the search, the determinizations and the engines' draws
(through ``FastRng``, the engines' ``Rng`` interface). The same view, caller rng state and
iteration count give the same command; a time budget does not (the iteration count depends on
the clock).
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson

from shared import games
from shared.games.errors import GameError

T = TypeVar("T")

DEFAULT_ITERATIONS = 1000
# UCB1's exploration constant for rewards in [0, 1]; ~0.7 is the usual ISMCTS choice (sqrt(2)
# explores too much when most of the signal is noise from the determinizations).
EXPLORATION = 0.7
# A play-out stops after this many moves and is scored by score rank (a safety net: random
# play ends every hosted game well before, e.g. a one-round card game in ~30 moves).
PLAYOUT_CAP = 400
# Candidates drawn with ``random_command`` for the root seat's own unlistable decision.
ROOT_SAMPLES = 12

# (engine, state, rng) -> one reward in [0, 1] per seat: what a play-out from ``state`` is
# worth (``random_playout`` by default; a heuristic evaluation or policy may replace it).
Rollout = Callable[[Any, Any, random.Random], Sequence[float]]


class FastRng:
    """The engines' ``Rng`` interface (``below``, ``choice``, ``shuffle``) over a
    ``random.Random``: a Mersenne Twister draw instead of an HMAC block per integer."""

    __slots__ = ("below", "choice", "_random", "_getrandbits")

    def __init__(self, rand: random.Random) -> None:
        self._random = rand
        # Bound methods as attributes: one attribute lookup per draw on the engines' hot path.
        self.below: Callable[[int], int] = rand.randrange  # checked: engines may pass any n
        self.choice: Callable[[Sequence[Any]], Any] = rand.choice
        # ``random.Random.shuffle``'s own draws, made here without its call per card (a
        # determinization's shuffle was a tenth of a Fox search iteration); another generator
        # type (a subclass may draw otherwise) is shuffled by its own method.
        self._getrandbits: Callable[[int], int] | None = (
            rand.getrandbits if type(rand) is random.Random else None
        )

    def shuffle(self, items: Sequence[T]) -> tuple[T, ...]:
        """A shuffled copy of ``items``: exactly ``random.Random.shuffle``'s (from the end,
        each index ``randbelow(i + 1)``: ``(i + 1).bit_length()`` bits a try, tried again
        while too large), so that a search's draws do not depend on which of the two ran
        (``tests/unit/test_ismcts_fast_paths.py``)."""
        out = list(items)
        getrandbits = self._getrandbits
        size = len(out)
        if getrandbits is None or size > _SHUFFLE_MAX:
            self._random.shuffle(out)
            return tuple(out)
        for i, n, k in _SHUFFLE_STEPS[size]:
            j = getrandbits(k)
            while j >= n:
                j = getrandbits(k)
            out[i], out[j] = out[j], out[i]
        return tuple(out)


# ``FastRng.shuffle``'s steps by the number of items: (i, i + 1, (i + 1).bit_length()) for i
# from the last index down to 1, as ``random.Random.shuffle`` takes them.
_SHUFFLE_MAX = 64
_SHUFFLE_STEPS = tuple(
    tuple((i, i + 1, (i + 1).bit_length()) for i in range(size - 1, 0, -1))
    for size in range(_SHUFFLE_MAX + 1)
)


def _randbelow(rand: random.Random) -> Callable[[int], int]:
    """``rand``'s uniform integer in ``[0, n)`` for ``n >= 1`` (callers check: it never
    returns for 0): ``random.Random._randbelow``, what ``randrange`` and ``choice`` call
    after checking their arguments (those checks were a tenth of a card game search's time)."""
    below: Callable[[int], int] = rand._randbelow  # type: ignore[attr-defined]
    return below


class _Node:
    """A node of the root seat's tree: the move that led here (by ``seat``) and its stats."""

    __slots__ = ("command", "seat", "children", "visits", "avail", "reward", "mean")

    def __init__(self, command: Any, seat: int) -> None:
        self.command = command
        self.seat = seat  # who made ``command``: ``reward`` is from this seat's point of view
        self.children: dict[Any, _Node] = {}
        self.visits = 0
        self.avail = 1  # times this move was a candidate (the expansion counts as one)
        self.reward = 0.0
        # ``reward / visits``, as the back-propagation left them (UCB1 reads it for every
        # candidate of every node walked; it changes only when the node is visited).
        self.mean = 0.0


@dataclass(slots=True)
class SearchResult:
    """What a search found: the command (client JSON), and statistics for tests and tuning."""

    command: dict[str, Any] | None
    iterations: int = 0
    failed: int = 0  # iterations given up (a determinization the root command did not fit)
    seconds: float = 0.0
    # Root candidates: (client JSON, visits, mean reward for the root seat), most visited first.
    children: tuple[tuple[dict[str, Any], int, float], ...] = ()


def choose(
    view: Mapping[str, Any],
    rng: random.Random,
    *,
    iterations: int | None = None,
    budget_ms: float | None = None,
    rollout: Rollout | None = None,
) -> dict[str, Any] | None:
    """The command (client JSON) ISMCTS picks for the seat of ``view``, or None when that seat
    is not to act or the game is over. Searches ``iterations`` iterations, or for
    ``budget_ms`` milliseconds of wall time once set up (give one; neither means
    ``DEFAULT_ITERATIONS``).
    ``rollout`` replaces the random play-out (see ``Rollout``)."""
    return search(view, rng, iterations=iterations, budget_ms=budget_ms, rollout=rollout).command


def search(
    view: Mapping[str, Any],
    rng: random.Random,
    *,
    iterations: int | None = None,
    budget_ms: float | None = None,
    rollout: Rollout | None = None,
) -> SearchResult:
    """``choose`` with its statistics. A ``budget_ms`` is counted from the first iteration,
    after the search's set-up (see the module's docstring); ``seconds`` is the whole search's,
    set-up included."""
    started = time.perf_counter()
    if iterations is not None and budget_ms is not None:
        raise ValueError("give iterations or budget_ms, not both")
    if iterations is None and budget_ms is None:
        iterations = DEFAULT_ITERATIONS
    seat = view.get("seat")
    if view.get("outcome") is not None or seat is None or seat not in view.get("to_act", ()):
        return SearchResult(command=None)
    engine: Any = games.get(str(view["game"]))
    # One draw from the caller's slow generator; everything after is the fast one's.
    fast = random.Random(rng.getrandbits(64))
    own_search = getattr(_hooks(engine), "root_search", None)
    if own_search is not None:
        # The game's own search starts the budget's clock at its first play-out.
        budget_s = None if budget_ms is None else budget_ms / 1000.0
        found = own_search(engine, view, fast, iterations, budget_s, rollout)
        if found is not None:
            command, done, children = found
            return SearchResult(
                command=command,
                iterations=done,
                seconds=time.perf_counter() - started,
                children=tuple(children),
            )
    options = _root_options(engine, view, fast)
    if not options:
        return SearchResult(command=None)
    if len(options) == 1:  # a forced move needs no search
        return SearchResult(command=dict(options[0][2]), seconds=time.perf_counter() - started)
    tree = _Search(engine, view, seat, fast, rollout, options)
    prepare = getattr(_hooks(engine), "prepare", None)
    if prepare is not None and budget_ms is not None:
        prepare(view, seat)  # before the clock: what every iteration reads, memoised once
    root = _Node(None, seat)
    iterate = tree.iterate
    done = failed = 0
    if budget_ms is not None:
        clock = time.perf_counter
        ahead = _LN_AHEAD
        tree.ln = _ln_table(ahead)
        # The budget is the iterations' time: set up (candidates, deals), the clock starts.
        deadline = clock() + budget_ms / 1000.0
        # At least one iteration, so that even a tiny budget answers from a search.
        while done == 0 or clock() < deadline:
            if done + 2 > ahead:  # availability counts reach the iterations done + 1 at most
                ahead *= 2
                tree.ln = _ln_table(ahead)
            failed += not iterate(root)
            done += 1
    else:
        assert iterations is not None
        tree.ln = _ln_table(iterations + 2)
        for _ in range(iterations):
            failed += not iterate(root)
            done += 1
    # The root's children are keyed by the index of their candidate (its first, when two
    # candidates are the same command: one child, as when keyed by the command).
    by_key = {tree.root_keys[i]: doc for i, (_, _, doc) in enumerate(options)}
    if tree.flat:
        # A flat search's play-outs model the other seats (nearly deterministic), so a mean
        # is exact after a visit or two while visit counts stay close: best mean first, ties
        # to the candidate proposed first (a game's own choice, when it proposes one).
        order = {tree.root_keys[i]: i for i in range(len(options))}
        ranked = sorted(
            root.children.items(),
            key=lambda kv: (kv[1].reward / max(kv[1].visits, 1), -order[kv[0]]),
            reverse=True,
        )
    else:
        # Most visited first; ties by mean reward, then by expansion order (a stable sort).
        ranked = sorted(
            root.children.items(),
            key=lambda kv: (kv[1].visits, kv[1].reward / max(kv[1].visits, 1)),
            reverse=True,
        )
    # No child only if every iteration failed (an engine's determinize at fault): still answer
    # with a legal command.
    command = dict(by_key[ranked[0][0]] if ranked else fast.choice(options)[2])
    return SearchResult(
        command=command,
        iterations=done,
        failed=failed,
        seconds=time.perf_counter() - started,
        children=tuple((dict(by_key[k]), n.visits, n.reward / max(n.visits, 1)) for k, n in ranked),
    )


def random_playout(engine: Any, state: Any, rand: random.Random) -> list[float]:
    """The default ``Rollout``: uniformly random legal commands (``random_command`` for an
    unlistable decision) until the game ends or ``PLAYOUT_CAP`` moves, then ``rewards``;
    played on one thawed copy of the game's kernel (``engine.KERNEL``)."""
    return kernel_playout(engine, engine.KERNEL.thaw(state), rand)


def default_rollout(engine: Any) -> Rollout:
    """The game's own ``playout_rollout`` when its search hooks have one (a faster or
    smarter play-out: one that plays the rest of a round by a model, then a static
    evaluation), else ``random_playout``."""
    fast: Rollout | None = getattr(_hooks(engine), "playout_rollout", None)
    return fast or random_playout


def _hooks(engine: Any) -> Any:
    """The game's search hooks (its spec's ``search``), or None."""
    return games.spec(engine.NAME).search


def rewards(result: Mapping[str, Any]) -> list[float]:
    """Per seat of an ``outcome``: 1 for a sole winner, ``1/k`` for each of ``k`` winners, 0
    otherwise."""
    out = [0.0] * len(result["scores"])
    winners = result["winners"]
    for w in winners:
        out[w] = 1.0 / len(winners)
    return out


# --- the search ------------------------------------------------------------------------------


class _Search:
    """One search's fixed context, so that an iteration reads locals, not arguments."""

    __slots__ = (
        "engine", "view", "seat", "rand", "randbelow", "adapter", "rollout", "lists_all", "deal",
        "sample", "flat", "kernel", "root_keys", "root_commands", "listed", "by_identity",
        "kernel_rollout", "ln",
    )  # fmt: skip

    def __init__(
        self,
        engine: Any,
        view: Mapping[str, Any],
        seat: int,
        rand: random.Random,
        rollout: Rollout | None,
        options: Sequence[tuple[Any, Any, dict[str, Any]]],
    ) -> None:
        self.engine = engine
        self.view = view
        self.seat = seat
        self.rand = rand
        self.randbelow = _randbelow(rand)
        self.adapter = FastRng(rand)
        self.rollout: Rollout = rollout or default_rollout(engine)
        self.lists_all = engine.TRAITS.lists_all_commands
        hooks = _hooks(engine)
        self.kernel = engine.KERNEL
        self.deal = _dealer(engine, view, seat, hooks)
        self.sample: Callable[[Any, int, random.Random], Any] | None = getattr(
            hooks, "sample_command", None
        )
        # A game's hooks may ask for a flat search (``FLAT_SEARCH``): every iteration plays
        # out right after the root's move, as its rollout models the other seats.
        self.flat = bool(getattr(hooks, "FLAT_SEARCH", False))
        # The root's candidates are the view's own (what the seat knows it may do), the same
        # in every determinization: its children are keyed by candidate index (the first of
        # equal commands), an int hashed in C, where a command may hash in Python.
        first: dict[Any, int] = {}
        self.root_keys: list[int] = [first.setdefault(key, i) for i, (key, _, _) in
                                     enumerate(options)]  # fmt: skip
        self.root_commands: list[Any] = [command for _, command, _ in options]
        # Below the root every command is one the kernel listed: ``apply_listed`` (the same
        # events past the checks, where the kernel has it) applies it; a kernel whose listed
        # commands are shared objects (``SHARED_COMMANDS``) has them told apart by identity.
        self.listed = hasattr(self.kernel, "apply_listed")
        self.by_identity = bool(getattr(self.kernel, "SHARED_COMMANDS", False))
        # ``math.log(n)`` at ``[n]`` for every availability count the search reaches
        # (``_ln_table``; the search sets it for its iterations).
        self.ln: list[float] | _Ln = _ln_table(2)
        # The game's play-out on the tree's own kernel (``kernel_rollout``: the same as its
        # ``playout_rollout`` of the frozen state, without the freeze and the thaw).
        self.kernel_rollout: Callable[[Any, random.Random], Sequence[float]] | None = (
            getattr(hooks, "kernel_rollout", None)
            if rollout is None and self.rollout is getattr(hooks, "playout_rollout", None)
            else None
        )

    def iterate(self, root: _Node) -> bool:
        """One determinize-select-expand-play-out-back-propagate pass; False if the
        determinization failed or did not admit the root command (then no visit is recorded,
        only the availability counts of the root's children)."""
        engine, seat, rand, adapter = self.engine, self.seat, self.rand, self.adapter
        randbelow = self.randbelow
        try:
            state = self.kernel.thaw(self.deal(adapter))
        except (ValueError, GameError):
            return False
        # The tree walks one thawed copy of the game's kernel: each move is its ``apply`` with
        # its own mutators, nothing recorded or frozen on the way.
        outcome, to_act, legal_commands = state.outcome, state.to_act, state.legal_commands
        apply, on = state.apply, state.on
        listed = state.apply_listed if self.listed else None
        by_identity = self.by_identity
        path = [root]
        node = root
        keys: Sequence[Any] = self.root_keys
        commands: Sequence[Any] = self.root_commands
        hashable = _HASHABLE
        exploration, sqrt, ln = EXPLORATION, math.sqrt, self.ln
        actor = seat
        expanded = False
        values: Sequence[float] = ()
        while True:
            best = None
            best_score = -1.0
            untried = []
            children = node.children
            get = children.get
            for key in keys:
                child = get(key)
                if child is None:
                    untried.append(key)
                elif untried:
                    child.avail += 1
                else:
                    # UCB1 with availability: ``reward / visits + C * sqrt(ln(avail) / visits)``
                    # (the mean as the back-propagation left it, ``ln`` from the table).
                    avail = child.avail + 1
                    child.avail = avail
                    score = child.mean + exploration * sqrt(ln[avail] / child.visits)
                    if score > best_score:
                        best, best_score = child, score
            if untried:
                key = untried[randbelow(len(untried))] if len(untried) > 1 else untried[0]
                best = _Node(commands[keys.index(key)], actor)
                children[key] = best
                expanded = True
            assert best is not None
            if node is root or listed is None:
                try:
                    apply(actor, best.command, adapter, on)
                except GameError:
                    if node is not root:
                        raise  # a command legal_commands listed: an engine bug, not ours to hide
                    # The root seat's listed command does not fit this determinization (an
                    # engine's determinize out of step with its view): drop the iteration.
                    if expanded:
                        del children[key]
                    return False
            else:
                listed(actor, best.command, adapter, None)
            node = best
            path.append(node)
            if expanded or self.flat:
                expanded = True  # a flat search plays out below every root move
                break
            # The next branching point: skip unlistable decisions (drawn like chance events).
            result = outcome()
            while result is None:
                acting = to_act()
                actor = seat if seat in acting else acting[0]
                legal = legal_commands(actor)
                if self.lists_all or not _templated(legal):
                    break
                sample = self.sample
                if sample is not None:
                    drawn = sample(state, actor, rand)
                else:
                    drawn = _sample(engine, state.freeze(), actor, legal, rand)
                apply(actor, drawn, adapter, on)
                result = outcome()
            if result is not None:  # a terminal state reached inside the tree
                values = rewards(result)
                break
            if not legal:
                raise RuntimeError(f"{engine.NAME}: seat {actor} is to act with no legal command")
            commands = legal
            if by_identity:
                # One object per distinct command: its identity is its key (no hashing).
                keys = [*map(id, legal)]
            # Commands are their own keys (hashed once, by the dict) when every type is known
            # to hash; a command holding a dict is keyed by its JSON instead.
            elif all(map(hashable.__contains__, map(type, legal))):
                keys = legal
            else:
                keys = [_key(engine, cmd) for cmd in legal]
        if expanded:
            kernel_rollout = self.kernel_rollout
            if kernel_rollout is not None:
                values = kernel_rollout(state, rand)  # the kernel is this iteration's own
            else:
                values = self.rollout(engine, state.freeze(), rand)
        for visited in path:
            visits = visited.visits + 1
            reward = visited.reward + values[visited.seat]
            visited.visits = visits
            visited.reward = reward
            visited.mean = reward / visits
        return True


# UCB1's ``ln`` of an availability count, by count: a list's item costs much less than
# ``math.log`` (whose optional base makes each call parse a tuple of arguments), and it is
# read for every candidate weighed. Shared and grown by copy (a search in another thread
# keeps the list it took), up to ``_LN_MAX`` counts; past that ``_Ln`` computes each.
_LN: list[float] = [-math.inf]  # ln(0): never read (an availability count is at least 1)
_LN_MAX = 1 << 20
# The table's first size for a search on a time budget (doubled as its iterations go on).
_LN_AHEAD = 4096


class _Ln:
    """``ln[n]`` is ``math.log(n)``: the table's stand-in past ``_LN_MAX``."""

    __slots__ = ()

    def __getitem__(self, n: int) -> float:
        return math.log(n)


def _ln_table(size: int) -> list[float] | _Ln:
    """``math.log(n)`` at ``[n]`` for every ``n`` below ``size``."""
    global _LN
    if size > _LN_MAX:
        return _Ln()
    table = _LN
    if len(table) < size:
        table = table + [math.log(n) for n in range(len(table), size)]
        _LN = table
    return table


def _dealer(
    engine: Any, view: Mapping[str, Any], seat: int, hooks: Any = None
) -> Callable[[Any], Any]:
    """``rng -> state``: the engine's ``determinizer`` (the view read once, then a deal per
    call) when it has one, else the search hooks', else ``determinize`` each
    time. A view the determinizer refuses fails every iteration, as ``determinize`` would."""
    make = getattr(engine, "determinizer", None) or getattr(hooks, "determinizer", None)
    if make is None:
        return lambda rng: engine.determinize(view, seat, rng)
    try:
        deal: Callable[[Any], Any] = make(view, seat)
    except ValueError as exc:
        error = exc

        def refuse(rng: Any) -> Any:
            raise error

        return refuse
    return deal


def _root_options(
    engine: Any, view: Mapping[str, Any], rand: random.Random
) -> list[tuple[Any, Any, dict[str, Any]]]:
    """The root seat's candidates: (tree key, engine command, client JSON to send).

    The search hooks' ``root_commands`` when they propose some; else listed commands as
    the view lists them; for an unlistable decision (a ``template`` entry on an engine that
    does not list all commands) up to ``ROOT_SAMPLES`` distinct ``random_command`` draws
    instead."""
    listed = list(view.get("legal_commands") or [])
    chosen = getattr(_hooks(engine), "root_commands", None)
    proposed = chosen(view, rand) if chosen is not None else None
    if proposed is not None:
        listed = proposed
    elif not engine.TRAITS.lists_all_commands and any(d.get("template") is True for d in listed):
        drawn: dict[str, dict[str, Any]] = {}
        for _ in range(ROOT_SAMPLES):
            doc = engine.random_command(view, rand)
            drawn.setdefault(_json_key(doc), doc)
        listed = list(drawn.values())
    out = []
    for doc in listed:
        command = engine.parse_command(doc)
        out.append((_key(engine, command), command, doc))
    return out


# Command types seen to hash (``_key``): their commands are their own keys.
_HASHABLE: set[type] = set()


def _key(engine: Any, command: Any) -> Any:
    """A child's key: the command itself (frozen dataclasses hash by value), or its canonical
    JSON when it holds a dict (a map of prices)."""
    try:
        hash(command)
    except TypeError:
        return _json_key(engine.command_to_json(command))
    _HASHABLE.add(type(command))
    return command


def _json_key(doc: Mapping[str, Any]) -> str:
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS).decode()


def kernel_playout(engine: Any, kernel: Any, rand: random.Random) -> list[float]:
    """``random_playout`` on a game's kernel (mutated in place: pass a copy): each step is the
    kernel's ``apply`` with its own mutators as ``emit``, so nothing is recorded or frozen."""
    adapter = FastRng(rand)
    lists_all = engine.TRAITS.lists_all_commands
    randbelow = _randbelow(rand)
    outcome, to_act, legal_commands = kernel.outcome, kernel.to_act, kernel.legal_commands
    apply, on = kernel.apply, kernel.on
    for _ in range(PLAYOUT_CAP):
        result = outcome()
        if result is not None:
            return rewards(result)
        actor = to_act()[0]
        legal = legal_commands(actor)
        if not legal:
            raise RuntimeError(f"{engine.NAME}: seat {actor} is to act with no legal command")
        if not lists_all and _templated(legal):
            command = _sample(engine, kernel.freeze(), actor, legal, rand)
        else:
            command = legal[randbelow(len(legal))]
        apply(actor, command, adapter, on)
    return _capped(engine, kernel.freeze())


def _templated(legal: Sequence[Any]) -> bool:
    """Whether the listing stands for commands it cannot list (a ``template`` entry)."""
    return any(getattr(c, "template", False) is True for c in legal)


def _sample(engine: Any, state: Any, seat: int, legal: Sequence[Any], rand: random.Random) -> Any:
    """One ``random_command`` draw for ``seat`` in ``state``, from the view the service would
    give it (``shared.match.projections.game_view``: the engine's view plus ``seat``, ``to_act``,
    ``legal_commands``)."""
    doc = dict(engine.view(state, seat))
    if doc.get("legal_commands") is None:
        doc["legal_commands"] = [engine.command_to_json(c) for c in legal]
    doc.update(seat=seat, to_act=list(engine.to_act(state)), outcome=None)
    return engine.parse_command(engine.random_command(doc, rand))


def _capped(engine: Any, state: Any) -> list[float]:
    """A play-out cut short: each seat's share of the other seats it outscores (ties half)."""
    scores = engine.view(state, None)["scores"]
    n = len(scores)
    if n < 2:
        return [1.0] * n
    # The -0.5 takes out each seat's tie with itself.
    return [
        (sum(1.0 if mine > other else 0.5 if mine == other else 0.0 for other in scores) - 0.5)
        / (n - 1)
        for mine in scores
    ]
