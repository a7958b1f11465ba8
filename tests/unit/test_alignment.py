"""The program route's slot alignment, tried as a user and as an attacker would: renamed people and objects bind
the right numbers to the right parameters, statements may come in another order, and every question that asks for
something else of the same problem (another person, another object, another unit, another step, another verb, a
word added or dropped) is refused with its reason."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workers.flywheel.alignment import align, tokens_of

pytestmark = pytest.mark.unit

CLAMS = "Mia picks 12 clams at the beach. She gives 5 clams to her brother. How many clams does Mia have left?"
FRIENDS = ("Michael has 20 TikTok friends. Dorothy has 5 more TikTok friends than Michael. How many TikTok "
           "friends does Michael have in all with Dorothy?")
EGGS = "A farmer collects 4 dozens of eggs. He sells 18 eggs. How many dozens of eggs does he have left?"


def test_renamed_people_objects_and_pronouns_bind_by_position_in_the_text() -> None:
    got = align("John picks 20 shrimps at the beach. He gives 7 shrimps to his brother. How many shrimps does John "
                "have left?", CLAMS)
    assert got.aligned, got.reason
    assert got.values == ["20", "7"]
    assert [(b.param, b.routed, b.question) for b in got.bindings] == [(0, "12", "20"), (1, "5", "7")]
    assert got.bindings[0].context == "Mia picks _ clams at"
    assert dict(got.renames) == {"Mia": "John", "clams": "shrimps", "She": "He"}
    assert 0.5 < got.kept < 1.0 and got.as_dict()["aligned"] is True


def test_statements_in_another_order_bind_what_they_say_not_where_they_are() -> None:
    routed = "Mia picks 12 clams at the beach. Tom buys 5 pears at the market. How many clams and pears are there?"
    got = align("Omar buys 7 plums at the market. Sara picks 20 shells at the beach. How many shells and plums are "
                "there?", routed)
    assert got.aligned, got.reason
    assert got.values == ["20", "7"] and got.sentence_order == (1, 0, 2)
    # two statements that speak of the same thing keep their order: one may act on what the other set up
    shared = "Tom has 3 bags. Tom puts 4 apples in each bag. Tom buys 2 bags. How many apples are in the bags?"
    assert "speak of" in align("Tom has 3 bags. Tom buys 2 bags. Tom puts 4 apples in each bag. How many apples are "
                               "in the bags?", shared).reason
    # an order word in the asked sentence, a title's full stop
    first = "Tom buys 5 apples. Mia picks 3 pears. How many fruits did the first person get?"
    assert not align("Mia picks 3 pears. Tom buys 5 apples. How many fruits did the first person get?", first).aligned
    lee = "Mr. Lee has 5 apples. Mrs. Lee has 3 apples. How many apples does Mr. Lee have?"
    assert not align("Mrs. Lee has 5 apples. Mr. Lee has 3 apples. How many apples does Mr. Lee have?", lee).aligned
    # statements that depend on their order are not reordered: a running total, a pronoun referring back
    steps = "Tom has 10 dollars. He spends 4 dollars. Tom doubles his money. How much money does Tom have now?"
    swapped = align("Tom has 10 dollars. Tom doubles his money. He spends 4 dollars. How much money does Tom have "
                    "now?", steps)
    assert not swapped.aligned and "another order" in swapped.reason
    assert not align("She gives 7 shrimps to her brother. Sarah picks 20 shrimps at the beach. How many shrimps "
                     "does Sarah have left?", CLAMS).aligned


def test_signed_decimal_and_fraction_numbers_are_slots() -> None:
    routed = "The temperature is 12 degrees. It drops by 5 degrees. What is the temperature now?"
    got = align("The temperature is -12 degrees. It drops by 2.5 degrees. What is the temperature now?", routed)
    assert got.aligned and got.values == ["-12", "2.5"]
    assert align("The temperature is 3/4 degrees. It drops by 1,200 degrees. What is the temperature now?",
                 routed).values == ["3/4", "1200"]


@pytest.mark.parametrize(("question", "failed_at", "why"), [
    # another person of the problem
    (FRIENDS.replace("friends does Michael have", "friends does Dorothy have"), "asked", "both"),
    # another object of the problem
    ("Mia picks 12 clams at the beach. She gives 5 clams to her brother. How many shells does Mia have left?",
     "asked", "both 'clams' and 'shells'"),
    # another unit: a word dropped, a unit renamed
    (EGGS.replace("How many dozens of eggs", "How many eggs"), "asked", "drops"),
    ("A farmer collects 4 dozens of eggs. He sells 18 eggs. How many cartons of eggs does he have left?", "asked",
     "must agree"),
    ("A car travels at 40 miles per hour for 3 hours. How many minutes does it travel?", "asked", "must agree"),
    # another step: the verb or the asked clause changes
    ("Mia picks 12 clams at the beach. She gives 5 clams to her brother. How many clams does Mia give away?",
     "asked", "must agree|drops|adds|not a rename"),
    ("Mia picks 12 clams at the beach. She sells 5 clams to her brother. How many clams does Mia have left?",
     "body", "must agree"),
    # the asked person is another one, by pronoun only
    ("Mia picks 12 clams at the beach. She gives 5 clams to her brother. How many clams does he have left?",
     "asked", "not a rename|must agree|pronoun"),
])
def test_near_misses_are_refused_with_their_reason(question: str, failed_at: str, why: str) -> None:
    routed = {"Michael": FRIENDS, "A farmer": EGGS, "A car": "A car travels at 40 miles per hour for 3 hours. How "
              "many miles does it travel?"}.get(" ".join(question.split()[:2]) if question.startswith("A ") else
                                                question.split()[0], CLAMS)
    got = align(question, routed)
    assert not got.aligned and got.failed_at == failed_at, got
    assert any(w in got.reason for w in why.split("|")), got.reason


def test_the_adversarial_review_cases_are_refused() -> None:
    # the operation's verb is part of what must agree
    assert not align("Tom has 9 apples. 4 apples were bought. How many apples are there now?",
                     "Tom has 9 apples. 4 apples were eaten. How many apples are there now?").aligned
    # two people renamed to one, and one person renamed in one place only
    two = "Ann has 5 pens. Bob has 3 pens. How many pens do Ann and Bob have?"
    assert not align("Cid has 6 pens. Cid has 4 pens. How many pens do Cid and Cid have?", two).aligned
    assert not align("Cid has 6 pens. Bob has 4 pens. How many pens do Ann and Bob have?", two).aligned
    # a swap of both names everywhere is the same problem
    assert align("Bob has 6 pens. Ann has 4 pens. How many pens do Bob and Ann have?", two).values == ["6", "4"]
    # a number word in place of a number, a number added or dropped
    assert not align("Tom has nine apples. He eats 4 apples. How many apples are left?",
                     "Tom has 9 apples. He eats 4 apples. How many apples are left?").aligned
    assert align("Tom has 9 apples. He eats 4 apples and 2 pears. How many apples are left?",
                 "Tom has 9 apples. He eats 4 apples. How many apples are left?").failed_at == "count"


def test_a_rename_the_rest_of_the_question_never_shows_is_refused() -> None:
    # "items" is asked only: "erasers" asks about something the problem does not have (the answer would be 0)
    got = align("Ann has 5 pens and 3 pencils. How many erasers does Ann have?",
                "Ann has 5 pens and 3 pencils. How many items does Ann have?")
    assert not got.aligned and got.failed_at == "asked" and "never does" in got.reason


def test_a_rename_needs_noun_use_on_both_sides() -> None:
    # "eats" -> "buys": neither is used as a noun anywhere, so it is a verb that must agree
    got = align("The boy buys 3 apples. How many apples does the boy have?",
                "The boy eats 3 apples. How many apples does the boy have?")
    assert not got.aligned and "must agree" in got.reason
    # an object used as a noun on both sides may be renamed
    assert align("The boy eats 3 pears. How many pears does the boy have?",
                 "The boy eats 3 apples. How many apples does the boy have?").aligned


@pytest.mark.parametrize("text", ["", "?", "...", "12", "é ü 12 ß?", "a" * 5000, "1/0 of 3.", "-" * 300 + "5",
                                  "How many? " * 40, "'s 's ' 5's"])
def test_odd_text_never_raises(text: str) -> None:
    got = align(text, CLAMS)
    assert not got.aligned and got.reason
    assert isinstance(align(CLAMS, text).reason, str)
    assert tokens_of(text) is not None


NAMES = ["Mia", "Sarah", "Lena", "Omar", "Ravi", "Kofi", "Yuki", "Ines"]
OBJECTS = ["clams", "shells", "pebbles", "crabs", "stones", "starfish"]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000))
def test_consistent_renames_always_align_and_any_asked_swap_never_does(seed: int) -> None:
    r = random.Random(seed)
    name, other = r.sample(NAMES, 2)
    obj = r.choice(OBJECTS)
    a, b = r.sample(range(2, 500), 2)
    question = (f"{name} picks {a} {obj} at the beach. {name} gives {b} {obj} to Ali. How many {obj} does "
                f"{name} have left?")
    routed = CLAMS.replace("She", "Mia").replace("her brother", "Ali")
    got = align(question, routed)
    assert got.aligned, (question, got.reason)
    assert got.values == [str(a), str(b)]
    # asking about the other person of the problem, or about one it never mentions
    for asked in ("Ali", other):
        near = question.rsplit(name, 1)[0] + asked + " have left?"
        assert not align(near, routed).aligned, near


def test_pronouns_follow_the_person_they_stand_for() -> None:
    routed = "Hana sold 33 cakes to her friends, and Chloe sold 22 cakes to her friends. How many cakes did they sell?"
    # two women renamed to a woman and a man: each pronoun follows its own person
    got = align("Sara sold 66 pies to her friends, and Mateo sold 21 pies to his friends. How many pies did they "
                "sell?", routed)
    assert got.aligned and got.values == ["66", "21"], got.reason
    # the asked person changed by a pronoun alone: the same referent with another gender
    two = "Mia has 5 pens. Tom has 3 more pens than Mia. How many pens does she have?"
    near = align("Mia has 5 pens. Tom has 3 more pens than Mia. How many pens does he have?", two)
    assert not near.aligned and near.failed_at == "asked" and "gender" in near.reason
    # a gender renamed with its person in the statements may show in the asked sentence only
    one = "Mia has 5 pens. She buys 3 pens. How many pens does she have?"
    assert align("Omar has 9 pens. He buys 4 pens. How many pens does he have?", one).values == ["9", "4"]
    assert align("Omar has 9 pens. Omar buys 4 pens. How many pens does he have?",
                 "Mia has 5 pens. Mia buys 3 pens. How many pens does she have?").aligned


def test_a_pronoun_that_now_stands_for_the_other_person_is_refused() -> None:
    routed = "Mia gave Tom 5 pens. He has 3 pens now. How many pens did Tom have before?"
    assert align("Sara gave Omar 7 pens. He has 2 pens now. How many pens did Omar have before?",
                 routed).values == ["7", "2"]
    for swapped in ("Sara gave Omar 7 pens. She has 2 pens now. How many pens did Omar have before?",
                    "Omar gave Sara 7 pens. He has 2 pens now. How many pens did Sara have before?"):
        got = align(swapped, routed)
        assert not got.aligned and "another person" in got.reason, got


def test_many_alike_sentences_end_in_a_refusal_not_a_search_without_end() -> None:
    names = ["Ann", "Bob", "Cid", "Dan", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jo"]
    alike = " ".join(f"{n} has {i + 2} pens." for i, n in enumerate(names))
    got = align(alike + " Kim buys 3 pies. How many pens?", alike + " Kim eats 3 pies. How many pens?")
    assert not got.aligned and "ways of pairing" in got.reason


@pytest.mark.parametrize(("routed", "question"), [
    # number words, multiples and ordinals carry quantities the program holds as constants
    ("John has 12 candies. He shares them equally with his two sisters. How many candies does each sister get?",
     "John has 12 candies. He shares them equally with his three sisters. How many candies does each sister get?"),
    ("Tom buys 5 twenty-dollar tickets. How many dollars does he spend?",
     "Tom buys 5 fifty-dollar tickets. How many dollars does he spend?"),
    ("Tom cuts 6 pies into quarters. How many quarters does he have?",
     "Tom cuts 6 pies into thirds. How many thirds does he have?"),
    # verbs after a number, after "each", after object "her"
    ("A store had 50 shirts. On Monday 20 sold and on Tuesday 10 arrived. How many shirts does the store have now?",
     "A store had 50 shirts. On Monday 20 arrived and on Tuesday 10 sold. How many shirts does the store have now?"),
    ("Her 5 students each borrow 2 pencils. How many pencils do they borrow?",
     "Her 5 students each return 2 pencils. How many pencils do they borrow?"),
    ("Tom made her eat 3 apples. How many apples are left of 9 apples?",
     "Tom made her buy 3 apples. How many apples are left of 9 apples?"),
    # comparatives and directions
    ("Mia's score is 5 higher than Tom's score of 80. What is Mia's score?",
     "Mia's score is 5 lower than Tom's score of 80. What is Mia's score?"),
    # a capitalized word that is no first name, geometry, units in other spellings, objects whose numbers are known
    ("Multiplying a number by 3 gives 12. What is the number?", "Dividing a number by 3 gives 12. What is the number?"),
    ("Tom saves 5 dollars every day in June. How many dollars does he save?",
     "Tom saves 5 dollars every day in February. How many dollars does he save?"),
    ("A circle has a radius of 5 meters. What is the area of the circle?",
     "A circle has a diameter of 5 meters. What is the area of the circle?"),
    ("A road is 5 metres long. How many centimetres long is it?",
     "A road is 5 kilometres long. How many centimetres long is it?"),
    # a common noun that names a person: the pronoun may now mean another one
    ("Tom has 5 apples. His sister has 3 apples. He eats 2 apples. How many apples does Tom have?",
     "Tom has 5 apples. His brother has 3 apples. He eats 2 apples. How many apples does Tom have?"),
    # the third review's: qualifiers after "the"/"a", a category asked about, a gender the question asks by,
    # a verb after a capitalized family name
    ("Tom sees a 20 dollar shirt and a 15 dollar hat. Tom buys the cheapest item. How many dollars does he pay?",
     "Tom sees a 20 dollar shirt and a 15 dollar hat. Tom buys the priciest item. How many dollars does he pay?"),
    # the seventh session's: a superlative or a word of price inside an object's name of several words picks
    # another thing ("the cheapest item" -> "the priciest thing", with or without a phrase that places it)
    ("Tom sees a 20 dollar shirt and a 15 dollar hat. Tom buys the cheapest item. How many dollars does he pay?",
     "Tom sees a 20 dollar shirt and a 15 dollar hat. Tom buys the priciest thing. How many dollars does he pay?"),
    ("Tom sees a 20 dollar shirt and a 15 dollar hat. Tom buys the cheapest item. How many dollars does he pay?",
     "Tom sees a 20 dollar shirt and a 15 dollar hat. Tom buys the priciest thing on the shelf. How many dollars "
     "does he pay?"),
    ("Tom sees a 20 dollar shirt and a 15 dollar hat. Tom buys the cheap item. How many dollars does he pay?",
     "Tom sees a 20 dollar shirt and a 15 dollar hat. Tom buys the expensive thing. How many dollars does he pay?"),
    # the seventh session's review (NOTE-review7): the object's own noun renamed inside a qualified name and kept
    # elsewhere; a word of degree picking one of several things by a general noun; a noun of money's direction
    # renamed; a name of unknown gender that the routed pronoun cannot stand for; "heavy"/"hot" as objects
    ("Lena has 20 goldfish in the big tank. She buys 8 goldfish for the pond. How many goldfish does Lena have?",
     "Lena has 20 guppies in the bowl. She buys 8 goldfish for the pond. How many goldfish does Lena have?"),
    ("Omar has 45 novels in the spare room. He buys 12 novels at the fair. How many novels does Omar have?",
     "Omar has 45 comics on the top shelf. He buys 12 novels at the fair. How many novels does Omar have?"),
    ("Ana drives a van at 40 miles an hour and Bo drives a truck at 60 miles an hour. The fast vehicle leaves at "
     "noon. How many miles does the fast vehicle go in 3 hours?",
     "Ana drives a van at 40 miles an hour and Bo drives a truck at 60 miles an hour. The slow vehicle leaves at "
     "noon. How many miles does the slow vehicle go in 3 hours?"),
    ("Mia has a jar with 40 candies and a tin with 25 candies. She eats 5 candies from the big container. How many "
     "candies are left in the big container?",
     "Mia has a jar with 40 candies and a tin with 25 candies. She eats 5 candies from the small container. How many "
     "candies are left in the small container?"),
    ("Ana can walk to school along a 3 mile road or a 4 mile trail. She takes the long route to school 5 days a week. "
     "How many miles does she walk to school in a week?",
     "Ana can walk to school along a 3 mile road or a 4 mile trail. She takes the short route to school 5 days a "
     "week. How many miles does she walk to school in a week?"),
    ("Tom has a son aged 12 and a daughter aged 8. He gives the big child $5 for each year of age. How many dollars "
     "does the big child get?",
     "Tom has a son aged 12 and a daughter aged 8. He gives the little child $5 for each year of age. How many "
     "dollars does the little child get?"),
    ("Ana has a car she bought 10 years ago for $8000 and a van she bought this year for $30000. She sells the old "
     "vehicle for 60% of its price. How many dollars does she get?",
     "Ana has a car she bought 10 years ago for $8000 and a van she bought this year for $30000. She sells the new "
     "vehicle for 60% of its price. How many dollars does she get?"),
    ("Ana's monthly salary is $3000, and Ana's bonus this month is $400. How many dollars does Ana receive this "
     "month?", "Ana's monthly salary is $3000, and Ana's deduction this month is $400. How many dollars does Ana "
     "receive this month?"),
    ("Ana's salary is $3000, and her bonus this month is $400. How many dollars does Ana receive this month?",
     "Ana's salary is $3000, and her deduction this month is $400. How many dollars does Ana receive this month?"),
    ("Emeka sold 30 pies to Mia, and she sold 20 more pies to her neighbors. How many pies did Emeka sell?",
     "Ana sold 30 pies to Mia, and she sold 20 more pies to her neighbors. How many pies did Ana sell?"),
    ("Tunde baked 30 pies for Mia. Then she baked 20 more pies. How many pies did Tunde bake?",
     "Ana baked 30 pies for Mia. Then she baked 20 more pies. How many pies did Ana bake?"),
    ("Tom sees a 50 kg crate and a 30 kg sack. Tom lifts the heavy load onto the truck 4 times. How many kg does Tom "
     "lift in all?", "Tom sees a 50 kg crate and a 30 kg sack. Tom lifts the light load onto the truck 4 times. How "
     "many kg does Tom lift in all?"),
    ("A cafe sells iced tea for $3 and cocoa for $4. Ana buys 5 hot drinks. How many dollars does she pay?",
     "A cafe sells iced tea for $3 and cocoa for $4. Ana buys 5 cold drinks. How many dollars does she pay?"),
    # the second review (NOTE-review7b): a compound name's changed word kept elsewhere in the text; a compound that
    # only "the" brings in (it may pick one of the things named before); ", where" tied to the last place; a person
    # noun before the pronoun; more nouns of money's direction; "a third grader" as a fraction
    ("Ana has 3 dogs and 2 cats. Each dog eats 2 cups of food a day and each cat eats 1 cup. She fills the dog bowl "
     "for 5 days. How many cups go into the dog bowl?",
     "Ana has 3 dogs and 2 cats. Each dog eats 2 cups of food a day and each cat eats 1 cup. She fills the cat bowl "
     "for 5 days. How many cups go into the cat bowl?"),
    ("A farm has 12 chickens and 8 ducks. Each bird eats 3 cups of feed a day. The farmer fills the chicken feeder "
     "every morning. How many cups go into the chicken feeder each day?",
     "A farm has 12 chickens and 8 ducks. Each bird eats 3 cups of feed a day. The farmer fills the duck feeder "
     "every morning. How many cups go into the duck feeder each day?"),
    ("Ana walks uphill at 2 miles per hour and downhill at 4 miles per hour. The uphill trail is 8 miles long. How "
     "many hours does Ana spend on the uphill trail?",
     "Ana walks uphill at 3 miles per hour and downhill at 6 miles per hour. The downhill trail is 12 miles long. How "
     "many hours does Ana spend on the downhill trail?"),
    ("Tom earns $15 an hour in summer and $10 an hour in winter. His summer job lasts 40 hours. How many dollars does "
     "his summer job pay?", "Tom earns $15 an hour in summer and $10 an hour in winter. His winter job lasts 40 "
     "hours. How many dollars does his winter job pay?"),
    ("Ana can walk to school along a 3 mile road or a 4 mile trail. She takes the scenic route to school 5 days a "
     "week. How many miles does she walk to school in a week?",
     "Ana can walk to school along a 3 mile road or a 4 mile trail. She takes the direct route to school 5 days a "
     "week. How many miles does she walk to school in a week?"),
    ("Tom and his 2 sisters visit the science museum and the aquarium, where each ticket costs $9. How many dollars "
     "do they spend on tickets?", "Tom and his 2 sisters visit the science museum and the aquarium. Each ticket "
     "costs $9. How many dollars do they spend on tickets?"),
    ("Emeka baked 30 cookies for the teacher. Then she baked 20 more cookies. How many cookies did Emeka bake?",
     "Ana baked 30 cookies for the teacher. Then she baked 20 more cookies. How many cookies did Ana bake?"),
    ("Ana pays $500 for a TV. Ana's rebate is $60. How many dollars does the TV cost Ana?",
     "Ana pays $500 for a TV. Ana's surcharge is $60. How many dollars does the TV cost Ana?"),
    # the third review (NOTE-review7c): a phrase that places a name dropped or added where another group of the
    # same things is counted without the noun ("and 8 more live in the barn", "30 others", "the other 25")
    ("Ana has 12 rabbits in the back shed, and 8 more live in the barn. Each rabbit in the back shed eats 2 carrots "
     "a day. How many carrots do the rabbits in the back shed eat in a day?",
     "Ana has 12 rabbits, and 8 more live in the barn. Each rabbit eats 2 carrots a day. How many carrots do the "
     "rabbits eat in a day?"),
    ("Ana has 12 rabbits, and 8 more live in the barn. Each rabbit eats 2 carrots a day. How many carrots do the "
     "rabbits eat in a day?",
     "Ana has 12 rabbits in the back shed, and 8 more live in the barn. Each rabbit in the back shed eats 2 carrots "
     "a day. How many carrots do the rabbits in the back shed eat in a day?"),
    ("A farm has 50 trees in the orchard and 30 others near the house. Each tree in the orchard gives 20 apples. How "
     "many apples do the trees in the orchard give?",
     "A farm has 50 trees and 30 others near the house. Each tree gives 20 apples. How many apples do the trees "
     "give?"),
    ("Ana keeps 12 rabbits in the back shed and 8 in the barn. Each rabbit in the back shed eats 2 carrots a day. "
     "How many carrots do the rabbits in the back shed eat in a day?",
     "Ana keeps 12 rabbits and 8 in the barn. Each rabbit eats 2 carrots a day. How many carrots do the rabbits eat "
     "in a day?"),
    ("There are 15 cars in the front lot and the other 25 are in the garage. Each car in the front lot pays $3 for "
     "parking. How many dollars do the cars in the front lot pay?",
     "There are 15 cars and the other 25 are in the garage. Each car pays $3 for parking. How many dollars do the "
     "cars pay?"),
    ("Tom gets a weekly allowance of 5 dollars. How many dollars does Tom get in 8 weeks?",
     "Tom gets a daily allowance of 5 dollars. How many dollars does Tom get in 8 weeks?"),
    ("Tom has 6 ripe apples and 4 rotten apples. How many apples can Tom eat?",
     "Tom has 6 rotten apples and 4 ripe apples. How many apples can Tom eat?"),
    ("Tom has 5 apples and 3 pears. How many fruits does Tom have?",
     "Tom has 5 apples and 3 carrots. How many fruits does Tom have?"),
    ("Tom has 5 apples. Mia has 3 apples. Sara has 2 apples. How many apples do the girls have?",
     "Emma has 5 apples. Mia has 3 apples. Sara has 2 apples. How many apples do the girls have?"),
    ("The Smiths consume 4 apples a day. How many apples do they eat in 3 days?",
     "The Smiths produce 4 apples a day. How many apples do they eat in 3 days?"),
])
def test_the_reviews_confident_wrong_bindings_are_refused(routed: str, question: str) -> None:
    got = align(question, routed)
    assert not got.aligned, got


def test_objects_renamed_where_the_program_has_constants_of_its_own_are_reported() -> None:
    got = align("A shop has 5 tricycles. How many tricycles are there in 3 shops?",
                "A shop has 5 bicycles. How many bicycles are there in 3 shops?")
    # the alignment itself holds (the words are slots); the program route refuses it when the program has a
    # constant of its own (workers/flywheel/transfer.py: by_program), which it reports as `objects_renamed`
    assert got.aligned and got.objects == ("bicycle",) and got.as_dict()["objects_renamed"] == ["bicycle"]


def test_the_issues_example_renamed_whole_aligns_and_its_near_miss_does_not() -> None:
    routed = ("Michael has 20 TikTok friends. Dorothy has 5 more TikTok friends than Michael. How many TikTok "
              "friends does Michael have?")
    got = align("James has 30 Instagram followers. Anna has 4 more Instagram followers than James. How many "
                "Instagram followers does James have?", routed)
    assert got.aligned and got.values == ["30", "4"] and 0.35 <= got.kept < 0.5
    near = align(routed.replace("friends does Michael", "friends does Dorothy"), routed)
    assert not near.aligned and near.failed_at == "asked"
