"""Whether an answer's graft is attested byte-exact here, for the query class the answer path actually ran.

An attestation is recorded per fingerprint and numerics profile; the profile names the query class (one token,
2-63 tokens, 64 and more: the attention kernels differ). A path that prefills L tokens on the grid after a block
runs one class per distinct chunk size, then single-token decodes (which every graft check covers with its greedy
continuation). The answer is attested when each class it ran is attested for the block itself, or, for a
bulk-deposited document block, by the probe attestation of the same fingerprint and profile (said in `via`).
A class not yet checked is scheduled as an `attest` task for that block and class (with a broker; embedded,
`kvgraft attest` does it), never checked inside a query: until then the answer says attested: false."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from engine.graft import GraftEngine
from store.repository import get_block, latest_attestation
from workers.errors import BrokerUnavailableError
from workers.queue.fleet import NoLiveWorkerError, attest_target
from workers.runtime import MemoSlot, Runtime

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Attested:
    ok: bool
    via: str  # own | probe | pending | refused

    def detail(self, profile_ids: Sequence[str]) -> str:
        if self.via == "probe":
            return f"attested by the probe attestation of profile {', '.join(profile_ids)} (bulk-deposited block)"
        return ""


def prefill_classes(engine: GraftEngine, n_tokens: int) -> tuple[int, ...]:
    """The chunk sizes of a prefill of `n_tokens` on the grid (one representative per size)."""
    chunk = engine.config.prefill_chunk
    sizes = {min(chunk, n_tokens)}
    if n_tokens > chunk and n_tokens % chunk:
        sizes.add(n_tokens % chunk)
    return tuple(sorted(sizes))


def attestation(rt: Runtime, engine: GraftEngine, block_id: str, n_queries: int | Sequence[int], *,
                team_id: int | None = None) -> Attested:
    """Counting only the measurements the team may see (store/repository.attestation_visible_to): whether a block is
    attested for a team never depends on what another team's private deposits or questions caused."""
    sizes = (n_queries,) if isinstance(n_queries, int) else tuple(n_queries)
    by_profile = {engine.profile(n).id: n for n in sizes}
    via = "own"
    for profile_id, n in by_profile.items():
        with rt.session() as s:
            att = latest_attestation(s, block_id=block_id, fingerprint=engine.fingerprint.id, profile_id=profile_id,
                                     team_id=team_id)
            if att is None:
                row = get_block(s, block_id=block_id)
                probe = latest_attestation(s, block_id=None, fingerprint=engine.fingerprint.id,
                                           profile_id=profile_id, team_id=team_id)
                if row is not None and row.kind == "document" and probe is not None:
                    if probe.status != "attested":
                        return Attested(False, "refused")
                    via = "probe"
                    continue
        if att is None:
            schedule_attestation(rt, block_id, n, team_id=team_id)
            return Attested(False, "pending")
        if att.status != "attested":
            return Attested(False, "refused")
    return Attested(True, via)


def attested(rt: Runtime, engine: GraftEngine, block_id: str, n_queries: int | Sequence[int], *,
             team_id: int | None = None) -> bool:
    return attestation(rt, engine, block_id, n_queries, team_id=team_id).ok


ATTEST_SCHEDULED: MemoSlot[tuple[str, int, int | None], bool] = MemoSlot("attest_scheduled")  # once a process
# after the broker refused an attest task: no other is tried before this time (time.monotonic()), so that an outage
# costs one question the broker's connect timeout, not every question
ATTEST_PAUSED_UNTIL: MemoSlot[str, float] = MemoSlot("attest_paused_until")
BROKER_RETRY_AFTER_S = 60.0


def schedule_attestation(rt: Runtime, block_id: str, n_query: int, *, team_id: int | None = None) -> None:
    """An `attest` task for this block and query class, on behalf of the team (its result counts for it). Best
    effort: a broker that cannot take it now leaves it for a later question (the answer at hand is not attested
    either way; none is tried for BROKER_RETRY_AFTER_S), never fails the question that asked."""
    key = (block_id, n_query, team_id)
    if rt.memo.get(ATTEST_SCHEDULED, key) or time.monotonic() < (rt.memo.get(ATTEST_PAUSED_UNTIL, "broker") or 0.0):
        return
    if not rt.settings.broker_url:
        rt.memo.put(ATTEST_SCHEDULED, key, True)
        log.info("answer.attestation_pending", block_id=block_id, n_query=n_query,
                 detail="run `kvgraft attest` to check it here")
        return
    from workers.queue.celery_app import send  # celery is imported only where a broker is configured

    with rt.session() as s:
        row = get_block(s, block_id=block_id)
    if row is None:
        return
    try:
        queue = attest_target(rt, row.fingerprint)
        send(rt.settings.broker_url, "kvgraft.attest_block", block_id, str(n_query),
             "" if team_id is None else str(team_id), queue=queue)
    except NoLiveWorkerError as exc:  # not asked again by this process
        rt.memo.put(ATTEST_SCHEDULED, key, True)
        log.warning("answer.attest_no_live_worker", block_id=block_id, error=str(exc))
        return
    except BrokerUnavailableError as exc:  # tried again by a question that needs it once the pause is over
        rt.memo.put(ATTEST_PAUSED_UNTIL, "broker", time.monotonic() + BROKER_RETRY_AFTER_S)
        log.warning("answer.attest_not_sent", block_id=block_id, error=str(exc), retry_after_s=BROKER_RETRY_AFTER_S)
        return
    rt.memo.put(ATTEST_SCHEDULED, key, True)
    log.info("answer.attest_enqueued", block_id=block_id, n_query=n_query, queue=queue)
