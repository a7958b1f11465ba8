"""The service endpoints of the HTTP API: /healthz (public: alive, and whether the serving engine's checks have
finished), /readyz (public: 503 until they have and the database answers, then 200: what a load balancer or
docker-compose waits for), /v1/status (operators and auditors: the store, the broker, how blocks are protected,
the serving verdicts) and /metrics (Prometheus, deployment-wide: operators and auditors only)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from services.api_common import rt_of
from services.auth import Staff
from services.validation import GuardedRoute
from store.repository import check_connection
from workers.serving.service import Readiness

router = APIRouter(route_class=GuardedRoute)


def _readiness(request: Request) -> Readiness:
    serving = getattr(request.app.state, "serving", None)
    return Readiness(False, ("runtime",)) if serving is None else serving.readiness()


def _health(r: Readiness) -> dict[str, Any]:
    return {"status": "ready" if r.ready else "starting", "checking": list(r.checking)}


@router.get("/healthz", tags=["service"])
def healthz(request: Request) -> dict[str, Any]:
    """Liveness, answered at once without a token: `starting` while the serving engine's checks run (`checking`
    names them), then `ready`. Nothing about the deployment (see /v1/status)."""
    return _health(_readiness(request))


@router.get("/readyz", tags=["service"])
def readyz(request: Request) -> JSONResponse:
    """Readiness: 503 until the checks have finished (and while the database does not answer), then 200."""
    r = _readiness(request)
    body = _health(r)
    if not r.ready:
        return JSONResponse(body, status_code=503, headers={"Retry-After": "1"})
    try:
        with rt_of(request).session() as s:
            check_connection(s)
    except Exception:  # noqa: BLE001 - not ready while the database does not answer; said, not raised
        return JSONResponse({**body, "status": "database_unreachable"}, status_code=503, headers={"Retry-After": "1"})
    return JSONResponse(body)


@router.get("/v1/status", tags=["operators"])
def service_status(request: Request, who: Staff) -> dict[str, Any]:
    """The deployment as operators and auditors see it: the database reachable, the store, the broker, how blocks
    are signed and encrypted, and the serving engine's readiness and verdicts."""
    rt = rt_of(request)
    with rt.session() as s:
        check_connection(s)
    r = _readiness(request)
    serving = getattr(request.app.state, "serving", None)
    return {**_health(r), "checks_failed": r.failed, "store": rt.blocks.url, "broker": bool(rt.settings.broker_url),
            "blocks_signed": rt.settings.block_key is not None, "block_signing": rt.settings.block_signing,
            "block_encryption": rt.settings.block_encryption,
            "batching": serving.batching.as_dict() if serving is not None else None,
            "step_costs": serving.batching.step_costs.as_dict()
            if serving is not None and serving.batching.step_costs is not None else None}


@router.get("/metrics", tags=["operators"], response_class=PlainTextResponse)
def prometheus_metrics(request: Request, who: Staff) -> PlainTextResponse:
    """Prometheus metrics of the whole deployment, for operators and auditors (a bearer token in the scrape
    config): store bytes, evictions and answer counts over every team are not a team's to see."""
    return PlainTextResponse(generate_latest(request.app.state.metrics.registry), media_type=CONTENT_TYPE_LATEST)
