"""Transfer by verified parameterized programs and the post-graft gate without an answer key: question structure,
deriving a form (kept only when it reproduces the answer and depends on its numbers), binding it to a new
question, the gate's checks, and the program route end to end on the tiny model (zero decode tokens, signed with
the block)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from store.blockfile import signature_status
from store.db import ProblemRow
from store.repository import get_or_create_team
from workers.flywheel.alignment import align
from workers.flywheel.answer import AnswerParams
from workers.flywheel.answering import answer_question
from workers.flywheel.parameterize import ParameterizedProgram, derive, substitute
from workers.flywheel.solve import solve_problem
from workers.flywheel.structure import asked_sentence, question_numbers, structure_of
from workers.flywheel.transfer_gate import answer_out_of_domain, program_fit
from workers.problems import parse_problems_jsonl
from workers.queue.dispatch import submit_batch
from workers.runtime import open_runtime
from workers.verify.programs import verify_program

pytestmark = pytest.mark.unit

CARTONS = "A farmer collects 48 eggs and packs them in cartons of 6. How many cartons does he fill?"


def test_question_numbers_units_and_asked_sentence() -> None:
    numbers = question_numbers("Tom has 1,200 dollars and 3.5 hours. He spends 200. How many dollars are left?")
    # unit<context: the word after (else before) and the word before
    assert [(n.value, n.unit) for n in numbers] == [(Decimal(1200), "dollar<tom"), (Decimal("3.5"), "hour<dollar"),
                                                    (Decimal(200), "spend<")]
    assert [n.unit for n in question_numbers("Eggs are packed 7 to a carton. A farmer has 84 eggs.")] == \
        ["carton<packed", "egg<farmer"]
    # the same unit in swapped roles does not look alike
    assert [n.unit for n in question_numbers("Sara reads 37 pages a day. Her book has 259 pages.")] == \
        ["page<read", "page<book"]
    assert asked_sentence(CARTONS) == "How many cartons does he fill?"
    assert structure_of(CARTONS).asked == ("how", "many", "cartons", "fill")
    # the asked clause starts at the last asking word
    assert structure_of("If a farmer has 24 eggs, how many cartons can he fill?").asked == structure_of(CARTONS).asked
    assert question_numbers("version v2 of 7up") == ()


def test_substitute_replaces_only_the_question_numbers_literals() -> None:
    numbers = question_numbers(CARTONS)
    body, n = substitute("eggs = 48\nper = 6.0\nprint(eggs // per + 1)\n", numbers)
    assert n == 2 and body == "eggs = kvp_0\nper = kvp_1\nprint(eggs // per + 1)\n"
    assert substitute("print(\n", numbers) is None  # does not tokenize


def test_derive_keeps_a_form_that_reproduces_and_depends_on_its_numbers() -> None:
    form = derive("eggs = 48\nper_carton = 6\nprint(eggs // per_carton)", CARTONS, "8")
    assert form is not None and form.params == 2 and form.units == ("egg<collect", "carton<")
    program = form.bind(["84", "7"])
    assert program.startswith("kvp_0 = 84\nkvp_1 = 7\n")
    # a constant program is not a method; a program that drops a number it needed does not reproduce
    assert derive("x = 48\ny = 6\nprint(8)", CARTONS, "8") is None
    assert derive("print(8)", CARTONS, "8") is None  # no literal bound: refused
    # numbers too long to bind are left to graft and sample, never a crash
    long = "7" * 70
    question = f"A farmer has {long} eggs in cartons of 6. How many?"
    assert derive(f"print({long} // 6)", question, str(int(long) // 6)) is None
    assert derive(f"print({long[:50]} // 6)", question.replace(long, long[:50]), str(int(long[:50]) // 6))
    # 38 % 4 == 79 % 11 == 2: one perturbation that happens to give the same answer does not refuse a method
    muffins = "A baker makes 38 muffins and puts them in boxes of 4. How many muffins are left over?"
    assert derive("muffins = 38\nper_box = 4\nprint(muffins % per_box)", muffins, "2") is not None
    # duplicate numbers make a literal's parameter ambiguous
    assert derive("print(6 * 6)", "A box holds 6 rows of 6 eggs. How many eggs?", "36") is None
    assert derive("print(48 / 6)", CARTONS, "9") is None  # does not reproduce the verified answer


def test_form_from_meta_refuses_malformed_shapes() -> None:
    good = {"body": "print(kvp_0)", "params": 1, "units": ["eggs"], "asked": ["how"]}
    assert ParameterizedProgram.from_meta(good) is not None
    for bad in (None, "x", {**good, "params": True}, {**good, "params": 2}, {**good, "units": [1]},
                {**good, "body": 3}, {**good, "params": 0, "units": []}, {**good, "params": 99, "units": ["a"] * 99}):
        assert ParameterizedProgram.from_meta(bad) is None, bad
    form = ParameterizedProgram.from_meta(good)
    assert form is not None
    with pytest.raises(ValueError, match="takes 1 numbers"):
        form.bind(["1", "2"])
    # only a plain decimal number is ever written into the program, as a literal kvgraft formats itself
    for hostile in ("__import__('os').system('id')", "1e400", "NaN", "--1", "1_000", "0x10", "Infinity", "9" * 5000,
                    "1/0", "1/2/3", "+1", "1.5/2"):
        with pytest.raises(ValueError, match="not a"):
            form.bind([hostile])
    assert form.bind(["3.50"]).startswith("kvp_0 = 3.5\n") and form.bind(["007"]).startswith("kvp_0 = 7\n")
    # signed numbers and fractions as the question writes them
    assert form.bind(["-12"]).startswith("kvp_0 = -12\n") and form.bind(["-3/4"]).startswith("kvp_0 = (-3 / 4)\n")


def test_alignment_needs_the_same_problem_and_the_same_asked_quantity() -> None:
    same = align("A farmer collects 84 eggs and packs them in cartons of 7. How many cartons does he fill?", CARTONS)
    assert same.aligned and same.kept == 1.0 and same.renames == ()
    assert same.values == ["84", "7"] and [b.param for b in same.bindings] == [0, 1]
    # a paraphrase is not the same text: it goes to graft and sample
    paraphrase = align("Eggs are packed 7 to a carton. If a farmer has 84 eggs, how many cartons can he fill?",
                       CARTONS)
    # ("collects 48 eggs and packs them" is two statements, the paraphrase's one: refused at the count)
    assert not paraphrase.aligned and paraphrase.failed_at in ("body", "count")
    other = align("A farmer collects 48 eggs and packs them in cartons of 6. How many eggs does he collect in 3 "
                  "days if he collects the same number each day?", CARTONS)
    assert not other.aligned and other.failed_at == "count"
    asks = align("A farmer collects 84 eggs and packs them in cartons of 7. How much money does he earn?", CARTONS)
    assert not asks.aligned and asks.failed_at == "asked"


def test_answer_out_of_domain_refuses_what_the_method_never_gave() -> None:
    assert answer_out_of_domain("12", 8) is None and answer_out_of_domain("12.0", "8") is None
    assert "whole number" in str(answer_out_of_domain("12.5", 8))
    assert "negative" in str(answer_out_of_domain("-3", 8))
    assert answer_out_of_domain("2.5", "1.5") is None and answer_out_of_domain("-3", -2) is None
    assert answer_out_of_domain("abc", 8) is None and answer_out_of_domain("3", None) is None


def test_program_fit_flags_unused_numbers_and_stale_literals() -> None:
    mine, routed = structure_of("A farmer collects 84 eggs and packs them in cartons of 7. How many cartons?"), \
        structure_of(CARTONS)
    assert program_fit("print(84 // 7)", True, mine, routed).passed
    stale = program_fit("print(84 // 6)", True, mine, routed)
    assert not stale.passed and stale.stale == ("6",) and not stale.numbers_used
    assert "literals 6" in stale.reason()
    assert not program_fit("print(84 // 7)", False, mine, routed).passed
    assert not program_fit(None, False, mine, routed).passed


def test_a_same_structure_question_is_answered_by_the_signed_program_with_no_decode(data_dir: Path) -> None:
    rt = open_runtime()
    try:
        specs = parse_problems_jsonl(json.dumps({"id": "c", "question": CARTONS, "answer": 8,
                                                 "solution": "eggs = 48\nper_carton = 6\nprint(eggs // per_carton)"}))
        _, (pid,) = submit_batch(rt, specs, team="t")
        assert solve_problem(rt, pid) == "solved"
        with rt.session() as s:
            block_id = s.get(ProblemRow, pid).block_id
        engine = rt.engine()
        block = rt.blocks.get(engine.fingerprint.id, block_id)
        assert block.meta["parameterized"]["params"] == 2
        assert signature_status(block, rt.settings.block_key_bytes) in ("no-key", "signed")
        with rt.session() as s:
            team_id = get_or_create_team(s, name="t").id
        params = AnswerParams(use_direct=False, use_context=False)
        variant = "A farmer collects 84 eggs and packs them in cartons of 7. How many cartons does he fill?"
        got = answer_question(rt, variant, team_id=team_id, params=params)
        assert (got.route, got.answer, got.decode_tokens, got.block_id) == ("program", "12", 0, block_id)
        assert got.attested is False and "nothing grafted" in got.detail
        # the same question asking another quantity: the gate refuses before anything is sampled
        near = answer_question(rt, "A farmer collects 84 eggs and packs them in cartons of 7. How much money does "
                                   "he earn?", team_id=team_id, params=params)
        assert near.route == "abstain" and near.decode_tokens == 0 and "another quantity" in near.detail
        assert near.binding is not None and near.binding["gate"]["alignment"]["failed_at"] == "asked"
        # renamed objects with new numbers: bound by alignment, whatever the router's lexical score
        renamed = answer_question(rt, "A farmer collects 91 apples and packs them in crates of 7. How many crates "
                                      "does he fill?", team_id=team_id, params=params)
        assert (renamed.route, renamed.answer, renamed.decode_tokens) == ("program", "13", 0)
        assert renamed.binding is not None and renamed.binding["method"] == "alignment"
        bound = renamed.binding["tried"][-1]["alignment"]
        assert [(b["param"], b["routed"], b["question"]) for b in bound["bindings"]] == [(0, "48", "91"),
                                                                                         (1, "6", "7")]
        assert bound["renames"] == [["eggs", "apples"], ["cartons", "crates"]]
        # method "program" alone abstains where no form applies; "graft" never uses the form
        alone = answer_question(rt, "Eggs are packed 7 to a carton. If a farmer has 84 eggs, how many cartons "
                                    "can he fill?", team_id=team_id,
                                params=AnswerParams(use_direct=False, use_context=False, transfer_method="program"))
        assert alone.route == "abstain" and "no verified parameterized program applies" in alone.detail
        with pytest.raises(ValueError, match="transfer_method"):
            answer_question(rt, variant, team_id=team_id, params=AnswerParams(use_direct=False,
                                                                              transfer_method="guess"))
    finally:
        rt.close()


def test_objects_renamed_over_a_program_with_constants_of_its_own_abstain(data_dir: Path) -> None:
    """"5 boxes of pens" (a box of 10) -> "7 bags of pens": the program's 10 belongs to the box; the route
    refuses."""
    rt = open_runtime()
    try:
        question = "Tom has 5 boxes of pens. How many pens does Tom have?"
        specs = parse_problems_jsonl(json.dumps({"id": "w", "question": question, "answer": 50,
                                                 "solution": "boxes = 5\nprint(boxes * 10)"}))
        _, (pid,) = submit_batch(rt, specs, team="t")
        assert solve_problem(rt, pid) == "solved"
        with rt.session() as s:
            team_id = get_or_create_team(s, name="t").id
        params = AnswerParams(use_direct=False, use_context=False, transfer_method="program")
        same = answer_question(rt, question.replace("5", "8"), team_id=team_id, params=params)
        assert (same.route, same.answer) == ("program", "80")  # numbers alone: the constant still holds
        other = answer_question(rt, "Tom has 7 bags of pens. How many pens does Tom have?", team_id=team_id,
                                params=params)
        assert other.route == "abstain" and other.binding is not None
        assert "constants of its own (10)" in other.binding["tried"][0]["outcome"]
    finally:
        rt.close()


def test_a_constant_a_kept_word_explains_does_not_block_an_object_rename() -> None:
    from workers.flywheel.transfer import unexplained_constants

    body = "print(kvp_0 - kvp_0 * kvp_1 // 100)"
    assert unexplained_constants(body, "A hat costs $40. Ana buys it with 10% off. How many dollars does she pay?") \
        == []
    assert unexplained_constants("print(kvp_0 * 2)", "A shop has 5 bicycles. How many wheels?") == ["2"]
    assert unexplained_constants("print(kvp_0 * 2)", "Ana eats 5 pies and Tom eats twice as many.") == []


def test_a_fraction_or_a_multiple_spelled_in_words_explains_its_constants() -> None:
    from workers.flywheel.transfer import unexplained_constants

    body = "print((kvp_0 + kvp_0 * 3 // 5) * kvp_1)"
    shop = "A shop sells 35 books on Saturday and three fifths as many on Sunday. Each costs $17. How many dollars?"
    assert unexplained_constants(body, shop) == []
    assert unexplained_constants("print(kvp_0 * 4)", "Ana has 5 pens and Tom four times as many. How many?") == []
    # a number word that is no fraction or multiple explains nothing: the 2 may be a bicycle's wheels
    assert unexplained_constants("print(2 * kvp_0 * 2)", "Ana has two shops of 5 bicycles. How many wheels?") \
        == ["2"]
    assert unexplained_constants(body, shop.replace("three fifths", "half")) == ["3", "5"]
    # "time and a half": 3 and 2 (or 1.5) once each; a third 3 is the renamed object's own
    overtime = "Yaa earns $12 an hour and time and a half for every hour over 32. She works 54 hours. How much?"
    assert unexplained_constants("print(kvp_0 * kvp_1 + (kvp_2 - kvp_1) * kvp_0 * 3 // 2)", overtime) == []
    assert unexplained_constants("print(kvp_0 * kvp_1 + (kvp_2 - kvp_1) * kvp_0 * 1.5)", overtime) == []
    assert unexplained_constants("print(kvp_0 * kvp_1 + (kvp_2 - kvp_1) * kvp_0 * 3 // 2 * 3)", overtime) == ["3"]
    assert unexplained_constants("print(kvp_0 * 5 // 2)", "Ana walks two and a half miles a day. How far?") == []
    deposit = "Ana orders 15 cakes at $8 each and pays a fifth of the price now. How much does she still owe?"
    assert unexplained_constants("print(kvp_0 * kvp_1 - kvp_0 * kvp_1 // 5)", deposit) == []
    assert unexplained_constants("print(kvp_0 * kvp_1 - kvp_0 * kvp_1 // 5 * 5)", deposit) == ["5"]
    # "a third grader" is no fraction (NOTE-review7b): a tricycle's 3 stays unexplained
    assert unexplained_constants("print(kvp_0 * 3)", "A third grader builds 4 tricycles. How many wheels?") == ["3"]
    assert unexplained_constants("print(kvp_0 - kvp_0 // 3)", "Ana has 12 pens and gives a third of them away.") \
        == []
    # "a third of" explains one 3, not a tricycle's 3 wheels besides
    assert unexplained_constants("print((kvp_0 - kvp_0 // 3) * 3)", "Ana has 12 tricycles and sells a third of "
                                 "them. How many wheels are left?") == ["3"]
    assert unexplained_constants("print(kvp_0 * 3 // 2)", "Ana walks two and a half miles a day. How far?") == ["3"]
    # a round trip is there and back: one 2, not a bicycle's 2 wheels besides
    toll = "Rashid drives his minibus past 7 toll booths at $20 each. How much does he pay for the round trip?"
    assert unexplained_constants("print(2 * kvp_0 * kvp_1)", toll) == []
    assert unexplained_constants("print(2 * kvp_0 * kvp_1 * 2)", toll) == ["2"]
    assert unexplained_constants("print(2 * kvp_0 * kvp_1)", toll.replace("round trip", "trip")) == ["2"]
    # only where the asked sentence asks for the round trip's money, distance or time (NOTE-review10: a round trip
    # that sets the scene explains no bicycle's 2 wheels)
    bikes = "Rashid fixes 7 bicycles and then makes a round trip to the shop. How many wheels did he fix?"
    assert unexplained_constants("print(kvp_0 * 2)", bikes) == ["2"]
    # the one form or the other, never both (NOTE-review7 4): where the program writes 1.5, a 3 is a tricycle's
    tricycles = ("Lena fits wheels on 30 tricycles on Friday and, paid time and a half on Saturday, on 10 tricycles. "
                 "How many dollars does she earn at $2 a wheel?")
    assert unexplained_constants("wheels = 3\nprint(kvp_2 * wheels * kvp_0 + kvp_2 * 1.5 * wheels * kvp_1)",
                                 tricycles) == ["3"]
    # "a thousand megabytes in a gigabyte" explains one 1000 (the eighth session); "a hundred thousand" no 100
    card = "A card holds 56 gigabytes, and there are a thousand megabytes in a gigabyte. A photo takes 8 megabytes."
    assert unexplained_constants("print(kvp_0 * 1000 // kvp_1)", card) == []
    assert unexplained_constants("print(kvp_0 * 1000 // kvp_1 * 1000)", card) == ["1000"]
    assert unexplained_constants("print(kvp_0 * 1000 // kvp_1)", card.replace("a thousand", "many")) == ["1000"]
    assert unexplained_constants("print(kvp_0 * 100)", "A town of a hundred thousand people has 5 parks.") == ["100"]
    assert unexplained_constants("print(kvp_0 * 2.5 * 5)", "A starfish swims two and a half meters. How far?") \
        == ["5"]


def test_a_spelled_multiple_explains_one_use_of_its_constant_not_an_objects_constant_besides() -> None:
    """Review 3 of issue 38: "four times as many cars" explained both 4s of `kvp_0 * 4 * 4`, so "cars" ->
    "bicycles" bound 5 bicycles to 80 wheels (40); "two thirds" explained a bicycle's 2 wheels the same way."""
    from workers.flywheel.transfer import unexplained_constants

    cars = "Ana has 5 cars. Tom has four times as many cars as Ana. How many wheels do Tom's cars have?"
    assert unexplained_constants("print(kvp_0 * 4 * 4)", cars) == ["4"]
    assert unexplained_constants("print(kvp_0 * 4)", cars) == []
    bikes = "A shop has 12 bicycles. It sells two thirds of them. How many wheels do the bicycles that are left have?"
    assert unexplained_constants("print((kvp_0 - kvp_0 * 2 // 3) * 2)", bikes) == ["2"]
    assert unexplained_constants("print(kvp_0 - kvp_0 * 2 // 3)", bikes) == []


