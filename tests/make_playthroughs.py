"""Write the golden playthroughs of tests/playthroughs/*.json (run: ``python tests/make_playthroughs.py``).

Each file is one complete deal: its record (rules, dealer, hands, kitty, actions in the notation
of docs/rules.md §1), and at every step the seat to act, the phase, the legal actions (as strings, in
action-id order), the open-misère cards exposed (when any) and the action taken; then the final
tricks and scores; and, before every step and once at the end, a digest of what the environment
shows: each seat's observation with its action mask, and the global ``state()``.
tests/test_playthroughs.py replays every file against the engine, so any change
of behaviour shows up as a failing test and, once regenerated, as a diff of these files.

The choices are deterministic: the auction is scripted, the deal is a seeded shuffle (with a card
moved where the scenario needs it), and the other choices are drawn by a seeded random generator
among the legal actions (with a preference where the scenario needs one, e.g. a joker lead).
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from five_hundred_env import Deal, action_to_str, make_rules, parse_action, raw_env, record_of  # noqa: E402
from five_hundred_env.cards import card_to_str, mask_to_cards, parse_card  # noqa: E402
from five_hundred_env.engine import deal_to_cards  # noqa: E402

OUT = HERE / "playthroughs"

SCENARIOS = [
    # name, preset, options, seed, dealer, auction, cards to give the contractor, preference
    dict(name="australian_trumps", preset="australian", seed=101, dealer=0,
         auction="6S 6H PASS 7S PASS PASS",
         about="[AU] a trump contract (7S) after a four-seat auction; bowers and joker in play"),
    dict(name="italian_3p_trumps", preset="italian_3p", seed=202, dealer=2,
         auction="6S PASS 7D",
         about="[IT] a single-round auction (the last bid is highest) and a 7D contract"),
    dict(name="french_46_trumps", preset="french_46", seed=303, dealer=3,
         auction="PASS 6C PASS 7C PASS",
         about="[FR] two jokers, a kitty of six, passed players skipped, a 7C contract"),
    dict(name="australian_nt_nomination", preset="australian", seed=404, dealer=3,
         auction="7NT PASS PASS PASS", give=["JK"], prefer=["NOMINATE_D"],
         about="[AU] no trumps, the contractor holds the joker and nominates it a diamond"),
    dict(name="italian_3p_nt_joker_lead", preset="italian_3p", seed=505, dealer=2,
         auction="6NT PASS PASS", give=["JK"], prefer=[":"],
         about="[IT] no trumps, the contractor leads the suitless joker naming a suit"),
    dict(name="french_46_nt_joker_leads", preset="french_46", seed=606, dealer=3,
         auction="6NT PASS PASS PASS", give=["JK1", "JK2"], prefer=[":"],
         about="[FR] no trumps, both jokers led suitless under not_shown_void"),
    dict(name="australian_misere", preset="australian", seed=707, dealer=2,
         auction="7S MISERE PASS PASS PASS",
         about="[AU] misère over a 7 bid; the partner sits out, tricks of three cards"),
    dict(name="australian_open_misere", preset="australian", seed=808, dealer=3,
         auction="OPEN_MISERE PASS PASS PASS",
         about="[AU] open misère, exposed after the first trick"),
    dict(name="italian_3p_open_misere", preset="italian_3p", seed=909, dealer=2,
         auction="OPEN_MISERE PASS PASS",
         about="[IT] open misère, exposed from the first lead; defenders score per declarer trick"),
    # §10: two, five and six players
    dict(name="two_handed_trumps", preset="two_handed", seed=1001, dealer=1,
         auction="6S 7H",
         about="[BC2] two players, a dead hand of ten; single round (non-dealer, then dealer): 7H by the dealer"),
    dict(name="two_handed_misere", preset="two_handed", seed=1102, dealer=0,
         auction="PASS MISERE",
         about="[BC2] misère alone against one: two-card tricks, 10 per declarer trick to the defender"),
    dict(name="five_handed_card_call", preset="five_handed", seed=1203, dealer=4,
         auction="7H PASS PASS PASS PASS", prefer=["Ah", "Kh", "Qh", "Jd"],
         about="[BC5, WP] five players, 53 cards: the contractor calls a card; its holder is the partner"),
    dict(name="five_handed_seat_call", preset="five_handed", options={"partner_call": "seat"}, seed=1304,
         dealer=2, auction="PASS 6NT PASS PASS PASS", prefer=["PARTNER_1"],
         about="[BC5] partner_call=seat: the contractor names a seat (PARTNER_1)"),
    dict(name="five_handed_open_misere", preset="five_handed", seed=1405, dealer=0,
         auction="OPEN_MISERE PASS PASS PASS PASS",
         about="[PG] open misère alone against four: no call, five-card tricks, exposed after the first trick"),
    dict(name="six_handed_trumps", preset="six_handed", seed=1506, dealer=5,
         auction="6H 7H PASS PASS PASS PASS PASS",
         about="[BC6] six players in two teams of three, 63 cards (E W X ranks): 7H by seat 1"),
    dict(name="six_handed_misere", preset="six_handed", seed=1607, dealer=5,
         auction="7S MISERE PASS PASS PASS PASS PASS",
         about="[BC6] misère in six: both team-mates sit out, four-card tricks"),
]


def build_deal(spec: dict) -> Deal:
    """A seeded shuffle; the cards in ``give`` are swapped into the first bidder's hand."""
    rules = make_rules(spec["preset"], **spec.get("options", {}))
    rng = random.Random(spec["seed"])
    deal = Deal.new(rules, rng, spec["dealer"])
    hands, kitty = list(deal.dealt), deal.kitty
    seat = (spec["dealer"] + 1) % rules.num_players
    for name in spec.get("give", []):
        card = 1 << parse_card(name, rules.two_jokers)
        if hands[seat] & card:
            continue
        holder = next((s for s in range(len(hands)) if hands[s] & card), None)
        swap = 1 << max(c for c in mask_to_cards(hands[seat]) if c < 44)  # its highest suited card of ranks 4-A
        hands[seat] ^= swap | card
        if holder is None and kitty & card:
            kitty ^= card | swap
        elif holder is None:
            pass  # the card was in the two-handed dead hand: the swapped card goes there
        else:
            hands[holder] ^= card | swap
    return Deal(rules, hands, kitty, spec["dealer"])


