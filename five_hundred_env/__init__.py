"""Five Hundred: a rules engine for every preset of RULES.md and (later) a PettingZoo AEC environment."""

from five_hundred_env.actions import ActionTable, action_to_str, parse_action
from five_hundred_env.cards import card_to_str, parse_card
from five_hundred_env.engine import Deal, Game, IllegalActionError, Phase
from five_hundred_env.records import load_record, record_of, replay, save_record
from five_hundred_env.rules import PRESETS, Rules, make_rules

__all__ = [
    "PRESETS",
    "ActionTable",
    "Deal",
    "Game",
    "IllegalActionError",
    "Phase",
    "Rules",
    "action_to_str",
    "card_to_str",
    "load_record",
    "make_rules",
    "parse_action",
    "parse_card",
    "record_of",
    "replay",
    "save_record",
]

from five_hundred_env.env import env, raw_env
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.wrappers import SingleAgentEnv

__all__ += ["ObservationEncoder", "SingleAgentEnv", "env", "raw_env"]