def test_a_fixed_word_explains_one_use_of_its_constant_not_an_objects_constant_besides() -> None:
    """Found after review 3 of issue 38 (older than its rules): "twice as many bicycles" explained both 2s of
    `kvp_0 * 2 * 2`, so "bicycles" -> "tricycles" bound 6 tricycles to 24 wheels (36). Each fixed word ("twice",
    "hours", "minutes") explains one use of its constant; a text that writes it as often explains as many."""
    from workers.flywheel.transfer import unexplained_constants

    bikes = "Ana has 5 bicycles. Tom has twice as many bicycles as Ana. How many wheels do Tom's bicycles have?"
    assert unexplained_constants("print(kvp_0 * 2 * 2)", bikes) == ["2"]
    assert unexplained_constants("print(kvp_0 * 2.0 * 2)", bikes) == ["2.0"]  # 2.0 and 2: one constant, two uses
    assert unexplained_constants("print(kvp_0 * 2)", bikes) == []
    hours = "Sam works 3 hours a day. How many minutes does he work in a day?"
    assert unexplained_constants("print(kvp_0 * 60)", hours) == []
    assert unexplained_constants("m = kvp_0 * 60\nprint(m / 60 * 60)", hours) == ["60"]  # three 60s, two words


def test_a_question_whose_people_and_objects_are_all_new_is_found_by_its_shape() -> None:
    from store.route_index import IndexedProblem, Retrieval, TermStats, index_terms
    from workers.flywheel.router import ranked_indexed, ranked_shape, shape_query

    base = "Mia picks 12 clams at the beach. She gives 5 clams to her brother. How many clams does Mia have left?"
    other = "A train travels 60 miles per hour for 3 hours. How many miles does it travel?"
    new = ("Tendai picks 20 shrimps at the beach. He gives 7 shrimps to his uncle. How many shrimps does Tendai have "
           "left?")
    docs = [IndexedProblem("base", "b1", tuple(index_terms(base))), IndexedProblem("other", "b2",
                                                                                   tuple(index_terms(other)))]
    terms = {t for d in docs for t in d.terms} | set(index_terms(new))
    stats = TermStats(2, {t: sum(t in d.terms for d in docs) for t in terms})
    found = Retrieval(docs, stats, (), False)
    assert ranked_indexed(new, found, threshold=0.5, limit=8) == []  # by words it scores low
    shaped = ranked_shape(new, found, threshold=0.5, limit=8)
    assert [key for _, key in shaped] == ["base"] and shaped[0][0] > 0.9
    assert "picks" in shape_query(new) and "tendai" not in shape_query(new) and "shrimps" not in shape_query(new)


