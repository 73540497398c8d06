"""Fit the bidding constants of :class:`agents.heuristic.HeuristicAgent` to its own card play.

For random deals, one seat is given a contract outright (it bids, everyone else passes) and the
heuristic agents play it out. Regressing the tricks its side (its team, or it and its called
partner) takes on the agent's
own-hand estimate gives the intercept (the partner's and the kitty's average help), the slope and
the spread used by the bidding; misère contracts given to hands of every danger level give the
logistic make-probability. Run::

    python benchmarks/calibrate_heuristic.py --rules australian --deals 3000

and copy the printed constants into ``CALIBRATION`` in ``agents/heuristic/calibration.py``.
"""

from __future__ import annotations

import argparse
import random

import numpy as np

from agents.heuristic import HeuristicAgent
from five_hundred_env import env as make_env
from five_hundred_env import make_rules
from five_hundred_env.cards import card_to_str, mask_to_cards
from five_hundred_env.engine import Deal


def play_forced(rules, hands, kitty, seat: int, contract: str, agents) -> tuple[int, bool]:
    """Play a deal where ``seat`` holds ``contract``; return (its side's tricks, made)."""
    n = rules.num_players
    e = make_env(rules=rules, episode="deal")
    names = lambda m: [card_to_str(c, rules.two_jokers) for c in mask_to_cards(m)]  # noqa: E731
    e.reset(seed=0, options={"dealer": (seat - 1) % n, "hands": [names(h) for h in hands], "kitty": names(kitty)})
    forced = [contract] + ["PASS"] * (n - 1)
    for agent in e.agent_iter():
        obs, _r, term, trunc, _i = e.last()
        if term or trunc:
            e.step(None)
            continue
        if forced:
            e.step(e.unwrapped.str_to_action(forced.pop(0)))
            continue
        e.step(agents[int(agent.split("_")[1])].act(obs))
    deal = e.unwrapped.game.deals[0]
    # the contracting team: the side, with a five-handed called partner (docs/rules.md §10.6)
    tricks = sum(deal.tricks_won[s] for s in range(n) if rules.side_of(s) in {rules.side_of(t) for t in deal.contracting_seats()})
    return tricks, deal.contract_made()


def logistic_fit(x: np.ndarray, y: np.ndarray, steps: int = 3000) -> tuple[float, float]:
    """p = 1 / (1 + exp(-(a - b·x))) by gradient ascent on the log-likelihood."""
    a, b = 0.0, 0.0
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(a - b * x)))
        a += 0.5 * np.mean(y - p)
        b += 0.5 * np.mean(-(y - p) * x)
    return float(a), float(b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rules", default="australian")
    parser.add_argument("--deals", type=int, default=2000)
    parser.add_argument("--misere-deals", type=int, default=600)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rules = make_rules(args.rules)
    n = rules.num_players
    rng = random.Random(args.seed)
    agents = [HeuristicAgent(rules, seed=i) for i in range(n)]
    probe = agents[0].evaluator
    rows: list[tuple[int, float, int]] = []
    for _ in range(args.deals):
        deal = Deal.new(rules, rng, 0)
        seat = rng.randrange(n)
        own = probe.evaluate(deal.hands[seat]).own
        strain = max(range(5), key=lambda s: own[s] + rng.random() * 1.5)  # mostly the hand's best strains
        contract = ("6" + "SCDH"[strain]) if strain < 4 else "6NT"
        tricks, _ = play_forced(rules, deal.hands, deal.kitty, seat, contract, agents)
        rows.append((strain, own[strain], tricks))
    data = np.array(rows)
    out: dict[str, object] = {}
    for name, mask in (("suit", data[:, 0] < 4), ("nt", data[:, 0] == 4)):
        x, y = data[mask, 1], data[mask, 2]
        if len(x) < 10:
            continue
        b, a = np.polyfit(x, y, 1)
        sigma = float(np.std(y - (a + b * x)))
        out[name] = {"a": round(float(a), 2), "b": round(float(b), 2), "sigma": round(sigma, 2), "count": len(x)}
    misere_rows = {"MISERE": [], "OPEN_MISERE": []}
    tries = 0
    opts = {"misere": "any_time"} if rules.misere == "none" or rules.misere == "after_seven" else {}
    mrules = make_rules(rules, **opts) if rules.misere != "none" else None
    if mrules is not None:
        magents = [HeuristicAgent(mrules, seed=i) for i in range(n)]
        mprobe = magents[0].evaluator
        while min(len(v) for v in misere_rows.values()) < args.misere_deals and tries < 200 * args.misere_deals:
            tries += 1
            deal = Deal.new(mrules, rng, 0)
            seat = rng.randrange(n)
            ev = mprobe.evaluate(deal.hands[seat])
            for kind, danger in (("MISERE", ev.danger), ("OPEN_MISERE", ev.open_danger)):
                if kind == "OPEN_MISERE" and mrules.open_misere == "none":
                    continue
                if danger > 6 or len(misere_rows[kind]) >= args.misere_deals:
                    continue
                _tricks, made = play_forced(mrules, deal.hands, deal.kitty, seat, kind, magents)
                misere_rows[kind].append((danger, float(made)))
        for kind, rws in misere_rows.items():
            if rws:
                arr = np.array(rws)
                a, b = logistic_fit(arr[:, 0], arr[:, 1])
                out[kind] = {"a": round(a, 2), "b": round(b, 2), "count": len(rws), "made": round(float(arr[:, 1].mean()), 3)}
                for lo, hi in ((0, 0.5), (0.5, 1.5), (1.5, 3), (3, 6.1)):
                    sel = (arr[:, 0] >= lo) & (arr[:, 0] < hi)
                    if sel.any():
                        print(f"  {kind} danger [{lo},{hi}): n={int(sel.sum())} made={arr[sel, 1].mean():.2f}")
    # averages over random hands: what an unknown partner's or opponent's hand is worth
    owns, owns_nt, defs = [], [], []
    for _ in range(2000):
        deal = Deal.new(rules, rng, 0)
        ev = probe.evaluate(deal.hands[0])
        s = rng.randrange(4)
        owns.append(ev.own[s])
        owns_nt.append(ev.own[4])
        defs.append(ev.defence[rng.randrange(5)])
    out["own_avg"] = round(float(np.mean(owns)), 2)
    out["own_avg_nt"] = round(float(np.mean(owns_nt)), 2)
    out["defence_avg"] = round(float(np.mean(defs)), 2)
    for k, val in out.items():
        print(k, val)


if __name__ == "__main__":
    main()
