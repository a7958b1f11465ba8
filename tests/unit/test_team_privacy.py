"""Teams learn nothing about each other, tried as the other team would (tiny model, SQLite, local blocks, the real
HTTP app): team B guesses team A's system prompt, and every observable B has must be the same whether the guess
is right or wrong. Each test builds two worlds that differ only in A's secret (A holds B's guess, or another text
of the same token count), runs B's same requests in both, and compares everything B sees: its answers and their
`kvgraft` objects, its block list and each block it can show, the metrics it can (not) read, and the statements
and object-store calls of its own quota passes (the work, hence the time, they take)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from services.api import create_app
from store.db import BlockOwnerRow, BlockRow, TeamRow
from store.repository import create_api_token, get_or_create_team
from store.retention import team_bytes
from tests.fixtures.ready import wait_ready
from workers.runtime import open_runtime
from workers.settings import Settings

pytestmark = pytest.mark.unit

GUESS = ("Team memo, not for other teams: the vault code is 4417, the depot opens at six and the launch window is "
         "on Friday. Answer in one word. ")
OTHER = ("Team memo, not for other teams: the vault code is 9982, the depot opens at six and the launch window is "
         "on Friday. Answer in one word. ")
QUESTION = "What is the vault code?"


def _settings(data: Path) -> Settings:
    return Settings(data_dir=data, model="tiny", database_url=None, store_url=None, broker_url=None,
                    prefill_chunk=16, query_timeout_s=60)


class Work:
    """What team B's requests cost the deployment, in the units their time is made of: every SQL statement and
    every object-store call made while B's requests (and the deposits and uses they hand to the background) run,
    on any thread, in order; and each of B's quota passes, with what it dropped or refused."""

    def __init__(self, team_id: int) -> None:
        self.team_id = team_id
        self.recording = False
        self.calls: list[str] = []
        self.passes: list[dict[str, Any]] = []

    def note_statement(self, _conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if self.recording:
            self.calls.append(statement)

    def note_object_call(self, name: str) -> None:
        if self.recording:
            self.calls.append(f"object.{name}")

    def note_fs_call(self, name: str) -> None:
        if self.recording:
            self.calls.append(f"fs.{name}")

    def wrap(self, ensure_quota: Callable[..., Any]) -> Callable[..., Any]:
        def recorded(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("team_id") != self.team_id:
                return ensure_quota(*args, **kwargs)
            record: dict[str, Any] = {"dropped": [], "refused": None}
            try:
                result = ensure_quota(*args, **kwargs)
                record["dropped"] = [v.block_id for v in result.victims]
                return result
            except Exception as exc:
                record["refused"] = type(exc).__name__
                raise
            finally:
                self.passes.append(record)
        return recorded


class _RecordingOS:
    """The `os` module as the local object store sees it, every call noted (fsync, link, replace, utime, open...)."""

    def __init__(self, work: Work) -> None:
        self._work = work

    def __getattr__(self, name: str) -> Any:
        import os

        attr = getattr(os, name)
        if not callable(attr) or isinstance(attr, type):
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            self._work.note_fs_call(name)
            return attr(*args, **kwargs)
        return call


@contextmanager
def _world(data: Path, monkeypatch: pytest.MonkeyPatch, secret: str,
           evicted: bool = False) -> Iterator[dict[str, Any]]:
    """A deployment where team A has chatted with `secret` as its system prompt (and its prefixes are stored;
    `evicted`: then evicted under a budget, rows kept and objects deleted, before B comes)."""
    from datetime import timedelta

    import store.objects.local as local_objects
    import workers.serving.prompt_cache as prompt_cache
    from store.retention import prune

    settings = _settings(data)
    with open_runtime(settings) as rt, rt.session() as s:
        tokens = {n: create_api_token(s, team=get_or_create_team(s, name=t), role=r)[1]
                  for n, t, r in [("a", "team-a", "submitter"), ("b", "team-b", "submitter"),
                                  ("ops", "ops", "operator")]}
        team_b = get_or_create_team(s, name="team-b").id
    work = Work(team_b)
    monkeypatch.setattr(prompt_cache, "ensure_quota", work.wrap(prompt_cache.ensure_quota))
    monkeypatch.setattr(local_objects, "os", _RecordingOS(work))  # the file-system calls of B's object writes
    sa.event.listen(sa.engine.Engine, "before_cursor_execute", work.note_statement)
    try:
        with TestClient(create_app(settings)) as client:
            wait_ready(client)  # the serving checks' own reads and writes are nobody's
            app_rt = client.app.state.runtime  # type: ignore[attr-defined]
            objects = app_rt.blocks.objects
            for name in ("put", "open", "exists", "delete", "list", "replace"):
                original = getattr(objects, name)
                monkeypatch.setattr(objects, name, (lambda n, f: lambda *a, **k: (work.note_object_call(n),
                                                                                    f(*a, **k))[1])(name, original))
            world = {"client": client, "h": {n: {"Authorization": f"Bearer {t}"} for n, t in tokens.items()},
                     "app": client.app, "rt": app_rt, "team_b": team_b, "work": work}
            for _ in range(2):  # A asks twice: its prefixes are stored, then used
                _chat(world, "a", secret, QUESTION)
            world["evicted"] = set()
            if evicted:  # every block A holds evicted (rows kept with evicted_at, objects deleted)
                world["evicted"] = {v.block_id for v in prune(app_rt.session, app_rt.blocks, budget_bytes=0,
                                                              grace=timedelta(0))[1]}
                assert world["evicted"]
            yield world
    finally:
        sa.event.remove(sa.engine.Engine, "before_cursor_execute", work.note_statement)


def _wait(world: dict[str, Any]) -> None:
    world["app"].state.serving.depositor.wait()


def _chat(world: dict[str, Any], team: str, system: str, question: str) -> dict[str, Any]:
    world["work"].recording = team == "b"
    r = world["client"].post("/v1/chat/completions", headers=world["h"][team], json={
        "model": "tiny", "max_tokens": 6, "temperature": 0, "logprobs": True, "top_logprobs": 2,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": question}]})
    assert r.status_code == 200, r.text
    _wait(world)
    world["work"].recording = False
    body = r.json()
    for volatile in ("id", "created"):
        body.pop(volatile)
    body["kvgraft"].pop("timings_ms")
    return body  # type: ignore[no-any-return]


def _b_observes(world: dict[str, Any]) -> dict[str, Any]:
    """B's requests, the same in both worlds, and everything B can see afterwards."""
    c, h = world["client"], world["h"]["b"]
    seen: dict[str, Any] = {"answers": []}
    warehouse = "Warehouse notes: aisle seven holds the spare pumps. " * 2
    seen["answers"].append(_chat(world, "b", warehouse, "Where?"))
    seen["answers"].append(_chat(world, "b", GUESS, QUESTION))  # the guess: a miss in both worlds
    seen["answers"].append(_chat(world, "b", warehouse, "Where?"))  # a hit: B's warehouse prefixes are its newest use
    with world["rt"].session() as s:  # B's quota: what it holds now (its own data), so the next deposit evicts
        team = s.get(TeamRow, world["team_b"])
        team.quota_bytes = team_bytes(s, team_id=world["team_b"]) + 1000
    # B's quota pass must drop B's least recently used prefixes, the guess's, whoever else owns them
    seen["answers"].append(_chat(world, "b", "Canteen rota: soup on Mondays, stew on Thursdays. " * 2, "When?"))
    seen["answers"].append(_chat(world, "b", GUESS, QUESTION))  # a miss again: B deposits the guess once more
    listing = c.get("/v1/blocks", headers=h).json()
    times = [item.pop("created_at") for item in listing["items"]]
    assert times == sorted(times, reverse=True), "B's list must follow the times B is shown"
    seen["blocks"] = listing
    shown = []
    for item in listing["items"]:
        block = c.get(f"/v1/blocks/{item['id']}", headers=h).json()
        block.pop("created_at")
        for att in block["attestations"]:
            att.pop("created_at")
        shown.append(block)
    seen["shown"] = shown
    seen["metrics"] = [_metrics(c.get("/metrics", headers=h)), _metrics(c.get("/metrics"))]
    seen["models"] = c.get("/v1/models", headers=h).json()
    seen["quota_passes"] = world["work"].passes
    assert any(p["dropped"] for p in world["work"].passes), "B's quota pass must have evicted something"
    seen["work"] = world["work"].calls  # every statement and object call of B's requests and their deposits
    return seen


def _first_difference(path: str, a: Any, b: Any) -> str:
    """Where two observables first differ (for the failure message)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if a.get(k) != b.get(k):
                return _first_difference(f"{path}.{k}", a.get(k), b.get(k))
    if isinstance(a, list) and isinstance(b, list):
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return _first_difference(f"{path}[{i}]", x, y)
        return f"{path}: {len(a)} items vs {len(b)}: {a[len(b):]!r} / {b[len(a):]!r}"
    return f"{path}: right {a!r} / wrong {b!r}"


def _metrics(r: Any) -> Any:
    """What a metrics answer tells: its status, and the store's figures when it answered."""
    if r.status_code != 200:
        return r.status_code
    return [ln for ln in r.text.splitlines() if ln.startswith(("kvgraft_store", "kvgraft_evict", "kvgraft_cache"))]


def test_a_guessed_system_prompt_is_unconfirmable_through_every_observable(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    with open_runtime(_settings(tmp_path / "probe")) as rt:
        engine = rt.engine()
        assert len(engine.tokenize(GUESS)) == len(engine.tokenize(OTHER))  # A's two secrets cost the same
    observed = {}
    for world, secret, evicted in (("right", GUESS, False), ("wrong", OTHER, False), ("evicted", GUESS, True)):
        with monkeypatch.context() as m, _world(tmp_path / world, m, secret, evicted) as w:
            observed[world] = _b_observes(w)
            with w["rt"].session() as s:  # the worlds do differ: in one, B's guess deduplicated with A's prefix
                shared = s.scalar(sa.select(sa.func.count()).select_from(BlockRow).where(sa.exists(
                    sa.select(BlockOwnerRow.id).where(BlockOwnerRow.block_id == BlockRow.id,
                                                      BlockOwnerRow.owner_key == "1"))
                    & sa.exists(sa.select(BlockOwnerRow.id).where(BlockOwnerRow.block_id == BlockRow.id,
                                                               BlockOwnerRow.owner_key == "2"))))
                observed[world]["_co_owned"] = shared
                b_owns = set(s.scalars(sa.select(BlockOwnerRow.block_id).where(BlockOwnerRow.owner_key == "2")))
                observed[world]["_b_redeposited_evicted"] = len(b_owns & w["evicted"])
    right, wrong, evicted = observed["right"], observed["wrong"], observed["evicted"]
    assert right.pop("_co_owned") >= 1 and wrong.pop("_co_owned") == 0 and evicted.pop("_co_owned") == 0
    # the evicted world differs too: B's guess deposited again blocks A's eviction had taken
    assert evicted.pop("_b_redeposited_evicted") >= 1 and right.pop("_b_redeposited_evicted") == 0
    wrong.pop("_b_redeposited_evicted")
    assert any(c.startswith("fs.fsync") for c in right["work"])  # the recorder sees the file-system calls
    for other in (wrong, evicted):
        for key in right:
            assert right[key] == other[key], _first_difference(key, right[key], other[key])
    assert right["metrics"] == [403, 401]


DOC_GUESS = ("Team A's incident runbook. Step 1: isolate the pump room. Step 2: call the duty officer on 4417. "
             "Step 3: log the valve positions. ") * 2
DOC_OTHER = ("Team A's incident runbook. Step 1: isolate the pump room. Step 2: call the duty officer on 9982. "
             "Step 3: log the valve positions. ") * 2


def _teams(rt: Any) -> tuple[int, int, str]:
    """Team A's and team B's ids, and a submitter token of B's."""
    with rt.session() as s:
        a, b = (get_or_create_team(s, name=n).id for n in ("team-a", "team-b"))
        return a, b, create_api_token(s, team=s.get(TeamRow, b), role="submitter")[1]


def _document_world(data: Path, secret: str) -> dict[str, Any]:
    """A deposits `secret` privately and its questions have a long query class attested for it; then B deposits
    its guess. Everything B can see of its block: the deposit's result, whether its answers count the block as
    attested (short and long query classes), and the block as the API shows it."""
    from workers.flywheel.attested import attestation
    from workers.flywheel.deposit import deposit_text
    from workers.upkeep.attestation import attest_stored_block

    settings = _settings(data)
    with open_runtime(settings) as rt:
        a, b, token = _teams(rt)
        engine = rt.engine()
        mine = deposit_text(rt, engine, text=secret, kind="document", source={"file": "runbook.txt"}, team_id=a)
        attest_stored_block(rt, mine.block_id, n_query=70, team_id=a)  # what A's long questions caused
        guess = deposit_text(rt, engine, text=DOC_GUESS, kind="document", source={"file": "guess.txt"}, team_id=b)
        seen: dict[str, Any] = {"deposit": {k: v for k, v in guess.as_dict().items() if k != "created"},
                                "attested": {n: attestation(rt, engine, guess.block_id, n, team_id=b)
                                             for n in (8, 70)}}
    with TestClient(create_app(settings)) as client:
        shown = client.get(f"/v1/blocks/{guess.block_id}", headers={"Authorization": f"Bearer {token}"}).json()
    shown.pop("created_at")
    shown["attestations"] = [{k: v for k, v in att.items() if k not in ("id", "created_at")}
                             for att in shown["attestations"]]
    seen["shown"] = shown
    return seen


def test_a_guessed_document_is_unconfirmable_through_attestations(tmp_path: Path) -> None:
    """Attestations are facts about content, but their existence tells who asked: B's answers and B's view of
    its block count only the measurements its own deposits and questions caused (and operators' since it holds
    the block), so a class attested because A asked stays pending for B in both worlds, and B's own deposit of
    content A holds is gated in full like any other."""
    right = _document_world(tmp_path / "right", DOC_GUESS)
    wrong = _document_world(tmp_path / "wrong", DOC_OTHER)
    assert right["attested"][8].ok and right["attested"][70].via == "pending"
    for key in right:
        assert right[key] == wrong[key], _first_difference(key, right[key], wrong[key])


def _budget_world(data: Path, secret: str) -> dict[str, Any]:
    """A deposits `secret` and uses it; later its quota drops its ownership of it. B, which deposited its guess and
    three notes long before, is then pruned to a store budget. What the budget dropped of B's, as B sees it: its
    list."""
    from datetime import timedelta

    from store.db import utcnow
    from store.retention import ensure_quota, prune
    from workers.flywheel.deposit import deposit_text

    settings = _settings(data)
    with open_runtime(settings) as rt:
        a, b, token = _teams(rt)
        engine = rt.engine()
        first = deposit_text(rt, engine, text=secret, kind="document", source={"file": "a.txt"}, team_id=a)
        deposit_text(rt, engine, text=DOC_GUESS, kind="document", source={"file": "guess.txt"}, team_id=b)
        for i in range(3):
            deposit_text(rt, engine, text=f"Team B's notes, page {i}: the pumps are serviced in spring. " * 4,
                         kind="document", source={"file": f"b{i}.txt"}, team_id=b)
        now = utcnow()
        with rt.session() as s:  # B's deposits are 20 minutes old; A used its document 5 minutes ago
            s.execute(sa.update(BlockOwnerRow).where(BlockOwnerRow.team_id == b)
                      .values(created_at=now - timedelta(minutes=20)))
            s.execute(sa.update(BlockRow).where(BlockRow.id == first.block_id)
                      .values(last_used_at=now - timedelta(minutes=5)))
            s.get(TeamRow, a).quota_bytes = 1
        ensure_quota(rt.session, rt.blocks, team_id=a, block_id="0" * 64, incoming_bytes=0,
                     grace=timedelta(0))  # A's quota drops its ownership: in one world the block is B's guess
        with rt.session() as s:
            held = team_bytes(s, team_id=b)
        prune(rt.session, rt.blocks, budget_bytes=held - 1)  # the budget must take one of B's four
    with TestClient(create_app(settings)) as client:
        listing = client.get("/v1/blocks", headers={"Authorization": f"Bearer {token}"}).json()
    return {"kept": [(item["id"], item["bytes"]) for item in listing["items"]], "total": listing["total"]}


def test_blocks_another_teams_quota_abandoned_never_change_what_the_budget_takes_from_a_team(tmp_path: Path) -> None:
    """A block whose last owner a quota dropped is not counted against the budget (it is evicted first), so
    whether A's abandoned block is B's guess (still owned by B) or another text (abandoned) never changes which
    of B's ownerships the budget drops."""
    right = _budget_world(tmp_path / "right", DOC_GUESS)
    wrong = _budget_world(tmp_path / "wrong", DOC_OTHER)
    assert right["total"] == 3  # the budget dropped one of B's four ownerships
    assert right == wrong, _first_difference("budget", right, wrong)
