"""The table at the terminal: a person playing agents (``five-hundred play``, ``replay``) and a
spectator watching agents play (``five-hundred watch``)."""
