"""``tabletop tournament run --local``: a tournament's games played in this machine's processes.

Local games are the service's games: the plan (``shared.tournaments.plan``) gives each game its
seats and seed, and the one play-out driver (``shared.app.playout.play``) plays it, so a local
tournament and the service's from the same request and seed have the same wins, scores, ranks
and head-to-head. The parent folds outcomes into ``shared.tournaments.standings`` in game
order, which makes local ratings reproducible; the service folds games as its workers finish
them (openskill updates depend on the order) and replays the ratings in game order once the
last game is in, so a finished tournament's ratings equal the local run's. ``local_doc`` puts
the result in the shape of the service's ``GET /v1/tournaments/{id}``, so that both modes print
and plot the same way.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from shared.tournaments.plan import Plan

LOCAL_MAX_GAMES = 1_000_000  # no service cap in process; this only bounds a typo

# (game index, outcome {scores, winners, ranks, draw}, actions): what a worker sends back
GameResult = tuple[int, dict[str, Any], int]

_WORKER_PLAN: Plan | None = None


def _init_worker(plan_doc: Mapping[str, Any]) -> None:
    """Each worker rebuilds the plan once, so a batch is sent as its game indexes only."""
    import signal

    from shared.tournaments.plan import Plan

    global _WORKER_PLAN
    _WORKER_PLAN = Plan.from_doc(plan_doc)
    # Ctrl-C is the parent's to handle: workers would each print a KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _play_batch(indexes: Sequence[int]) -> list[GameResult]:
    assert _WORKER_PLAN is not None, "the pool's initializer sets the plan"
    return [play_game(_WORKER_PLAN, i) for i in indexes]


def play_game(plan: Plan, index: int) -> GameResult:
    """Game ``index`` of ``plan``, played as the service's task plays it (same seats, seed and
    options) but without sealing envelopes: only its outcome travels back."""
    from services import kit_entrants
    from shared import games
    from shared.app import playout

    specs = plan.seat_specs(index)
    if any(kit_entrants.is_kit(spec) for spec in specs):  # a bot-kit class plays a seat
        played = kit_entrants.play(plan.game, specs, plan.options, plan.game_seed(index))
    else:
        played = playout.play(
            plan.game, specs, plan.options, plan.game_seed(index), keep_envelopes=False
        )
    outcome = games.get(plan.game).outcome(played.record.state)
    assert outcome is not None, "a play-out ends with an outcome"
    small = {
        "scores": list(outcome["scores"]),
        "winners": list(outcome["winners"]),
        "ranks": list(outcome["ranks"]),
        "draw": bool(outcome.get("draw")),
    }
    return index, small, played.actions


def batches(total: int, jobs: int, *, slow: bool = False) -> list[list[int]]:
    """Game indexes in batches: about eight a worker, so the pool stays busy to the end and
    the bar moves, but at most 32 games each, so one result is never large; one game each
    when a bot searches (``slow``), whose games take long enough to hide the overhead."""
    size = 1 if slow else max(1, min(32, -(-total // (jobs * 8))))
    return [list(range(i, min(i + size, total))) for i in range(0, total, size)]


class LocalRun:
    """The games of a plan played in ``jobs`` processes (in this one for ``jobs == 1``) and
    folded into a tally in game order, whatever order they finish in: ratings depend on the
    order of games, and this one is the service's and a sequential fold's.

    As a context manager it starts the workers on entry; iterating yields the number of
    games finished after each batch; then ``tally``, ``scores`` (per entrant, its score in
    each game, in game order) and ``actions`` hold the results.
    """

    def __init__(self, plan: Plan, jobs: int) -> None:
        from shared.tournaments import standings

        self.plan = plan
        self.jobs = max(1, jobs)
        self.tally: dict[str, Any] = standings.empty(len(plan.entrants))
        if plan.format == "sprt":
            from shared.tournaments import sprt

            self.tally["sprt"] = sprt.empty()
        self.scores: list[list[float]] = [[] for _ in plan.entrants]
        self.actions = 0
        self.done = 0
        self._folded = 0
        self._pending: dict[int, GameResult] = {}
        self._pool: ProcessPoolExecutor | None = None
        self._futures: list[Future[list[GameResult]]] = []

    def __enter__(self) -> LocalRun:
        if self.jobs > 1:
            from concurrent.futures import ProcessPoolExecutor

            from shared.app import bots

            seated = [e.spec for e in self.plan.entrants] + [self.plan.field]
            slow = any(
                bots.get(str(spec["bot"])).slow for spec in seated if spec.get("bot") in bots.BOTS
            )  # a kit class (bot "kit") is taken as quick
            work = batches(self.plan.games, self.jobs, slow=slow)
            self._pool = ProcessPoolExecutor(
                max_workers=min(self.jobs, len(work)),
                initializer=_init_worker,
                initargs=(self.plan.to_doc(),),
            )
            # With the fork start method the first submit starts every worker: now, before
            # the caller starts any thread.
            self._futures = [self._pool.submit(_play_batch, b) for b in work]
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            # After an error or Ctrl-C the queued batches are dropped; running ones end soon.
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    @property
    def decided(self) -> bool:
        """Whether an sprt match's test has decided (no game after its pair counts)."""
        return bool((self.tally.get("sprt") or {}).get("result"))

    def __iter__(self) -> Iterator[int]:
        if self._pool is None:
            for i in range(self.plan.games):
                self._take([play_game(self.plan, i)])
                yield self.done
                if self.decided:
                    return
            return
        from concurrent.futures import as_completed

        for future in as_completed(self._futures):
            self._take(future.result())
            yield self.done
            if self.decided:  # the batches not started are dropped on exit
                return

    def _take(self, results: Sequence[GameResult]) -> None:
        from shared.tournaments import standings

        for result in results:
            self._pending[result[0]] = result
        self.done += len(results)
        if self.plan.format == "sprt":
            self._take_pairs()
            return
        while self._folded in self._pending:
            index, outcome, actions = self._pending.pop(self._folded)
            seating = self.plan.seating(index)
            standings.fold(self.tally, seating, outcome)
            for seat, entrant in enumerate(seating):
                if entrant is not None:
                    self.scores[entrant].append(outcome["scores"][seat])
            self.actions += actions
            self._folded += 1

    def _take_pairs(self) -> None:
        """An sprt match: count complete pairs in pair order until the test decides, as the
        service does (``sprt.fold_pair``)."""
        from shared.tournaments import sprt

        plan = self.plan
        test = plan.sprt or sprt.params(None)
        baseline = plan.opponents()[0]
        while not self.decided and {self._folded, self._folded + 1} <= self._pending.keys():
            pair = [self._pending.pop(self._folded + j) for j in (0, 1)]
            games = [(plan.seating(index), outcome) for index, outcome, _ in pair]
            sprt.fold_pair(self.tally, games, plan.candidate, baseline, test)
            for (_, outcome, actions), (seating, _) in zip(pair, games, strict=True):
                for seat, entrant in enumerate(seating):
                    if entrant is not None:
                        self.scores[entrant].append(outcome["scores"][seat])
                self.actions += actions
            self._folded += 2