def test_a_number_the_program_also_uses_as_a_constant_is_told_apart_or_gives_no_form() -> None:
    # "half" is `// 2` in the program and the question also says 2 boxes: binding both literals to the boxes would
    # answer "3 boxes of 12" with 36 // 3 = 12 instead of 18. The literal assigned to a name is the number and the
    # bare one the constant "half" explains; where that cannot be told (no name, a name holding the explaining
    # word, more bare literals than the question's words explain), the program has no parameterized form
    question = ("Leo buys 2 boxes of 12 pencils. He gives half of the pencils to his sister. "
                "How many pencils does he keep?")
    program = "boxes = 2\nper_box = 12\ntotal = boxes * per_box\nprint(total // 2)\n"
    assert substitute(program, question_numbers(question))[0].count("kvp_0") == 2
    form = derive(program, question, "12")
    assert form is not None and "print(total // 2)" in form.body
    assert verify_program(form.bind(["3", "12"])).answer == "18"
    assert derive("print(2 * 12 // 2)", question, "12") is None
    assert derive("half = 2\nper_box = 12\nprint(2 * per_box // half)", question, "12") is None
    assert derive("boxes = 2\nper_box = 12\nprint(boxes * per_box // 2 // 2 * 2)", question, "12") is None
    dozen = ("Each batch takes 3 eggs and makes 12 flapjacks, and they have 5 dozen eggs. They sell every flapjack "
             "for $4. How many dollars do they raise?")
    form = derive("eggs_per_batch = 3\nper_batch = 12\ndozens = 5\nprice = 4\n"
                  "print(dozens * 12 // eggs_per_batch * per_batch * price)", dozen, "960")
    assert form is not None and verify_program(form.bind(["3", "10", "5", "4"])).answer == "800"
    assert derive("eggs_per_batch = 3\nper_dozen = 12\ndozens = 5\nprice = 4\n"
                  "print(dozens * per_dozen // eggs_per_batch * 12 * price)", dozen, "960") is None
    # the same program without the coincidence keeps its form
    assert derive(program.replace("boxes = 2", "boxes = 4"), question.replace("2 boxes", "4 boxes"), "24")
    # a form stored before the rule is refused when read back
    meta = {"body": "total = kvp_0 * kvp_1\nprint(total // kvp_0)\n", "params": 2, "units": ["box", "pencil"],
            "asked": ["how", "many", "pencils"]}
    assert ParameterizedProgram.from_meta(meta) is None
    assert ParameterizedProgram.from_meta({**meta, "body": "print(kvp_0 * kvp_1 // 2)\n"}) is not None