def digest(*arrays: Any) -> str:
    """The first 16 hex digits of the SHA-256 of the arrays' bytes."""
    return hashlib.sha256(b"".join(a.tobytes() for a in arrays)).hexdigest()[:16]


def views(env: raw_env) -> dict[str, Any]:
    """Digests of every seat's observation + action mask, and of the global state."""
    seen = [env.observe(agent) for agent in env.possible_agents]
    return {"observations": [digest(o["observation"], o["action_mask"]) for o in seen], "state": digest(env.state())}


def env_of(deal: Deal) -> raw_env:
    """A ``"deal"`` environment reset to the deal as dealt."""
    env = raw_env(rules=deal.rules)
    env.reset(options={"dealer": deal.dealer, **deal_to_cards(deal.rules, deal.dealt, deal.kitty)})
    return env


def run(spec: dict) -> dict:
    deal = build_deal(spec)
    rules = deal.rules
    rng = random.Random(spec["seed"] * 7 + 1)
    auction = spec["auction"].split()
    prefer = spec.get("prefer", [])
    steps = []
    env = env_of(deal)
    seen = []
    while not deal.is_over:
        legal = sorted(deal.legal_actions())
        spelled = [action_to_str(a, rules) for a in legal]
        if auction:
            action = parse_action(auction.pop(0), rules)
        elif deal.phase.name == "DISCARD":  # keep the cards the scenario gave the contractor
            action = rng.choice([a for a, s in zip(legal, spelled, strict=True) if s not in spec.get("give", [])])
        else:
            wanted = [a for a, s in zip(legal, spelled, strict=True) if any(p in s for p in prefer)]
            action = rng.choice(wanted) if wanted else rng.choice(legal)
        step = {"seat": deal.to_act, "phase": deal.phase.name, "legal": spelled}
        if deal.exposed:
            step["exposed"] = [card_to_str(c, rules.two_jokers) for c in mask_to_cards(deal.exposed_cards())]
        step["action"] = action_to_str(action, rules)
        steps.append(step)
        seen.append(views(env))
        deal.apply_action(action)
        env.step(env.str_to_action(step["action"]))
    seen.append(views(env))
    assert not auction, "the scripted auction did not fit"
    two = rules.two_jokers
    final = {
        "contract": action_to_str(deal.contract, rules),
        "contractor": deal.contractor,
        "tricks": [{"leader": leader, "led": "SCDH"[led], "cards": [card_to_str(c, two) for _, c in plays], "winner": winner}
                   for leader, led, plays, winner in deal.tricks],
        "tricks_won": list(deal.tricks_won),
        "score_change": list(deal.score_change),
    }
    return {"name": spec["name"], "about": spec["about"], "record": record_of(deal), "steps": steps, "final": final,
            "views": seen}


def dumps(data: dict) -> str:
    """JSON with one step (and one trick) per line, so a behaviour change is a readable diff."""
    lines = ["{"]
    lines.append(f' "name": {json.dumps(data["name"])},')
    lines.append(f' "about": {json.dumps(data["about"], ensure_ascii=False)},')
    lines.append(f' "record": {json.dumps(data["record"])},')
    lines.append(' "steps": [')
    lines.append(",\n".join("  " + json.dumps(s) for s in data["steps"]))
    lines.append(" ],")
    final = data["final"]
    lines.append(' "final": {')
    lines.append(f'  "contract": {json.dumps(final["contract"])}, "contractor": {final["contractor"]},')
    lines.append('  "tricks": [')
    lines.append(",\n".join("   " + json.dumps(t) for t in final["tricks"]))
    lines.append("  ],")
    lines.append(f'  "tricks_won": {json.dumps(final["tricks_won"])},')
    lines.append(f'  "score_change": {json.dumps(final["score_change"])}')
    lines.append(" },")
    lines.append(' "views": [')
    lines.append(",\n".join("  " + json.dumps(v) for v in data["views"]))
    lines.append(" ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    OUT.mkdir(exist_ok=True)
    for spec in SCENARIOS:
        data = run(spec)
        (OUT / f"{spec['name']}.json").write_text(dumps(data))
        print(f"{spec['name']}: {data['final']['contract']} by seat {data['final']['contractor']}, "
              f"tricks {data['final']['tricks_won']}, score {data['final']['score_change']}")


if __name__ == "__main__":
    main()
