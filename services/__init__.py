"""The faces of kvgraft: the Typer CLI (`kvgraft`) and, in later issues, the FastAPI HTTP API. Thin: parse,
authorize, call workers/ and store/, translate exceptions to messages."""