def test_a_renamed_objects_words_explain_no_constant() -> None:
    """"each double-decker bus" -> "each van": the "double" is not in the question, so it explains no 2 of the
    program (a 2 the bus carries would bind to the van)."""
    from workers.flywheel.transfer import unexplained_constants

    buses = "Each double-decker bus holds 14 pupils. How many double-decker buses for 60 pupils?"
    assert unexplained_constants("print(kvp_1 // (kvp_0 * 2))", buses) == []
    assert unexplained_constants("print(kvp_1 // (kvp_0 * 2))", buses, ("double - decker bus",)) == ["2"]
    assert unexplained_constants("print(kvp_1 // kvp_0)", buses, ("double - decker bus",)) == []


def test_a_names_past_form_holds_the_verb_its_clause_writes_in_the_present() -> None:
    """"He also buys 2 tins ... visits them twice a day": `bought = 2` is the 2 tins (its clause writes "buys"), the
    program's `* 2` the "twice" that must agree; a name of no word of the clause, or of the clause that explains the
    constant, still leaves no form."""
    question = ("While his son is away for 5 days, Ali feeds the cats and visits them twice a day, earning $4 a visit. "
                "He also buys 2 tins of cat food, which cost $7 apiece, and his son pays him back for them. How many "
                "dollars does his son give Ali in all?")
    program = "days = 5\nvisit = 4\nbought = 2\nprice = 7\nprint(days * 2 * visit + bought * price)\n"
    form = derive(program, question, "54")
    assert form is not None and "bought = kvp_2" in form.body and "days * 2 * visit" in form.body
    new = question.replace("5 days", "3 days").replace("2 tins", "4 tins")
    assert verify_program(form.bind(align(new, question).values)).answer == "52"  # 3 * 2 * 4 + 4 * 7
    assert derive(program.replace("bought", "spent"), question, "54") is None  # no word of its clause
    assert derive(program.replace("bought", "visits"), question, "54") is None  # the explaining clause's word


