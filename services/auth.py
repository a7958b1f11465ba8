"""Bearer-token authentication and role checks for the HTTP API. Tokens are stored hashed; a principal is the
token's team and role. Wrong or missing token: 401; wrong role: 403."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from store.repository import find_token, get_team

bearer = HTTPBearer(auto_error=False)


@dataclass(frozen=True)
class Principal:
    token_id: int
    team_id: int
    team: str
    role: str  # submitter | operator | auditor

    @property
    def deployment_wide(self) -> bool:
        return self.role in ("operator", "auditor")


Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


def principal(request: Request, credentials: Credentials) -> Principal:
    if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
        raise HTTPException(401, detail="missing bearer token", headers={"WWW-Authenticate": "Bearer"})
    rt = request.app.state.runtime
    with rt.session() as s:
        token = find_token(s, token=credentials.credentials[:512])
        if token is None:
            raise HTTPException(401, detail="invalid or revoked token", headers={"WWW-Authenticate": "Bearer"})
        team = get_team(s, team_id=token.team_id)
        return Principal(token.id, token.team_id, team.name if team else "", token.role)


def require(*roles: str):  # noqa: ANN201 - a FastAPI dependency
    def check(who: Annotated[Principal, Depends(principal)]) -> Principal:
        if who.role not in roles:
            raise HTTPException(403, detail=f"the {who.role} role may not do this (needs {' or '.join(roles)})")
        return who

    return check


# Typed dependency aliases: a route names who may call it in its signature.
Submitter = Annotated[Principal, Depends(require("submitter"))]
AnyRole = Annotated[Principal, Depends(require("submitter", "operator", "auditor"))]
Staff = Annotated[Principal, Depends(require("operator", "auditor"))]
Auditor = Annotated[Principal, Depends(require("auditor"))]
