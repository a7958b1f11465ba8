"""The faces of kvgraft: the Typer CLI (`kvgraft`), the FastAPI HTTP API (batches, queries, blocks, provenance,
teams) and the OpenAI-compatible endpoints. Thin: parse, authorize, call workers/ and store/, translate the
project's errors into messages and status codes."""
