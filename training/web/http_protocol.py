"""uvicorn's HTTP protocol (httptools) sending each answer in one write: status line, headers and body.

uvicorn writes an answer's head and its body separately, two system calls (``send``) on the event
loop that serves every move; joined, an answer costs one. Imported only by ``serve`` (it needs
uvicorn and httptools, the ``web`` extra).
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class JoinedWrites:
    """A transport that holds the first write of each answer (uvicorn's head) and sends it with the
    next one (the body, or its first piece): one write per answer. Whatever is held goes out at the
    answer's end (:meth:`answer_done`) and before a close; everything else is the transport's."""

    __slots__ = ("_head", "_transport")

    def __init__(self, transport: Any) -> None:
        self._transport = transport
        self._head: bytes | None = b""
        """``b""``: the answer's head is next; bytes: the head, held; ``None``: the head is sent."""

    def write(self, data: bytes) -> None:
        head = self._head
        if head is None:
            self._transport.write(data)
        elif head:
            self._head = None
            self._transport.write(head + data)
        else:
            self._head = bytes(data) or None

    def answer_done(self) -> None:
        """The answer is all written: send what is held, and hold the next answer's head."""
        if self._head:
            self._transport.write(self._head)
        self._head = b""

    def close(self) -> None:
        if self._head:
            self._transport.write(self._head)
            self._head = b""
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class OneWriteProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol over :class:`JoinedWrites` (pass it as ``uvicorn.run(http=...)``)."""

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(JoinedWrites(transport))

    def on_response_complete(self) -> None:
        self.transport.answer_done()
        super().on_response_complete()


__all__ = ["JoinedWrites", "OneWriteProtocol"]
