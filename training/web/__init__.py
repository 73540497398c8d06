"""The table in the browser (``five-hundred serve``, optional extra ``web``: FastAPI and uvicorn).

:mod:`training.web.session` is one game and what each seat knows of it (with its people,
:mod:`training.web.seats`, and its agents' moves, :mod:`training.web.agent_moves`; its refusals are
:mod:`training.web.errors`), :mod:`training.web.view` builds a seat's view from its observation,
:mod:`training.web.store` keeps the games (bounded, on disk, expiring) and plays the agents' moves
off the request path, :mod:`training.web.app` is the HTTP API (its long polls wait in
:mod:`training.web.changes`) and :mod:`training.web.command` the command. The page (``static/``:
plain HTML, CSS and JavaScript, no build step, nothing fetched from elsewhere) is package data.
docs/web.md describes it all. This package imports FastAPI only in :mod:`training.web.app`.
"""
