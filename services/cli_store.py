"""`kvgraft deposit`, `kvgraft attest` and `kvgraft blocks ...`: the store's commands."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.progress import Progress

from services.common import JsonOpt, ModelOpt, cli_runtime, guard
from services.output import err, key_value_table, out, print_json, records_table

blocks_app = typer.Typer(no_args_is_help=True, help="List, show, verify, copy and collect stored blocks.")

_AGE = re.compile(r"^\s*(\d+)\s*([smhdw]?)\s*$")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_age(text: str) -> timedelta:
    """`90s`, `30m`, `2h`, `7d`, `1w` or plain seconds."""
    match = _AGE.match(text)
    if not match:
        raise ValueError(f"cannot read the age {text!r}: use e.g. 30m, 2h, 7d")
    return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])


def _read_text(file: Path) -> str:
    raw = file.read_bytes()
    if b"\x00" in raw:
        raise ValueError(f"{file} is binary, not text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{file} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def deposit(
    files: Annotated[list[Path], typer.Argument(help="UTF-8 text files. A document longer than the serving "
                                                     "window is split into window-sized blocks.")],
    kind: Annotated[str, typer.Option(help="document | skill")] = "document",
    model: ModelOpt = None,
    gate_fraction: Annotated[float, typer.Option(min=0.0, max=1.0, help="Documents: the share of blocks gated "
                                                  "one by one (the first always is; a probe gate runs once per "
                                                  "fingerprint and profile; every block is hash-verified on "
                                                  "every read).")] = 1.0,
    team: Annotated[str | None, typer.Option(help="Deposit for this existing team (its quota applies; default: "
                                                  "the deployment's own library).")] = None,
    shared: Annotated[bool, typer.Option(help="With --team: let every team use the blocks.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Capture texts as blocks, gate them, store them and record them."""
    from workers.flywheel.deposit import deposit_text
    from workers.flywheel.documents import deposit_document, describe

    def body() -> dict[str, Any]:
        if kind not in ("document", "skill"):
            raise ValueError("--kind must be document or skill (solution blocks come only from verified solving)")
        texts = [(f, _read_text(f)) for f in files]  # read (and refuse bad input) before storing anything
        for f, text in texts:
            if not text.strip():
                raise ValueError(f"nothing to deposit: {f} is empty")
        with cli_runtime() as rt:
            team_id = _team_id(rt, team)
            engine = rt.engine(model)
            if kind == "skill":
                results = [deposit_text(rt, engine, text=t, kind=kind, source={"file": f.name, "bytes": len(t)},
                                        team_id=team_id, shared=shared)
                           for f, t in texts]
            else:
                if gate_fraction < 1.0:
                    _ensure_probe_attestation(rt, engine)
                results = []
                for f, t in texts:
                    results += deposit_document(rt, engine, text=t, source=f.name, gate_fraction=gate_fraction,
                                                team_id=team_id, shared=shared)
        summary = describe(results)
        first = results[0]
        return {"block_id": first.block_id, "n_tokens": summary["n_tokens"], "bytes": summary["bytes"],
                "byte_exact": summary["byte_exact"], "created": any(r.created for r in results),
                "fingerprint": first.fingerprint, "kind": first.kind, "key": first.key, **summary}

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        out.print(records_table(f"deposited {len(record['blocks'])} block(s)", record["blocks"],
                                ["block_id", "kind", "n_tokens", "bytes", "gated", "byte_exact", "created"]))
    raise typer.Exit(0 if record["byte_exact"] else 1)


def _team_id(rt: Any, name: str | None) -> int | None:
    if name is None:
        return None
    from store.repository import find_team

    with rt.session() as s:
        team = find_team(s, name=name)
        team_id = None if team is None else team.id
    if team_id is None:
        raise LookupError(f"no team {name!r} (teams are created with their first token: `kvgraft tokens create`)")
    return int(team_id)


def _ensure_probe_attestation(rt: Any, engine: Any) -> None:
    """A passing probe gate for this fingerprint and profile, run and recorded once."""
    from engine.gate import GateRequest, run_gate
    from store.repository import latest_attestation
    from workers.gate_records import record_gate_result
    from workers.seam import block_file_roundtrip

    with rt.session() as s:
        found = latest_attestation(s, block_id=None, fingerprint=engine.fingerprint.id,
                                   profile_id=engine.profile(8).id)
        if found is not None and found.status == "attested":
            return
    result = run_gate(engine, GateRequest(n_tokens=128, n_query=8), roundtrip=block_file_roundtrip)
    record_gate_result(rt, result)
    if not result.passed:
        raise ValueError(f"the probe gate failed on this machine ({'; '.join(result.failures)}): bulk deposits "
                         f"need every block gated (--gate-fraction 1)")


