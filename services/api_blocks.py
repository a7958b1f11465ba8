"""The read side of the HTTP API: blocks (teams see their own and shared ones), provenance (auditors) and
attestations (operators and auditors)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from fastapi import APIRouter, Request

from services.api_common import ApiError, Limit, Offset, iso, rt_of
from services.auth import AnyRole, Auditor, Principal, Staff
from services.validation import GuardedRoute
from store.db import Attestation, Batch, BlockOwner, BlockRow, Generation, Problem, Team, owner_key
from store.repository import block_visible_to, get_block, list_attestations

router = APIRouter(route_class=GuardedRoute)


@dataclass(frozen=True)
class SeenAs:
    """A block's deposit as one principal sees it."""

    team_id: int | None
    shared: bool
    created_at: datetime
    source: Any
    bytes: int  # the size of the deposit seen (a header names its depositor)


def _seen_as(s: Any, row: BlockRow, who: Principal) -> SeenAs:
    """(team, shared, deposited at, source) of a block as `who` sees it. A team sees itself as the owner of a block
    it deposited (even when another team deposited the same content first, privately), with its own deposit's time
    and source, otherwise the team that shared it or the deployment's own library; operators and auditors see the
    first depositor. Nothing about another team's private deposit is shown, not even its time."""
    if who.deployment_wide:
        return SeenAs(row.team_id, row.shared, row.created_at, row.source, row.bytes)
    owners = s.scalars(sa.select(BlockOwner).where(BlockOwner.block_id == row.id)
                       .order_by(BlockOwner.created_at, BlockOwner.id)).all()
    own = next((o for o in owners if o.owner_key == owner_key(who.team_id)), None)
    if own is not None:
        return SeenAs(own.team_id, own.shared, own.created_at, own.source,
                      own.bytes if own.bytes is not None else row.bytes)
    chosen = next((o for o in owners if o.shared), None) or next((o for o in owners if o.team_id is None), None)
    if chosen is None:
        return SeenAs(None, False, row.created_at, None, row.bytes)
    return SeenAs(chosen.team_id, chosen.shared, chosen.created_at, None,
                  chosen.bytes if chosen.bytes is not None else row.bytes)


def _seen_at(team_id: int) -> Any:
    """SQL: when a block was deposited as team `team_id` sees it (as _seen_as): its own deposit, else the first
    shared deposit, else the deployment's. The order of a team's list, so that it never follows another team's
    private deposit times."""
    def first(*where: Any) -> Any:
        return (sa.select(sa.func.min(BlockOwner.created_at)).where(BlockOwner.block_id == BlockRow.id, *where)
                .scalar_subquery())

    return sa.func.coalesce(first(BlockOwner.owner_key == owner_key(team_id)), first(BlockOwner.shared.is_(True)),
                            first(BlockOwner.team_id.is_(None)))


def _block_item(row: BlockRow, team_names: dict[int, str], seen: SeenAs) -> dict[str, Any]:
    return {"id": row.id, "kind": row.kind, "fingerprint": row.fingerprint,
            "team": team_names.get(seen.team_id) if seen.team_id is not None else None, "n_tokens": row.n_tokens,
            "bytes": seen.bytes, "shared": seen.shared, "created_at": iso(seen.created_at)}


def _visible(query: Any, who: Principal) -> Any:
    """Blocks a principal may see: operators/auditors all; a team the ones it deposited and shared ones (per owner
    row, so a deduplicated block stays visible to each team that deposited it)."""
    if who.deployment_wide:
        return query
    return query.where(block_visible_to(who.team_id))


@router.get("/v1/blocks", tags=["blocks"])
def list_blocks(request: Request, who: AnyRole, limit: Limit = 100, offset: Offset = 0,
                kind: str | None = None, fingerprint: str | None = None) -> dict[str, Any]:
    rt = rt_of(request)
    with rt.session() as s:
        query = _visible(sa.select(BlockRow), who)
        if kind is not None:
            query = query.where(BlockRow.kind == kind)
        if fingerprint is not None:
            query = query.where(BlockRow.fingerprint == fingerprint)
        total = s.scalar(sa.select(sa.func.count()).select_from(query.subquery())) or 0
        newest = BlockRow.created_at if who.deployment_wide else _seen_at(who.team_id)
        rows = s.scalars(query.order_by(newest.desc(), BlockRow.id).limit(limit).offset(offset))
        names = dict(s.execute(sa.select(Team.id, Team.name)).all())
        return {"items": [_block_item(r, names, _seen_as(s, r, who)) for r in rows], "total": total}

