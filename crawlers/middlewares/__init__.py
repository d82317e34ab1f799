"""Request middlewares: checks every request passes before it goes on the wire."""
