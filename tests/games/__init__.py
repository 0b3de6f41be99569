"""Games written only for the tests, hosted with ``shared.games.register`` by the tests."""
