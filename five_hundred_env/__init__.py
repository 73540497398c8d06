"""Five Hundred: a rules engine for every preset of the rules document, and a PettingZoo AEC
environment over it.

The game in pure Python: :mod:`.rules` (presets and options), :mod:`.cards`, :mod:`.actions`
(ids and notation), :mod:`.engine` (:class:`Deal`, :class:`Game`), :mod:`.scoring` and
:mod:`.records`. The reinforcement-learning layer: :mod:`.observation`, :mod:`.env`
(:func:`env`, :class:`raw_env`), :mod:`.wrappers` (:class:`SingleAgentEnv`, registered with
Gymnasium as ``"FiveHundred-v1"`` on import), :mod:`.render` and :mod:`.picture`.
"""

from five_hundred_env.actions import ActionTable, action_to_str, parse_action
from five_hundred_env.cards import card_to_str, parse_card
from five_hundred_env.engine import Deal, Game, IllegalActionError, Phase
from five_hundred_env.env import env, raw_env
from five_hundred_env.observation import ObservationEncoder
from five_hundred_env.records import load_record, record_of, replay, save_record
from five_hundred_env.rules import PRESETS, Rules, make_rules
from five_hundred_env.wrappers import SingleAgentEnv, register_with_gymnasium

register_with_gymnasium()  # gymnasium.make("FiveHundred-v1", ...) gives a SingleAgentEnv

__all__ = [
    "PRESETS",
    "ActionTable",
    "Deal",
    "Game",
    "IllegalActionError",
    "ObservationEncoder",
    "Phase",
    "Rules",
    "SingleAgentEnv",
    "action_to_str",
    "card_to_str",
    "env",
    "load_record",
    "make_rules",
    "parse_action",
    "parse_card",
    "raw_env",
    "record_of",
    "replay",
    "save_record",
]