def test_a_value_written_twice_is_told_apart_by_the_names_its_literals_are_assigned_to() -> None:
    """"2 friends share 2 pizzas": which 2 is which is read from `friends = 2` and `pizzas = 2`; bound to a new
    question the friends divide and the pizzas multiply. A literal of that value that no name tells apart (a bare
    constant, a name holding neither word, a name holding both) leaves the program with no form, as before."""
    question = "2 friends share 2 pizzas. Each pizza has 8 slices. How many slices does each friend get?"
    program = "friends = 2\npizzas = 2\nslices = 8\nprint(pizzas * slices // friends)\n"
    form = derive(program, question, "8")
    assert form is not None and form.numbers == ("2", "2", "8")
    assert "friends = kvp_0" in form.body and "pizzas = kvp_1" in form.body
    new = "4 friends share 3 pizzas. Each pizza has 8 slices. How many slices does each friend get?"
    alignment = align(new, question)
    assert alignment.aligned
    bound = form.bind(alignment.values)
    assert verify_program(bound).answer == "6"  # 3 * 8 // 4; the literals swapped would give 4 * 8 // 3 = 10
    swapped = "friends = 2\npizzas = 2\nslices = 8\nprint(friends * slices // pizzas)\n"
    assert verify_program(derive(swapped, question, "8").bind(alignment.values)).answer == "10"  # the names decide
    assert derive("print(2 * 8 // 2)", question, "8") is None  # no names
    assert derive("friends = 2\npizzas = 2\nslices = 8\nprint(pizzas * slices // 2)", question, "8") is None
    assert derive("a = 2\nb = 2\nslices = 8\nprint(a * slices // b)", question, "8") is None
    assert derive("friend_pizzas = 2\npizzas = 2\nslices = 8\nprint(pizzas * slices // friend_pizzas)",
                  question, "8") is None  # a name holding both words
    same_unit = "Mia has 2 apples and Tom has 2 apples. How many apples do they have?"
    assert derive("mia_apples = 2\ntom_apples = 2\nprint(mia_apples + tom_apples)", same_unit, "4") is None


