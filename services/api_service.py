"""The service endpoints of the HTTP API: /healthz (the database reachable, how blocks are protected) and
/metrics (Prometheus, deployment-wide: operators and auditors only)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from services.api_common import rt_of
from services.auth import Staff
from services.validation import GuardedRoute
from store.repository import check_connection

router = APIRouter(route_class=GuardedRoute)


@router.get("/healthz", tags=["service"])
def healthz(request: Request) -> dict[str, Any]:
    rt = rt_of(request)
    with rt.session() as s:
        check_connection(s)
    return {"status": "ok", "store": rt.blocks.url, "broker": bool(rt.settings.broker_url),
            "blocks_signed": rt.settings.block_key is not None, "block_signing": rt.settings.block_signing,
            "block_encryption": rt.settings.block_encryption}


@router.get("/metrics", tags=["operators"], response_class=PlainTextResponse)
def prometheus_metrics(request: Request, who: Staff) -> PlainTextResponse:
    """Prometheus metrics of the whole deployment, for operators and auditors (a bearer token in the scrape
    config): store bytes, evictions and answer counts over every team are not a team's to see."""
    return PlainTextResponse(generate_latest(request.app.state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
