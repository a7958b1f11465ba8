"""The read side of the HTTP API: blocks (teams see their own and shared ones), provenance (auditors) and
attestations (operators and auditors)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request

from services.api_common import ApiError, Limit, Offset, iso, rt_of
from services.auth import AnyRole, Auditor, Principal, Staff
from services.validation import GuardedRoute
from store.block_views import (
    SeenAs,
    attestation_summary,
    block_owners,
    problem_trails,
    provenance_blocks,
    seen_as,
    visible_block,
    visible_blocks,
)
from store.repository import get_block, list_attestations, team_names

router = APIRouter(route_class=GuardedRoute)


def _viewer(who: Principal) -> int | None:
    """The team whose view of the blocks `who` gets (store/block_views.py); None: operators and auditors, who see
    every block and its first depositor."""
    return None if who.deployment_wide else who.team_id


def _block_item(row: Any, team_names: dict[int, str], seen: SeenAs) -> dict[str, Any]:
    return {"id": row.id, "kind": row.kind, "fingerprint": row.fingerprint,
            "team": team_names.get(seen.team_id) if seen.team_id is not None else None, "n_tokens": row.n_tokens,
            "bytes": seen.bytes, "shared": seen.shared, "created_at": iso(seen.created_at)}


@router.get("/v1/blocks", tags=["blocks"])
def list_blocks(request: Request, who: AnyRole, limit: Limit = 100, offset: Offset = 0,
                kind: str | None = None, fingerprint: str | None = None) -> dict[str, Any]:
    rt = rt_of(request)
    with rt.session() as s:
        rows, total = visible_blocks(s, team_id=_viewer(who), kind=kind, fingerprint=fingerprint, limit=limit,
                                     offset=offset)
        names = team_names(s)
        return {"items": [_block_item(r, names, seen_as(s, block=r, team_id=_viewer(who))) for r in rows],
                "total": total}


@router.get("/v1/blocks/{block_id}", tags=["blocks"])
def show_block(block_id: str, request: Request, who: AnyRole) -> dict[str, Any]:
    rt = rt_of(request)
    with rt.session() as s:
        row = visible_block(s, block_id=block_id[:64], team_id=_viewer(who))
        if row is None:
            raise ApiError(404, "not_found", f"no block {block_id}")
        names = team_names(s)
        seen = seen_as(s, block=row, team_id=_viewer(who))
        # a team sees the measurements its own deposits and questions caused, its sharers', and operators' since
        # it holds the block (store/repository.attestation_visible_to): never one another team caused
        atts, _ = list_attestations(s, block_id=row.id, limit=100,
                                    visible_to=None if who.deployment_wide else who.team_id)
        return _block_item(row, names, seen) | {
            "object_key": row.object_key, "payload_sha256": row.payload_sha256, "profile": row.profile,
            "source": seen.source,
            "attestations": [_attestation_item(a) for a in atts]}


def _provenance(s: Any, row: Any, names: dict[int, str], who: Principal) -> dict[str, Any]:
    out = []
    for trail in problem_trails(s, block_id=row.id):
        p, gens = trail.problem, trail.generations
        out.append({"problem_id": p.id, "external_id": p.external_id, "question": p.question,
                    "question_digest": p.question_digest, "answer": p.answer, "status": p.status,
                    "batch_id": p.batch_id, "team": names.get(trail.team_id) if trail.team_id is not None else None,
                    "generations": [{"sample_index": g.sample_index, "prompt_digest": g.prompt_digest,
                                     "text_digest": g.text_digest, "program_digest": g.program_digest,
                                     "verdict": g.verdict, "answer": g.answer,
                                     "sandbox": (g.sandbox_result or {}).get("reason"),
                                     "created_at": iso(g.created_at)} for g in gens]})
    atts, _ = list_attestations(s, block_id=row.id, limit=1000)
    owners = block_owners(s, block_id=row.id)
    seen = seen_as(s, block=row, team_id=_viewer(who))
    return {"block": _block_item(row, names, seen) | {"payload_sha256": row.payload_sha256,
                                                      "object_key": row.object_key, "store_url": row.store_url,
                                                      "source": row.source, "text_digest": row.text_digest},
            "owners": [{"team": names.get(o.team_id) if o.team_id is not None else None, "shared": o.shared,
                        "verified_by": names.get(o.verified_by_team_id)
                        if o.verified_by_team_id is not None else None,
                        "created_at": iso(o.created_at)} for o in owners],
            "problems": out, "attestations": [_attestation_item(a) for a in atts]}


@router.get("/v1/provenance/{block_id}", tags=["auditors"])
def provenance(block_id: str, request: Request, who: Auditor) -> dict[str, Any]:
    rt = rt_of(request)
    with rt.session() as s:
        row = get_block(s, block_id=block_id[:64])
        if row is None:
            raise ApiError(404, "not_found", f"no block {block_id}")
        return _provenance(s, row, team_names(s), who)


@router.get("/v1/provenance", tags=["auditors"])
def provenance_search(request: Request, who: Auditor, block_id: str | None = None,
                      problem_digest: str | None = None, team: str | None = None,
                      since: datetime | None = None, until: datetime | None = None,
                      limit: Limit = 100, offset: Offset = 0) -> dict[str, Any]:
    rt = rt_of(request)
    with rt.session() as s:
        rows, total = provenance_blocks(s, block_id=block_id, problem_digest=problem_digest, team=team,
                                        since=since, until=until, limit=limit, offset=offset)
        names = team_names(s)
        return {"items": [_provenance(s, r, names, who) for r in rows], "total": total}


@router.get("/v1/attestations", tags=["operators", "auditors"])
def attestations(request: Request, who: Staff, block_id: str | None = None, fingerprint: str | None = None,
                 status: str | None = None, kind: str | None = None, limit: Limit = 100,
                 offset: Offset = 0) -> dict[str, Any]:
    """Attestations, newest first; `kind` (block, composition, batch, ...) finds a serving host's composition and
    batch checks, whose ids a team's responses do not carry."""
    rt = rt_of(request)
    with rt.session() as s:
        rows, total = list_attestations(s, block_id=block_id, fingerprint=fingerprint, status=status,
                                        limit=limit, offset=offset, kind=kind)
        summary = [{"fingerprint": c.fingerprint, "profile_id": c.profile_id, "status": c.status, "count": c.count}
                   for c in attestation_summary(s)]
        return {"items": [_attestation_item(a) for a in rows], "total": total, "summary": summary}


def _attestation_item(a: Any) -> dict[str, Any]:
    return {"id": a.id, "kind": a.kind, "block_id": a.block_id, "fingerprint": a.fingerprint,
            "requested_by": a.requested_by,
            "profile_id": a.profile_id, "profile": a.profile, "host": a.host, "status": a.status,
            "byte_exact": a.byte_exact, "floor_equal": a.floor_equal, "kl_mean": a.kl_mean, "kl_max": a.kl_max,
            "argmax_agree": a.argmax_agree, "max_abs_diff": a.max_abs_diff, "reason": a.reason,
            "created_at": iso(a.created_at)}
