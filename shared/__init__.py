"""The domain and plumbing every tabletop service uses: games, events, store, config."""
