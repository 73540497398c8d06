"""Command-line overrides of a config (``key.sub=value``), rule options written as text
(``NAME=VALUE``), and the message of a config that fails validation: each error names the file,
the key and, where an override caused it, the override.

:func:`training.settings.config.config_from_dict` applies the overrides and validates; the
command line's ``--option`` reads rule options with :func:`parse_rule_option` too.
"""

from __future__ import annotations

import re
import typing
from typing import Any

from pydantic import BaseModel, ValidationError

from five_hundred_env.rules import Rules
from training.settings.config_base import ConfigError
from training.settings.yaml_loader import YamlError, parse_yaml


def parse_override(text: str) -> tuple[str, Any]:
    """``"train.total_steps=2e6"`` → ``("train.total_steps", 2000000.0)``; the value is YAML,
    except for a rule option (``rules.options.NAME=VALUE``), read by :func:`parse_rule_option`."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*", key):
        raise ConfigError(f"override {text!r}: expected key.sub=value (for example train.total_steps=2e6)")
    parts = key.split(".")
    try:
        if len(parts) == 3 and parts[:2] == ["rules", "options"]:
            return key, parse_rule_option(f"{parts[2]}={value}")[1]
        return key, parse_yaml(value) if value.strip() else None
    except (ConfigError, YamlError) as e:
        raise ConfigError(f"override {text!r}: {e}") from None


_RULE_OPTION_TYPES = {name: kind for name, kind in typing.get_type_hints(Rules).items() if name != "preset"}


def parse_rule_option(text: str) -> tuple[str, Any]:
    """One rule option from text, ``"NAME=VALUE"`` → ``(name, value)``, the value read by the
    option's kind (docs/rules.md §2): a word for the named choices (``misere=none``), ``true``/``yes``/
    ``on`` or ``false``/``no``/``off`` for switches (``slam_bonus=false``), a whole number for
    the numbers (``misere_value=300``), and ``none``/``off``/``null`` or a number for
    ``both_jokers_min_bid``. An unknown name or a value of the wrong kind raises
    :class:`ConfigError`; whether a value is allowed is :func:`make_rules`'s to say."""
    name, sep, raw = text.partition("=")
    name, value = name.strip(), raw.strip()
    if not sep or not name:
        raise ConfigError(f"rule option {text!r}: expected NAME=VALUE (for example slam_bonus=false)")
    kind = _RULE_OPTION_TYPES.get(name)
    if kind is None:
        raise ConfigError(f"unknown rule option {name!r}; options are: {', '.join(sorted(_RULE_OPTION_TYPES))}")
    low = value.lower()
    if kind is str:
        return name, value
    if kind is bool:
        if low not in ("true", "yes", "on", "false", "no", "off"):
            raise ConfigError(f"rule option {name!r} takes true or false, got {value!r}")
        return name, low in ("true", "yes", "on")
    if low in ("none", "off", "null") and kind is not int:  # the optional numbers (int | None)
        return name, None
    if not re.fullmatch(r"[-+]?[0-9]{1,18}", value):
        raise ConfigError(f"rule option {name!r} takes a whole number{'' if kind is int else ' or none'}, got {value!r}")
    return name, int(value)


def _deep_copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _deep_copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_deep_copy(v) for v in data]
    return data


def with_overrides(data: dict[str, Any], applied: dict[str, tuple[str, Any]], source: str) -> dict[str, Any]:
    """A copy of ``data`` with every override of ``applied`` set (the data themselves untouched)."""
    merged = _deep_copy(data)
    for key, (text, value) in applied.items():
        _set_dotted(merged, key, value, source, text)
    return merged


def _set_dotted(data: dict[str, Any], key: str, value: Any, source: str, text: str) -> None:
    node = data
    parts = key.split(".")
    for i, part in enumerate(parts[:-1]):
        child = node.setdefault(part, {})
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            where = ".".join(parts[: i + 1])
            raise ConfigError(f"{source}: override {text!r}: {where} is a value, not a section")
        node = child
    node[parts[-1]] = _deep_copy(value)


def validation_message(error: ValidationError, data: dict[str, Any], applied: dict[str, tuple[str, Any]], source: str,
                       model: type[BaseModel]) -> str:
    """The message of a config (``data`` with the overrides of ``applied`` set) that ``model``
    refuses: one line per error, each naming ``source``, the key and the override to blame, if any."""
    lines = [_error_line(err, source, _blamed_override(err, data, applied, source, model), model)
             for err in error.errors()]
    return "invalid config\n  " + "\n  ".join(lines) if len(lines) > 1 else lines[0]


def _error_key(err: Any) -> str:
    return ".".join(str(p) for p in err["loc"])


def _blamed_override(err: Any, data: dict[str, Any], applied: dict[str, tuple[str, Any]], source: str,
                     model: type[BaseModel]) -> str | None:
    """The override behind a validation error, if any. An override that set the erring value
    (or a section holding it) is to blame; one inside an erring section (or anywhere, for an
    error of the whole config) only if the error goes away without it: a section's check
    (say, a rule option that needs another preset) must not be blamed on an unrelated override
    of that section."""
    key = _error_key(err)
    for k, (text, _) in applied.items():
        if key == k or key.startswith(k + "."):
            return text
    for k, (text, _) in applied.items():
        if key and not k.startswith(key + "."):
            continue
        others = {o: v for o, v in applied.items() if o != k}
        try:
            model.model_validate(with_overrides(data, others, source))
            return text
        except ValidationError as e:
            if not any(_error_key(other) == key and other["msg"] == err["msg"] for other in e.errors()):
                return text
    return None


def _error_line(err: Any, source: str, via: str | None, model: type[BaseModel]) -> str:
    key = _error_key(err) or "(top level)"
    msg = err["msg"].removeprefix("Value error, ")
    if err["type"] == "extra_forbidden":
        msg = "unknown key"
        parent = ".".join(str(p) for p in err["loc"][:-1])
        known = _known_keys(parent, model)
        if known:
            msg += f" (known keys{' of ' + parent if parent else ''}: {', '.join(known)})"
    elif ("input" in err and err["type"] not in ("missing",) and not isinstance(err["input"], dict)
          and f"got {err['input']!r}" not in msg):  # a validator's own message may say it already
        msg += f" (got {err['input']!r})"
    return f"{source}: {key}: {msg}" + (f" [from the override {via!r}]" if via else "")


def _known_keys(dotted: str, model: type[BaseModel]) -> list[str]:
    for part in dotted.split(".") if dotted else []:
        field = model.model_fields.get(part)
        ann = field.annotation if field else None
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return []
        model = ann
    return list(model.model_fields)
