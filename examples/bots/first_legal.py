#!/usr/bin/env python3
"""A bot for five-hundred's cmd: agents that plays its first legal action (docs/protocol.md).

It imports nothing of the project: any program that reads JSON lines on standard input and
answers each line holding "legal_actions" with one line {"action": ID} can sit at the table.

    five-hundred evaluate "cmd:python3 examples/bots/first_legal.py" random --deals 20
"""

import json
import sys


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        if "legal_actions" in message:  # a decision: answer it, one line, flushed
            print(json.dumps({"action": message["legal_actions"][0]}), flush=True)
        # start, deal_start, deal_end, game_end: nothing to answer


if __name__ == "__main__":
    main()
