"""Fast simulators for search: mutable, per-game re-implementations of the pure engines' hot
path (legal commands, decide + evolve, outcome), proven equal to the engines by property tests.

The pure engines in ``shared.games`` stay the source of truth for the service and for audits;
these exist only so that search play-outs run faster.
"""