def test_a_name_tells_the_number_from_a_constant_only_by_the_numbers_own_clause() -> None:
    """Review 38 (s43): `box = 12` is the dozen of "boxes of a dozen" and `5 * 12` the question's 12 muffins a batch;
    binding `box` answered "24 muffins a batch" with 5 * 12 // 24 = 2 for 10. A name that holds no word of the
    number's own clause, or a word of a clause that writes the explaining word, tells nothing: no form."""
    muffins = ("A baker makes 12 muffins in each batch. She packs them in boxes of a dozen. She bakes 5 batches. "
               "How many boxes does she fill?")
    assert derive("box = 12\nmuffins = 5 * 12\nprint(muffins // box)\n", muffins, "5") is None
    eggs = ("Eggs are sold by the dozen for $3 a dozen. Mia needs 12 eggs for her cakes. How many dollars does she "
            "spend?")
    assert derive("eggs_in_carton = 12\ncartons = 12 / eggs_in_carton\nprint(int(cartons * 3))\n", eggs, "3") is None
    pages = "Tom reads 60 pages in 2 hours. How many minutes does he spend on each page?"
    assert derive("factor = 60\nprint(2 * factor / 60)\n", pages, "2") is None
    # a price is what its own clause says a thing sells or costs for (seventh session): `price = 2` is Kč2, the bare
    # 2 is "twice"; a price named in the clause that writes "twice" tells nothing
    milk = ("Mehmet milks 5 goats twice a day, and each milking gives 3 liters from every animal. The milk sells for "
            "$2 a liter. How many dollars does the milk from one week bring in?")
    form = derive("animals = 5\nliters = 3\nprice = 2\nprint(animals * 2 * liters * 7 * price)\n", milk, "420")
    assert form is not None and verify_program(form.bind(["6", "4", "3"])).answer == "1008"
    mixed = ("Mehmet milks 5 goats twice a day at a price of $2 a liter, and each milking gives 3 liters from every "
             "animal. How many dollars does the milk from one week bring in?")
    assert derive("animals = 5\nliters = 3\nprice = 2\nprint(animals * 2 * liters * 7 * price)\n", mixed, "420") \
        is None
    # the alias holds for an amount of money only: "12 boxes of eggs that cost $1 per egg" has a price in the count's
    # clause, and `price = 12` (worked out, 12 x $1) is no price of 12 boxes (NOTE-review7c)
    eggs = ("Ana buys 12 boxes of eggs that cost $1 per egg, and each box holds a dozen eggs. She has a coupon for $5 "
            "off each box. How many dollars does she pay?")
    assert derive("price = 12\nprint(12 * (price - 5))\n", eggs, "84") is None