@router.get("/v1/blocks/{block_id}", tags=["blocks"])
def show_block(block_id: str, request: Request,
               who: AnyRole) -> dict[str, Any]:
    rt = rt_of(request)
    with rt.session() as s:
        row = s.scalar(_visible(sa.select(BlockRow).where(BlockRow.id == block_id[:64]), who))
        if row is None:
            raise ApiError(404, "not_found", f"no block {block_id}")
        names = dict(s.execute(sa.select(Team.id, Team.name)).all())
        seen = _seen_as(s, row, who)
        # a team sees the measurements its own deposits and questions caused, its sharers', and operators' since
        # it holds the block (store/repository.attestation_visible_to): never one another team caused
        atts, _ = list_attestations(s, block_id=row.id, limit=100,
                                    visible_to=None if who.deployment_wide else who.team_id)
        return _block_item(row, names, seen) | {
            "object_key": row.object_key, "payload_sha256": row.payload_sha256, "profile": row.profile,
            "source": seen.source,
            "attestations": [_attestation_item(a) for a in atts]}

def _provenance(s: Any, row: BlockRow, names: dict[int, str], who: Principal) -> dict[str, Any]:
    problems = s.scalars(sa.select(Problem).where(Problem.block_id == row.id)).all()
    out = []
    for p in problems:
        batch = s.get(Batch, p.batch_id)
        gens = s.scalars(sa.select(Generation).where(Generation.problem_id == p.id)
                         .order_by(Generation.sample_index)).all()
        out.append({"problem_id": p.id, "external_id": p.external_id, "question": p.question,
                    "question_digest": p.question_digest, "answer": p.answer, "status": p.status,
                    "batch_id": p.batch_id, "team": names.get(batch.team_id) if batch else None,
                    "generations": [{"sample_index": g.sample_index, "prompt_digest": g.prompt_digest,
                                     "text_digest": g.text_digest, "program_digest": g.program_digest,
                                     "verdict": g.verdict, "answer": g.answer,
                                     "sandbox": (g.sandbox_result or {}).get("reason"),
                                     "created_at": iso(g.created_at)} for g in gens]})
    atts, _ = list_attestations(s, block_id=row.id, limit=1000)
    owners = s.scalars(sa.select(BlockOwner).where(BlockOwner.block_id == row.id)
                       .order_by(BlockOwner.created_at, BlockOwner.id)).all()
    return {"block": _block_item(row, names, _seen_as(s, row, who)) | {"payload_sha256": row.payload_sha256,
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
        names = dict(s.execute(sa.select(Team.id, Team.name)).all())
        return _provenance(s, row, names, who)

@router.get("/v1/provenance", tags=["auditors"])
def provenance_search(request: Request, who: Auditor, block_id: str | None = None,
                      problem_digest: str | None = None, team: str | None = None,
                      since: datetime | None = None, until: datetime | None = None,
                      limit: Limit = 100, offset: Offset = 0) -> dict[str, Any]:
    rt = rt_of(request)
    with rt.session() as s:
        query = sa.select(BlockRow)
        if block_id is not None:
            query = query.where(BlockRow.id == block_id)
        if problem_digest is not None:
            query = query.where(BlockRow.id.in_(sa.select(Problem.block_id)
                                                .where(Problem.question_digest == problem_digest)))
        if team is not None:
            query = query.join(Team, BlockRow.team_id == Team.id).where(Team.name == team)
        if since is not None:
            query = query.where(BlockRow.created_at >= since)
        if until is not None:
            query = query.where(BlockRow.created_at < until)
        total = s.scalar(sa.select(sa.func.count()).select_from(query.subquery())) or 0
        rows = s.scalars(query.order_by(BlockRow.created_at.desc(), BlockRow.id).limit(limit).offset(offset))
        names = dict(s.execute(sa.select(Team.id, Team.name)).all())
        return {"items": [_provenance(s, r, names, who) for r in rows], "total": total}

@router.get("/v1/attestations", tags=["operators", "auditors"])
def attestations(request: Request, who: Staff, block_id: str | None = None, fingerprint: str | None = None,
                 status: str | None = None, limit: Limit = 100, offset: Offset = 0) -> dict[str, Any]:
    rt = rt_of(request)
    with rt.session() as s:
        rows, total = list_attestations(s, block_id=block_id, fingerprint=fingerprint, status=status,
                                        limit=limit, offset=offset)
        summary = [{"fingerprint": fp, "profile_id": pid, "status": st, "count": n} for fp, pid, st, n in
                   s.execute(sa.select(Attestation.fingerprint, Attestation.profile_id, Attestation.status,
                                       sa.func.count()).group_by(Attestation.fingerprint,
                                                                 Attestation.profile_id, Attestation.status))]
        return {"items": [_attestation_item(a) for a in rows], "total": total, "summary": summary}


def _attestation_item(a: Attestation) -> dict[str, Any]:
    return {"id": a.id, "kind": a.kind, "block_id": a.block_id, "fingerprint": a.fingerprint,
            "requested_by": a.requested_by,
            "profile_id": a.profile_id, "profile": a.profile, "host": a.host, "status": a.status,
            "byte_exact": a.byte_exact, "floor_equal": a.floor_equal, "kl_mean": a.kl_mean, "kl_max": a.kl_max,
            "argmax_agree": a.argmax_agree, "max_abs_diff": a.max_abs_diff, "reason": a.reason,
            "created_at": iso(a.created_at)}
