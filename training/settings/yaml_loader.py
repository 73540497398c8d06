"""YAML for configs: ``yaml.safe_load`` semantics, plus ``1e6``-style numbers (plain YAML 1.1
reads them as strings), and a bound on what a document may expand to.

YAML aliases share one parsed node between many places; building plain data from them copies
it out at every use, so a few lines of nested aliases (the "billion laughs" document) would
expand to billions of values. :func:`parse_yaml` counts the expanded size on the parsed node
graph, before anything is built, and refuses documents over :data:`MAX_YAML_VALUES` values.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

MAX_YAML_VALUES = 10_000
"""The most values (mappings, lists, scalars) a YAML document may hold once its aliases are
expanded: a real config has a few hundred; an alias bomb has billions."""


class YamlError(ValueError):
    """A document that is not valid YAML, or too large or too deep to use (one line)."""


class _Loader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that also reads ``1e6`` / ``3e-4`` as floats (YAML 1.1 wants ``1.0e6``),
    refuses a key written twice in one mapping (plain YAML keeps the last one silently) and
    documents that expand to more than :data:`MAX_YAML_VALUES` values."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _value in node.value:  # as written: merged keys (<<) may be overridden, as YAML means
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                key = self.construct_object(key_node)
                if key in seen:
                    raise YamlError(f"the key {key!r} is given twice in one mapping (line {key_node.start_mark.line + 1}); "
                                    "keep one")
                seen.add(key)
        return super().construct_mapping(node, deep)

    def get_single_node(self) -> yaml.Node | None:
        node = super().get_single_node()
        if node is not None:
            _check_expanded_size(node)  # on the parsed graph: aliases are shared nodes, not yet copies
        return node


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                    |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                    |\.[0-9_]+(?:[eE][-+][0-9]+)?
                    |[-+]?\.(?:inf|Inf|INF)
                    |\.(?:nan|NaN|NAN))$""", re.X),
    list("-+0123456789."),
)


def _check_expanded_size(root: yaml.Node) -> None:
    """Count the values of the document as if every alias were copied out (each shared node
    counted once per use, but computed once), refusing a recursive alias or more than
    :data:`MAX_YAML_VALUES` values."""
    sizes: dict[int, int] = {}  # id(node) -> expanded size; -1 while the node is being counted

    def size(node: yaml.Node) -> int:
        known = sizes.get(id(node))
        if known == -1:
            raise YamlError(f"an alias refers to a value that contains it (line {node.start_mark.line + 1})")
        if known is not None:
            return known
        sizes[id(node)] = -1
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [part for pair in node.value for part in pair]
        else:
            children = []
        total = 1 + sum(size(child) for child in children)
        if total > MAX_YAML_VALUES:
            raise YamlError(f"the document expands to more than {MAX_YAML_VALUES} values through its aliases "
                              "(an alias bomb?); write the values out")
        sizes[id(node)] = total
        return total

    size(root)


def parse_yaml(text: str) -> Any:
    """Parse YAML safely (no arbitrary objects), reading ``1e6`` as a number. Invalid YAML, a
    document nested too deeply, or one whose aliases expand to more than
    :data:`MAX_YAML_VALUES` values raise :class:`YamlError` (one line)."""
    try:
        return yaml.load(text, Loader=_Loader)  # _Loader is a SafeLoader subclass: still safe
    except yaml.YAMLError as e:
        raise YamlError(f"not valid YAML: {' '.join(str(e).split())}") from None
    except YamlError:
        raise
    except RecursionError:
        raise YamlError("the document is nested too deeply") from None
    except ValueError as e:  # the constructors' own limits, e.g. an integer of thousands of digits
        raise YamlError(f"not a usable YAML value: {e}") from None