def attest(
    all_fingerprints: Annotated[bool, typer.Option("--all", help="Report blocks of every fingerprint in the store "
                                                                 "(others are refused here).")] = False,
    model: ModelOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Gate the store's blocks on this machine for its fingerprint and profile and record attestations; blocks
    this database has never seen (copied from another pod) are registered from their headers first."""
    from workers.upkeep.attestation import attest_store

    def body() -> dict[str, Any]:
        with cli_runtime() as rt:
            return attest_store(rt, all_fingerprints=all_fingerprints, model=model)

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        out.print(records_table("attest: blocks", record["blocks"],
                                ["block_id", "fingerprint", "status", "byte_exact", "reason"]))
        out.print(records_table("attest: summary", record["summary"],
                                ["fingerprint", "profile_id", "attested", "functional", "refused"]))


@blocks_app.command("list")
def blocks_list(
    fingerprint: Annotated[str | None, typer.Option(help="Only blocks of this fingerprint.")] = None,
    kind: Annotated[str | None, typer.Option(help="solution | document | skill")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 100,
    offset: Annotated[int, typer.Option(min=0)] = 0,
    json_out: JsonOpt = False,
) -> None:
    """Catalogued blocks, newest first."""
    from store.repository import list_blocks

    def body() -> dict[str, Any]:
        with cli_runtime() as rt, rt.session() as s:
            rows, total = list_blocks(s, fingerprint=fingerprint, kind=kind, limit=limit, offset=offset)
            items = [{"id": r.id, "kind": r.kind, "fingerprint": r.fingerprint, "team": r.team_id,
                      "n_tokens": r.n_tokens, "bytes": r.bytes, "created_at": r.created_at.isoformat()}
                     for r in rows]
        return {"items": items, "total": total}

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        out.print(records_table(f"blocks ({record['total']} in all)", record["items"],
                                ["id", "kind", "fingerprint", "n_tokens", "bytes", "created_at"]))


@blocks_app.command("show")
def blocks_show(block_id: Annotated[str, typer.Argument(help="Block id (64 hex digits).")],
                json_out: JsonOpt = False) -> None:
    """One block: its catalogue row, its attestations and its header as stored."""
    from store.errors import BlockNotFoundError
    from store.repository import get_block, list_attestations

    def body() -> dict[str, Any]:
        with cli_runtime() as rt:
            with rt.session() as s:
                row = get_block(s, block_id=block_id)
                attestations, _ = list_attestations(s, block_id=block_id, limit=1000)
                atts = [{"fingerprint": a.fingerprint, "profile_id": a.profile_id, "status": a.status,
                         "byte_exact": a.byte_exact, "floor_equal": a.floor_equal, "kl_max": a.kl_max,
                         "host": a.host, "created_at": a.created_at.isoformat()} for a in attestations]
            fingerprints = [row.fingerprint] if row else sorted({o.fingerprint for o in rt.blocks.list()
                                                                 if o.block_id == block_id})
            if row is None and not fingerprints:
                raise BlockNotFoundError(f"no block {block_id} in the catalogue or in {rt.blocks.url}")
            try:
                identity, meta = rt.blocks.header(fingerprints[0], block_id)
                header: dict[str, Any] | None = {
                    "kind": identity.kind, "n_tokens": len(identity.tokens), "pos_start": identity.pos_start,
                    "pos_end": identity.pos_end, "fingerprint": identity.fingerprint, "profile": identity.profile,
                    "payload_sha256": identity.payload_sha256, "payload_bytes": identity.payload_bytes,
                    "source": meta.get("source"), "created_at": meta.get("created_at"),
                    "text": (meta.get("text") or "")[:500]}
            except BlockNotFoundError:
                header = None
        catalogue = None if row is None else {
            "kind": row.kind, "fingerprint": row.fingerprint, "n_tokens": row.n_tokens, "bytes": row.bytes,
            "object_key": row.object_key, "store_url": row.store_url, "team": row.team_id, "shared": row.shared,
            "source": row.source, "created_at": row.created_at.isoformat()}
        return {"block_id": block_id, "catalogue": catalogue, "stored": header, "attestations": atts}

    record = guard(body)
    if json_out:
        print_json(record)
        return
    out.print(key_value_table(f"block {block_id}", {k: v for k, v in record.items() if k != "block_id"}))


@blocks_app.command("verify")
def blocks_verify(
    all_fingerprints: Annotated[bool, typer.Option("--all", help="Every fingerprint (the default; kept for "
                                                                 "scripts).")] = False,
    model: Annotated[str | None, typer.Option("--model", "-m", help="Only blocks of this model's fingerprint on "
                                                                     "this machine.")] = None,
    fingerprint: Annotated[str | None, typer.Option(help="Only blocks of this fingerprint.")] = None,
    strict: Annotated[bool, typer.Option(help="Orphaned objects fail the check too.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Re-hash every stored object, of every fingerprint in the catalogue and the store, and report missing,
    corrupted, unsealed (stored in the clear under a keyring: its row quarantined until `blocks rekey`) and orphaned
    blocks (exit 1 on missing, corrupted or unsealed; orphans are warnings unless --strict). Narrowed
    with --model or --fingerprint, it names the fingerprints it skipped, and exits 1 if it checked nothing while
    other fingerprints hold blocks."""
    from store.integrity import catalogued_fingerprints, verify_blocks

    def body() -> tuple[Any, list[str], list[str]]:
        with cli_runtime() as rt:
            only = fingerprint or (rt.engine(model).fingerprint.id if model and not all_fingerprints else None)
            with rt.session() as s, Progress(console=err, disable=json_out, transient=True) as bar:
                every = catalogued_fingerprints(rt.blocks, s)
                task = bar.add_task("verifying blocks", total=None)
                report = verify_blocks(rt.blocks, s, fingerprint=only,
                                       progress=lambda n: bar.update(task, completed=n))
            checked = sorted({c.fingerprint for c in report.checks})
            return report, checked, [fp for fp in every if only is not None and fp != only]

    report, checked, skipped = guard(body)
    problems = [{"block_id": c.block_id, "fingerprint": c.fingerprint, "status": c.status, "detail": c.detail}
                for c in report.checks if c.status != "ok"]
    nothing = not report.checks and bool(skipped)
    failed = report.failed(strict=strict) or nothing
    if json_out:
        print_json({"ok": not failed, "counts": report.counts, "fingerprints_checked": checked,
                    "fingerprints_skipped": skipped, "problems": problems})
    else:
        out.print(key_value_table("blocks verify", {"counts": report.counts, "fingerprints checked": checked,
                                                    "fingerprints skipped": skipped, "ok": not failed}))
        for p in problems:
            style = "yellow" if p["status"] in ("orphan", "evicted") else "red"
            err.print(f"[{style}]{p['status']}[/] {p['fingerprint']}/{p['block_id']}: {p['detail']}")
        if nothing:
            err.print(f"[red]checked nothing[/]: no block of the chosen fingerprint; skipped {', '.join(skipped)}")
    raise typer.Exit(1 if failed else 0)


@blocks_app.command("copy")
def blocks_copy(
    to: Annotated[str, typer.Option("--to", help="Destination store URL: file://DIR or s3://bucket/prefix.")],
    fingerprint: Annotated[str | None, typer.Option(help="Only blocks of this fingerprint.")] = None,
    model: Annotated[str | None, typer.Option("--model", "-m", help="Only blocks of this model's fingerprint "
                                                                     "on this machine.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Copy (never move) blocks to another store, verifying each on read and again at the destination."""
    from store.integrity import copy_blocks
    from store.repository import record_copy
    from workers.runtime import open_block_store

    def body() -> dict[str, Any]:
        if fingerprint and model:
            raise ValueError("give --fingerprint or --model, not both")
        rt = cli_runtime()
        dest = open_block_store(rt.settings, to)
        try:
            fp = fingerprint or (rt.engine(model).fingerprint.id if model else None)
            with Progress(console=err, disable=json_out, transient=True) as bar:
                task = bar.add_task("copying blocks", total=None)
                outcomes = copy_blocks(rt.blocks, dest, fingerprint=fp, progress=lambda o: bar.advance(task))
            with rt.session() as s:
                for o in outcomes:
                    if o.error is None:
                        record_copy(s, block_id=o.block_id, source_url=rt.blocks.url, dest_url=dest.url,
                                    bytes=o.bytes, sha256=o.payload_sha256, created=o.created)
        finally:
            dest.objects.close()
            rt.close()
        return {"to": dest.url, "copied": sum(o.error is None and o.created for o in outcomes),
                "already_present": sum(o.error is None and not o.created for o in outcomes),
                "failed": [{"block_id": o.block_id, "error": o.error} for o in outcomes if o.error]}

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        out.print(key_value_table("blocks copy", record))
    raise typer.Exit(1 if record["failed"] else 0)


@blocks_app.command("rekey")
def blocks_rekey(
    fingerprint: Annotated[str | None, typer.Option(help="Only blocks of this fingerprint.")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Re-encrypt every stored block under the newest block encryption key (blocks stored in the clear are
    encrypted, those under an older key re-encrypted; each read and verified first). A block that cannot be read,
    damaged or under a key not configured here, is reported and left as it is (exit 1). With a keyring every other
    read refuses clear blocks: this is the one way to seal them (sign blocks too, KVGRAFT_BLOCK_KEY, so that a
    clear block planted in the bucket is refused here as well)."""
    from store.integrity import rekey_blocks
    from store.repository import set_quarantined

    def body() -> dict[str, Any]:
        with cli_runtime() as rt:
            if rt.blocks.keyring is None:
                raise ValueError("no block encryption key is configured: set KVGRAFT_BLOCK_ENCRYPTION_KEY or "
                                 "KVGRAFT_BLOCK_ENCRYPTION_KEY_FILE (the newest key last)")
            with Progress(console=err, disable=json_out, transient=True) as bar:
                task = bar.add_task("re-encrypting blocks", total=None)
                outcomes = rekey_blocks(rt.blocks, fingerprint=fingerprint, sessions=rt.session,
                                        progress=lambda o: bar.advance(task))
            with rt.session() as s:  # a clear block `blocks verify` quarantined is sealed now, and read back whole
                for o in outcomes:
                    if o.outcome == "encrypted":
                        set_quarantined(s, block_id=o.block_id, quarantined=False)
            counts = {k: sum(o.outcome == k for o in outcomes) for k in ("rekeyed", "encrypted", "current",
                                                                         "evicted", "refused")}
            return {"key_id": rt.blocks.keyring.newest, **counts,
                    "refused_blocks": [{"block_id": o.block_id, "fingerprint": o.fingerprint, "error": o.error}
                                       for o in outcomes if o.outcome == "refused"]}

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        out.print(key_value_table("blocks rekey", {k: v for k, v in record.items() if k != "refused_blocks"}))
        for r in record["refused_blocks"]:
            err.print(f"[red]refused[/] {r['fingerprint']}/{r['block_id']}: {r['error']}")
    raise typer.Exit(1 if record["refused"] else 0)


@blocks_app.command("repair")
def blocks_repair(
    block_id: Annotated[str, typer.Argument(help="The catalogued block to repair.")],
    model: ModelOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Repair a damaged block: re-derive it (captured again from tokens known to be its own, kept only under the same
    id) or quarantine it (raw bytes moved to quarantine/, the row marked; readers treat it as a miss). Exit 0 when
    the block is intact or re-derived (or evicted: nothing to repair, never written back), 1 when it was
    quarantined."""
    from workers.upkeep.repair import repair_block

    def body() -> dict[str, Any]:
        with cli_runtime() as rt:
            return repair_block(rt, block_id, model=model).as_dict()

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        out.print(key_value_table(f"blocks repair {block_id}", record))
    raise typer.Exit(1 if record["status"] in ("quarantined", "key_missing") else 0)


@blocks_app.command("gc")
def blocks_gc(
    older_than: Annotated[str, typer.Option(help="Only orphans last written before this age (30m, 2h, 7d; at least "
                                                 "10m).")] = "1h",
    dry_run: Annotated[bool, typer.Option(help="List what would be removed.")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Remove orphaned objects: stored under a block id that no catalogue row has (whatever store a row names), e.g.
    by an interrupted deposit; evict the document and prefix blocks no team owns any more (their last owner's
    quota or the budget dropped them), unless pinned or grafted within the last minute; and delete the objects of
    evicted blocks that are still there (a retention pass stopped between marking and deleting), each under its
    row lock and only while the row is still evicted. A block some team owns is never deleted."""
    from store.integrity import collect_orphans
    from store.retention import collect_abandoned, evicted_with_objects, reap

    def body() -> dict[str, Any]:
        age = parse_age(older_than)
        with cli_runtime() as rt:
            with rt.session() as s:
                removed = collect_orphans(rt.blocks, s, older_than=age, dry_run=dry_run)
            abandoned = collect_abandoned(rt.session, rt.blocks, dry_run=dry_run)
            with rt.session() as s:
                evicted = evicted_with_objects(s, rt.blocks)
            reaped = len(evicted) if dry_run else reap(rt.session, rt.blocks, evicted)
        return {"dry_run": dry_run, "removed": [{"block_id": o.block_id, "fingerprint": o.fingerprint,
                                                 "bytes": o.info.size} for o in removed],
                "ownerless_evicted": [{"block_id": v.block_id, "fingerprint": v.fingerprint, "bytes": v.bytes}
                                      for v in abandoned],
                "evicted_objects_removed": reaped}

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        verb = "would remove" if dry_run else "removed"
        out.print(f"{verb} {len(record['removed'])} orphaned object(s), evicted {len(record['ownerless_evicted'])} "
                  f"block(s) no team owns, removed {record['evicted_objects_removed']} object(s) of evicted blocks")
        for r in record["removed"]:
            out.print(f"  {r['fingerprint']}/{r['block_id']} ({r['bytes']} bytes)")


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?i?b?)\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
               "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40,
               "ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40}


def parse_size(text: str) -> int:
    """`500MB`, `2GiB`, `750k` or plain bytes."""
    match = _SIZE.match(text)
    unit = match.group(2).lower() if match else ""
    if not match or unit not in _SIZE_UNITS:
        raise ValueError(f"cannot read the size {text!r}: use e.g. 500MB, 2GiB or a number of bytes")
    return int(float(match.group(1)) * _SIZE_UNITS[unit])


@blocks_app.command("prune")
def blocks_prune(
    budget: Annotated[str, typer.Option(help="Bytes the store may hold (500MB, 2GiB, ...).")],
    dry_run: Annotated[bool, typer.Option(help="Print what would be evicted; change nothing.")] = False,
    grace: Annotated[str, typer.Option(help="Never evict a block grafted within this age (60s, 5m).")] = "60s",
    json_out: JsonOpt = False,
) -> None:
    """Evict least recently used document and prompt-prefix ownerships until the store holds at most BUDGET bytes,
    counted per owner (a deduplicated block in full for each team that owns it; each owner's own last use orders
    it). A block whose last owner goes is evicted. Solution, skill and probe blocks, pinned blocks and ownerships
    used within --grace are never evicted; an evicted block's row stays (provenance) and a re-deposit restores
    it."""
    from store.retention import prune

    def body() -> dict[str, Any]:
        limit, age = parse_size(budget), parse_age(grace)
        with cli_runtime() as rt:
            plan, evicted = prune(rt.session, rt.blocks, budget_bytes=limit, grace=age, dry_run=dry_run)
        counted = [v for v in evicted if v not in plan.abandoned]  # abandoned blocks are not counted
        return {**plan.as_dict(), "dry_run": dry_run, "evicted": len(evicted),
                "bytes_now": plan.bytes_before - sum(v.bytes for v in counted)}

    record = guard(body)
    if json_out:
        print_json(record)
        return
    verb = "would evict" if dry_run else "evicted"
    out.print(f"{verb} {len(record['evict'])} ownership(s), {record['evict_bytes']} bytes: the store holds "
              f"{record['bytes_before']} -> {record['bytes_after']} bytes counted per owner (budget "
              f"{record['budget_bytes']}; {record['stored_bytes']} bytes stored before)")
    if record["short_by"]:
        err.print(f"[yellow]warning:[/] still {record['short_by']} bytes over the budget: the rest is solutions, "
                  "skills, probes, pinned or recently used blocks")


@blocks_app.command("pin")
def blocks_pin(block_id: Annotated[str, typer.Argument(help="Block id (64 hex digits).")],
               unpin: Annotated[bool, typer.Option(help="Make it evictable again.")] = False,
               json_out: JsonOpt = False) -> None:
    """Keep a block regardless of the store's budget (or, with --unpin, let retention evict it again)."""
    from store.repository import set_block_pinned

    def body() -> dict[str, Any]:
        with cli_runtime() as rt, rt.session() as s:
            row = set_block_pinned(s, block_id=block_id, pinned=not unpin)
            if row is None:
                raise LookupError(f"no block {block_id} in the catalogue")
            return {"block_id": row.id, "pinned": row.pinned, "kind": row.kind}

    record = guard(body)
    if json_out:
        print_json(record)
    else:
        out.print(f"block {record['block_id']} is {'pinned' if record['pinned'] else 'not pinned'}")