def _program_route(routed: str, program: str, question: str) -> str | None:
    """The program route's steps on one candidate, as transfer.by_program takes them with the gate on: the routed
    problem's form, the alignment, transfer.form_refusal (the form's numbers, the constants a renamed object may
    carry), the bound program and the answer gate. None where a step refuses."""
    from workers.flywheel.transfer import form_refusal

    answer = verify_program(program).answer
    form = derive(program, routed, answer)
    alignment = align(question, routed)
    if form is None or not alignment.aligned or form_refusal(form, alignment, routed) is not None:
        return None
    got = verify_program(form.bind(alignment.values))
    if not got.ran_cleanly or answer_out_of_domain(got.answer, answer):
        return None
    return str(got.answer)


def _served_wrongly(cases: list[tuple[str, str, str, str, object]]) -> dict[str, tuple[str, object]]:
    """The review cases (name, routed problem, its program, question, right answer; None where the text gives none)
    the program route answers, and answers wrongly: name -> (served, right)."""
    return {name: (got, right) for name, routed, program, question, right in cases
            if (got := _program_route(routed, program, question)) is not None
            and (right is None or got != str(right))}


def test_the_eighth_reviews_questions_are_refused_or_answered_right() -> None:
    """NOTE-review8's 70 and NOTE-review8c's 40 attacks on the eighth session's rules
    (tests/fixtures/review8_cases.py): two-word names whose words have two genders ("Mary Thomas ... He"), labels
    read as letter signs ("In Q1 ... In Q2 twice as many"), category nouns in -ing ("How much bedding"), "a thousand
    phones" explaining a conversion's 1000, milligrams renamed to micrograms, a kept name whose pronoun changes
    gender ("Mia gives Vusi ... He"), "the fast vehicle" picking one of things brought in by possessives; each is
    refused or answered right."""
    from tests.fixtures.review8_cases import CASES

    assert not _served_wrongly(CASES)


def test_the_ninth_reviews_questions_are_refused_or_answered_right() -> None:
    """NOTE-review9's 127 attacks on the ninth session's rules (tests/fixtures/review9_cases.py): two kin told apart
    by age, age comparisons, opening phrases that carry meaning, verbs before role nouns, hyphenated words that
    carry a count or a kind, labels swapped; each is refused or answered right (None: any answer is wrong)."""
    from tests.fixtures.review9_cases import CASES

    assert not _served_wrongly(CASES)


def test_the_tenth_reviews_questions_are_refused_or_answered_right() -> None:
    """NOTE-review10's 184 attacks on the tenth session's rules (tests/fixtures/review10_cases.py): counted names of
    several words, a trade's plural after a verb, hyphens of two names, a possessive pronoun and its object renamed
    together, round trips; each is refused or answered right (None: any answer is wrong). The 17 it served wrongly
    at c478608: round trips that only set the scene ("... a round trip to the shop. How many wheels?"), one thing
    renamed to a group ("his minibus" -> "her truck convoy", "$20 per vehicle") and "Bi-weekly" -> "Tri-weekly"
    read as names."""
    from tests.fixtures.review10_cases import CASES

    assert not _served_wrongly(CASES)


def test_the_tenth_second_reviews_questions_are_refused_or_answered_right() -> None:
    """NOTE-review10b's 103 attacks on the world's letter currency signs (tests/fixtures/review10b_cases.py): labels
    glued to a sign that also labels, family signs mixed, signs whose word is also a noun, coins and rates of the
    routed currency; each is refused or answered right. At b70b3a3 it served 23 wrongly (16 new, 7 older with the
    signs that were label-like before and with dollars renamed to euros)."""
    from tests.fixtures.review10b_cases import CASES

    assert not _served_wrongly(CASES)


def test_the_tenth_third_reviews_questions_are_refused_or_answered_right() -> None:
    """NOTE-review10c's 76 attacks on the rules chosen on varied-dev8 (tests/fixtures/review10c_cases.py): each is
    refused or answered right but the one borderline case. At b84c013 it served 6: "Tom-Mia share 20 cookies ...
    with 3 friends" read as one person (5 served, 4 true) and a verb whose number changes ("Sara shares" -> "Tom-Ali
    share", older)."""
    from tests.fixtures.review10c_cases import BORDERLINE, CASES

    wrong = set(_served_wrongly(CASES))
    assert wrong <= BORDERLINE, sorted(wrong - BORDERLINE)


def test_a_number_the_program_does_not_use_and_that_counts_nothing_must_stay() -> None:
    """A label ("In 2019, ... In 2021, ... in 2021?", "in week 2") is a number the program does not use and no
    quantity: swapped or changed, the question may ask about another statement (NOTE-review9: 9 served, 5 true). A
    quantity the program does not use (a price beside a count of animals) may still change."""
    years = "In 2019, Ana had 5 cats. In 2021, she had 9 cats. How many cats did Ana have in 2021?"
    swapped = "In 2021, Ana had 5 cats. In 2019, she had 9 cats. How many cats did Ana have in 2021?"
    assert _program_route(years, "print(9)", swapped) is None
    weeks = "In week 1 Ana plants 30 trees. In week 2 she plants 45 trees. How many trees does Ana plant in week 2?"
    assert _program_route(weeks, "print(45)", weeks.replace("week 2", "week 3")) is None
    assert _program_route(weeks, "print(45)", weeks.replace("45", "50")) == "50"
    rabbits = ("Pedro keeps 6 rabbits on his farm. In the spring each of them has 4 young. Pedro sells a third of the "
               "young at the market, getting $20 for each, and keeps the rest. How many animals does Pedro have after "
               "the market?")
    program = "adults = 6\nyoung_each = 4\nyoung = adults * young_each\nprint(adults + young - young // 3)\n"
    assert _program_route(rabbits, program, rabbits.replace("4 young", "7 young").replace("$20", "$40")) == "34"


