"""Edit a YAML file's text in place, guided by the parser: comments, order and style stay.

An organizer's ``competition.yaml`` carries comments, an order of keys and an indentation
style they care about, and a load-then-dump loses all three. :class:`YamlText` instead
composes the text with PyYAML (the same parser Codabench uses) only to learn **where** each
node is, and edits the text there:

- :meth:`YamlText.append_item`: a new last item of a sequence, in the sequence's own style
  (block items at the existing items' dash column, flow items one line; a flow sequence
  gets ``, item``), with an optional comment line above a block item;
- :meth:`YamlText.append_pair`: a new last key of a mapping (block or flow), likewise;
- :meth:`YamlText.insert_pair_after`: a new key right after a given key of a mapping;
- :meth:`YamlText.replace_value`: the text of a scalar value;
- :meth:`YamlText.remove_item` / :meth:`YamlText.remove_pair`: an item or a key, with the
  comment written above it (a line starting with ``# <marker>`` and its ``#   ``
  continuation lines).

:meth:`append_item` followed by :meth:`remove_item` (with the same marker) gives the text
back byte for byte, so "remove what was added, add it again" tells whether anything changed.
Line endings (``\\n`` or ``\\r\\n``) follow the file's. Each edit re-parses the text, so the
nodes handed out before an edit are stale after it: look them up again.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import yaml

from ...errors import ConfigError

__all__ = ["YamlText", "Raw", "flow"]

Node = yaml.Node
_ALIAS = re.compile(r"\*[^\s,\[\]{}]+")


class Raw(str):
    """YAML text written as it is (e.g. an alias ``*RESULTS``), not quoted as a string."""


def flow(value: object) -> str:
    """``value`` as one line of flow YAML (``{a: 1, b: [2]}``, quoted where needed, also
    where a flow collection needs it: ``{a: 'x, y'}``); :class:`Raw` parts are kept as written."""
    raws: dict[str, str] = {}

    def swap(node: object) -> object:
        if isinstance(node, Raw):
            token = f"RAWTEXT{len(raws)}X"
            raws[token] = str(node)
            return token
        if isinstance(node, dict):
            return {swap(k): swap(v) for k, v in node.items()}
        if isinstance(node, (list, tuple)):
            return [swap(v) for v in node]
        return node

    text = yaml.safe_dump(swap(value), default_flow_style=True, sort_keys=False,
                          allow_unicode=True, width=1 << 30).strip()
    if text.endswith("\n...") or text.endswith(" ..."):
        text = text[:-4].rstrip()
    for token, raw in raws.items():
        text = text.replace(token, raw)
    return text


class YamlText:
    """The text of one YAML document and the node tree PyYAML composes from it."""

    def __init__(self, text: str, name: str = "competition.yaml") -> None:
        self.name = name
        self.newline = "\r\n" if "\r\n" in text else "\n"
        self.text = text
        self.root = self._compose()

    def _compose(self) -> Node:
        try:
            root = yaml.compose(self.text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            raise ConfigError(f"{self.name}: not valid YAML ({exc}).") from None
        if not isinstance(root, yaml.MappingNode):
            raise ConfigError(f"{self.name}: expected a mapping of keys at the top level.")
        return root

    def _set(self, text: str) -> None:
        self.text = text
        self.root = self._compose()

    # ------------------------------------------------------------------ lookups
    @staticmethod
    def get(mapping: Node, key: str) -> Node | None:
        """The value node of ``key`` in a mapping node (the last one, as YAML loads it)."""
        found = None
        if isinstance(mapping, yaml.MappingNode):
            for k, v in mapping.value:
                if str(k.value) == key:
                    found = v
        return found

    @staticmethod
    def blank(node: Node | None) -> bool:
        """No value: a missing node, an empty scalar or a plain null."""
        return node is None or (isinstance(node, yaml.ScalarNode) and (
            node.value == "" or (node.style is None and node.value in ("null", "~", "Null", "NULL"))))

    def scalar(self, node: Node | None, key: str) -> str | None:
        """The text of ``key``'s scalar value in a mapping node, else None."""
        value = self.get(node, key) if isinstance(node, yaml.MappingNode) else None
        return str(value.value) if isinstance(value, yaml.ScalarNode) else None

    def integer(self, node: Node | None, key: str) -> int | None:
        """``key``'s value in a mapping node as an integer, else None."""
        text = self.scalar(node, key)
        try:
            return int(text) if text is not None else None
        except ValueError:
            return None

    @staticmethod
    def key_node(mapping: Node, key: str) -> Node | None:
        found = None
        for k, _ in mapping.value:
            if str(k.value) == key:
                found = k
        return found

    def path(self, *keys: str | int) -> Node | None:
        """The node at ``keys`` from the root (strings index mappings, integers sequences)."""
        node: Node | None = self.root
        for key in keys:
            if node is None:
                return None
            if isinstance(key, int):
                if not isinstance(node, yaml.SequenceNode) or not -len(node.value) <= key < len(node.value):
                    return None
                node = node.value[key]
            else:
                node = self.get(node, key)
        return node

    def source(self, node: Node) -> str:
        """The text of ``node`` as written (a scalar's quotes included)."""
        return self.text[node.start_mark.index:self._end(node)]

    def _end(self, node: Node, after: int = -1) -> int:
        """Where the node's own text ends (a block collection: its last content, not the
        comments and blank lines after it). ``after``: where the node's text starts at the
        earliest; a node that starts before is an alias (``*name``), whose end is found there."""
        if node.start_mark.index < after:  # an alias: PyYAML hands out the anchored node
            alias = _ALIAS.search(self.text, after)
            return alias.end() if alias else after
        if isinstance(node, yaml.ScalarNode) or getattr(node, "flow_style", False):
            return node.end_mark.index
        if isinstance(node, yaml.MappingNode):
            if not node.value:
                return node.end_mark.index
            return self._pair_end(*node.value[-1])
        if not node.value:
            return node.end_mark.index
        return self._item_end(node, len(node.value) - 1)

    def _pair_end(self, key: Node, value: Node) -> int:
        """Where the pair ``key: value`` ends (``key:`` alone: after the key)."""
        if isinstance(value, yaml.ScalarNode) and value.value == "" and value.style is None:
            return self._end(key)
        return max(self._end(key), self._end(value, key.end_mark.index))

    def _item_end(self, seq: Node, i: int) -> int:
        """Where item ``i`` of the sequence ``seq`` ends."""
        end = seq.start_mark.index
        for item in seq.value[:i + 1]:
            end = self._end(item, end)
        return end

    def _line_after(self, index: int) -> int:
        """The start of the line after the one holding ``index - 1`` (the end of a node)."""
        if index > 0 and self.text[index - 1] == "\n":
            return index
        nl = self.text.find("\n", index)
        return len(self.text) if nl < 0 else nl + 1

    def _line_start(self, index: int) -> int:
        return self.text.rfind("\n", 0, index) + 1

    # ------------------------------------------------------------------ edits
    def _insert(self, at: int, text: str) -> None:
        if at == len(self.text) and self.text and not self.text.endswith("\n"):
            text = self.newline + text
        self._set(self.text[:at] + text + self.text[at:])

    def append_item(self, seq: Node, item: dict, comment: Sequence[str] = ()) -> None:
        """Append ``item`` (a mapping of scalars and flow values) to the sequence ``seq``."""
        if not isinstance(seq, yaml.SequenceNode) or not seq.value:
            raise ConfigError(f"{self.name}: line {seq.start_mark.line + 1}: expected a non-empty list.")
        if seq.flow_style:
            self._insert(self._item_end(seq, len(seq.value) - 1), ", " + flow(item))
            return
        dash = seq.start_mark.column  # a block sequence starts at its first "-"
        own = [it for it in seq.value if it.start_mark.index >= seq.start_mark.index]  # no aliases
        last = own[-1] if own else None
        nl = self.newline
        lines = [" " * dash + "# " + c for c in comment]
        if last is None or getattr(last, "flow_style", False) or not isinstance(last, yaml.MappingNode):
            lines.append(" " * dash + "- " + flow(item))
        else:
            col = last.start_mark.column
            pairs = [f"{flow(k)}: {flow(v)}" for k, v in item.items()]
            lines.append(" " * dash + "-" + " " * (col - dash - 1) + pairs[0])
            lines.extend(" " * col + p for p in pairs[1:])
        self._insert(self._line_after(self._item_end(seq, len(seq.value) - 1)), nl.join(lines) + nl)

    def append_pair(self, mapping: Node, key: str | int, value: object, comment: Sequence[str] = ()) -> None:
        """Append ``key: value`` to the mapping ``mapping`` (``value``: a scalar, a flow value,
        or a mapping of such, written as a nested block under a block mapping)."""
        if not isinstance(mapping, yaml.MappingNode) or not mapping.value:
            raise ConfigError(f"{self.name}: line {mapping.start_mark.line + 1}: expected a non-empty mapping.")
        self._pair_after(mapping, mapping.value[-1], key, value, comment)

    def insert_pair_after(self, mapping: Node, after: str, key: str, value: object,
                          comment: Sequence[str] = ()) -> None:
        """Insert ``key: value`` right after the key ``after`` of ``mapping``."""
        pair = next((p for p in reversed(mapping.value) if str(p[0].value) == after), None)
        if pair is None:
            raise ConfigError(f"{self.name}: line {mapping.start_mark.line + 1}: no key {after!r} here.")
        self._pair_after(mapping, pair, key, value, comment)

    def _pair_after(self, mapping: Node, pair: tuple[Node, Node], key: str | int, value: object,
                    comment: Sequence[str]) -> None:
        k, v = pair
        end = self._pair_end(k, v)
        if mapping.flow_style:  # quoted as a flow collection needs: {key: value} less its braces
            self._insert(end, ", " + flow({key: value})[1:-1])
            return
        col = mapping.value[0][0].start_mark.column
        nl = self.newline
        lines = [" " * col + "# " + c for c in comment]
        if isinstance(value, dict):
            inner = col + 2  # nested keys: indented like the mapping's last nested block
            key_end, last = mapping.value[-1][0].end_mark.index, mapping.value[-1][1]
            if isinstance(last, yaml.MappingNode) and not last.flow_style and last.value \
                    and last.start_mark.index >= key_end:  # not an alias
                inner = max(col + 1, last.value[0][0].start_mark.column)
            lines.append(" " * col + f"{flow(key)}:")
            lines.extend(" " * inner + f"{flow(a)}: {flow(b)}" for a, b in value.items())
        else:
            lines.append(" " * col + f"{flow(key)}: {flow(value)}")
        self._insert(self._line_after(end), nl.join(lines) + nl)

    def replace_value(self, node: Node, text: str) -> None:
        """Replace the text of the scalar ``node`` by ``text`` (already YAML)."""
        if not isinstance(node, yaml.ScalarNode):
            raise ConfigError(f"{self.name}: line {node.start_mark.line + 1}: expected a single value.")
        self._set(self.text[:node.start_mark.index] + text + self.text[node.end_mark.index:])

    def remove_item(self, seq: Node, index: int, marker: str = "") -> None:
        """Remove item ``index`` of the sequence ``seq`` (and, for a block item, the comment
        lines right above it that start with ``# <marker>``)."""
        item = seq.value[index]
        if seq.flow_style:
            if index > 0:
                start = self._item_end(seq, index - 1)
                end = self._item_end(seq, index)
            else:
                start = item.start_mark.index
                end = seq.value[1].start_mark.index if len(seq.value) > 1 else self._item_end(seq, 0)
            self._set(self.text[:start] + self.text[end:])
            return
        start = self._line_start(item.start_mark.index)
        self._remove_lines(self._marked_start(start, marker), self._line_after(self._item_end(seq, index)))

    def remove_pair(self, mapping: Node, key: str, marker: str = "") -> None:
        """Remove the key ``key`` of ``mapping`` (and the ``# <marker>`` comment lines above it)."""
        pairs = mapping.value
        i = next((n for n in range(len(pairs) - 1, -1, -1) if str(pairs[n][0].value) == key), None)
        if i is None:
            return
        k, v = pairs[i]
        if mapping.flow_style:
            start = self._pair_end(*pairs[i - 1]) if i > 0 else k.start_mark.index
            end = self._pair_end(k, v) if i > 0 or len(pairs) == 1 else pairs[i + 1][0].start_mark.index
            self._set(self.text[:start] + self.text[end:])
            return
        end = self._pair_end(k, v)
        start = self._line_start(k.start_mark.index)
        self._remove_lines(self._marked_start(start, marker), self._line_after(end))

    def _marked_start(self, start: int, marker: str) -> int:
        """Move ``start`` (a line start) up over a comment written with the item: a line
        starting with ``# <marker>`` and its continuation lines (``#   ...``) below it."""
        if not marker:
            return start
        line = start
        while line > 0:
            prev = self._line_start(line - 1)
            text = self.text[prev:line].strip()
            if text.startswith("# " + marker):
                return prev
            if not text.startswith("#   "):
                break
            line = prev
        return start

    def _remove_lines(self, start: int, end: int) -> None:
        self._set(self.text[:start] + self.text[end:])
