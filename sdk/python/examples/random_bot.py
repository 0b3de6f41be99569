"""A random bot: serve it as a webhook, or connect it to the service with --connected.

python random_bot.py --key KEY --port 8765              # webhook at http://127.0.0.1:8765/
python random_bot.py --key KEY --connected --api http://127.0.0.1:8000

It answers up to --concurrency turns at once (act runs on several threads: its counters take
a lock) and prints a progress line every --every turns: turns answered, games over.
"""

import argparse
import random
import threading

from tabletop_client import Bot, play_connected, serve_webhook


class RandomBot(Bot):
    def __init__(self, every=100):
        self.every = every  # a progress line every this many turns (0: none)
        self.turns = 0
        self.games = 0
        self.lock = threading.Lock()

    def act(self, view, legal_commands):
        with self.lock:
            self.turns += 1
            if self.every and self.turns % self.every == 0:
                print(f"{self.turns} turns answered, {self.games} games over", flush=True)
        return random.choice(legal_commands)

    def game_over(self, message):
        with self.lock:
            self.games += 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", required=True, help="the key POST /v1/bots answered")
    parser.add_argument("--connected", action="store_true", help="read turns from --api")
    parser.add_argument("--api", default="http://127.0.0.1:8000")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--games", type=int, default=None, help="stop after this many games")
    parser.add_argument("--concurrency", type=int, default=16, help="turns answered at once")
    parser.add_argument("--every", type=int, default=100, help="turns between progress lines")
    args = parser.parse_args()
    bot = RandomBot(args.every)
    every = f"a line every {args.every} turns" if args.every else "no progress lines"
    if args.connected:
        print(f"random bot: reading its turns from {args.api} ({every})", flush=True)
        play_connected(bot, args.api, args.key, max_games=args.games, concurrency=args.concurrency)
        print(f"{bot.turns} turns answered, {bot.games} games over", flush=True)
    else:
        print(f"random bot: serving at http://{args.host}:{args.port}/ ({every})", flush=True)
        serve_webhook(bot, args.key, args.host, args.port, concurrency=args.concurrency)