def test_a_count_word_inside_a_hyphenated_name_must_agree() -> None:
    """"3 flat-pack desks" -> "3 twin-pack desks" (NOTE-review9): twin, dual, duo, quad and multi count, as "six"
    and "pair" do, so the rename is refused (6 served, 12 true where a twin-pack holds 2)."""
    desks = "Ana orders 3 flat-pack desks at $40 each. How many dollars does Ana pay?"
    for word in ("twin", "dual", "quad", "multi"):
        assert not align(desks.replace("flat-pack", f"{word}-pack").replace("40", "30"), desks).aligned, word


def test_the_ninth_second_reviews_questions_are_refused_or_answered_right_but_the_older_holes() -> None:
    """NOTE-review9b's 100 attacks (tests/fixtures/review9b_cases.py): kinship nouns of no gender and pronouns
    ("Ana's brother has 20 apples. Her neighbor has 10. He gives Ana 5" -> "coworker ... uncle": 15 served, 20 true;
    "Tom's teacher had 40 pencils. She gave Tom 10" -> "Tom's brother ... She"), labels after a label noun ("bus 7",
    "room 12", "player #9") and a label written twice changed once ("Lane 4 ... lane 4" -> "Lane 6 ... lane 4"):
    each is refused or answered right. `OLDER_HOLES` (a definite name for a thing named otherwise, renamed) are
    still answered wrongly; the second half says so, so that a fix shows here."""
    from tests.fixtures.review9b_cases import CASES, OLDER_HOLES

    served = set(_served_wrongly(CASES))
    assert served == OLDER_HOLES, sorted(served ^ OLDER_HOLES)


def test_a_pronoun_whose_only_referent_is_renamed_to_the_other_gender_is_refused() -> None:
    """Where the routed pronoun's referent by the conventions is no person of its gender, a kinship noun of no
    gender named before it may be whom it stands for: renamed to one of the other gender, the question's pronoun
    stands for no one (NOTE-review9b; answered 30 on every commit before). Where the conventions give a person of
    its gender ("Ximena ... her teacher. On Monday she ..."), the noun may still be renamed."""
    pencils = "Tom's teacher had 40 pencils. She gave Tom 10 pencils. How many pencils does the teacher have left?"
    assert not align(pencils.replace("teacher", "brother"), pencils).aligned
    marbles = "Tom has 20 marbles. His cousin has 15 marbles. He gives Tom 5 marbles. How many marbles does Tom have?"
    assert not align(marbles.replace("cousin", "sister").replace("20", "30"), marbles).aligned
    fares = ("Ximena drives a tuk-tuk for her teacher. On Monday she gives 24 rides at $4 a ride. She gives her "
             "teacher $20. How many dollars does Ximena have left?")
    assert align(fares.replace("teacher", "great-aunt"), fares).aligned


def test_a_number_after_a_label_noun_or_written_twice_is_a_label() -> None:
    """"Bus 7 carries 40 people and bus 9 carries 30. How many people does bus 7 carry?" with the buses swapped
    served 40 (true 30) on every commit before (NOTE-review9b): a number after a label noun or "#" is a label
    whatever follows it, and an unused number written twice that the question changes in one place only is one
    thing named twice made two ("Lane 4 ... lane 4" -> "Lane 6 ... lane 4")."""
    buses = "Bus 7 carries 40 people and bus 9 carries 30 people. How many people does bus 7 carry?"
    assert _program_route(buses, "print(40)", buses.replace("does bus 7", "does bus 9")) is None
    players = "Player #7 scored 20 points and player #9 scored 15 points. How many points did player #7 score?"
    assert _program_route(players, "print(20)", players.replace("did player #7", "did player #9")) is None
    lanes = "Lane 4 is 400 meters long. Ana runs lane 4 three times. How many meters does she run?"
    assert _program_route(lanes, "print(400 * 3)", lanes.replace("Lane 4", "Lane 6")) is None
    assert _program_route(lanes, "print(400 * 3)", lanes.replace("400", "300")) == "900"


def test_the_ninth_third_reviews_questions_are_refused_or_answered_right() -> None:
    """NOTE-review9c's 98 attacks (tests/fixtures/review9c_cases.py) on names that keep their last words up to the
    noun, mass nouns headed elsewhere and the seventh pool's currency signs: modifiers that carry a quantity or a
    kind dropped, two kinds made one, signs as labels, mixed currencies; each is refused or answered right but the
    one borderline case, which is served the answer its text literally gives."""
    from tests.fixtures.review9c_cases import BORDERLINE, CASES

    wrong = set(_served_wrongly(CASES))
    assert wrong <= BORDERLINE, sorted(wrong - BORDERLINE)
