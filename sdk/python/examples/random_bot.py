"""A random bot: serve it as a webhook, or connect it to the service with --connected.

python random_bot.py --key KEY --port 8765              # webhook at http://127.0.0.1:8765/
python random_bot.py --key KEY --connected --api http://127.0.0.1:8000
"""

import argparse
import random

from tabletop_client import Bot, play_connected, serve_webhook


class RandomBot(Bot):
    def act(self, view, legal_commands):
        return random.choice(legal_commands)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--key", required=True, help="the key POST /v1/bots answered")
    parser.add_argument("--connected", action="store_true", help="read turns from --api")
    parser.add_argument("--api", default="http://127.0.0.1:8000")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--games", type=int, default=None, help="stop after this many games")
    args = parser.parse_args()
    if args.connected:
        play_connected(RandomBot(), args.api, args.key, max_games=args.games)
    else:
        serve_webhook(RandomBot(), args.key, args.host, args.port)