def play_local(plan: Plan, jobs: int) -> LocalRun:
    """Play every game of ``plan`` in ``jobs`` processes; the finished run (tally, scores)."""
    with LocalRun(plan, jobs) as games:
        for _ in games:
            pass
    return games


def local_doc(plan: Plan, tally: Mapping[str, Any]) -> dict[str, Any]:
    """A finished local tournament in the shape of ``GET /v1/tournaments/{id}`` (the parts
    the report and the plots read), so both modes print the same way."""
    from shared.tournaments import sprt, standings
    from shared.tournaments.plan import spec_label

    entrants = [{"name": e.name, **e.spec} for e in plan.entrants]
    rendered = standings.render(tally, entrants)
    decided = bool((tally.get("sprt") or {}).get("result"))
    return {
        "game": plan.game,
        "format": plan.format,
        "players": plan.players,
        "options": dict(plan.options),
        "entrants": [
            {"entrant": i, "name": e.name, "spec": dict(e.spec), "label": spec_label(e.spec)}
            for i, e in enumerate(plan.entrants)
        ],
        "status": "finished" if tally["done"] >= plan.games or decided else "running",
        "progress": {"done": tally["done"], "total": plan.games},
        "standings": rendered["standings"],
        "ratings": rendered["ratings"],
        "head_to_head": rendered["head_to_head"] if plan.players == 2 else None,
        "pairwise": rendered["head_to_head"],
        "draws": rendered["draws"],
        "candidate": plan.candidate if plan.duel else None,
        "field": dict(plan.field) if plan.duel else None,
        "sprt": None
        if plan.format != "sprt"
        else sprt.render(tally["sprt"], plan.sprt or sprt.params(None)),
    }
