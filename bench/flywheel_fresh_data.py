"""The held-out varied flywheel set (`varied-fresh`): 19 word-problem families written fresh on 2026-12-04 for the
final measurement of issue 38, after the issue-38 rules had been chosen on `varied-dev` (and `varied-check` had been
looked at). Nobody tunes on it: it was written without running the flywheel, the router or `kvgraft bench flywheel`
on it and without reading the alignment's rules, and no family was changed after any result.

The families are in the style of GSM8K *train* problems (never the GSM8K test split, SVAMP or gsm_symbolic) and are
new situations with new wording, not edits of the 44 families of bench/flywheel_varied_data.py, whose format,
renderers and row roles they reuse (read that module's docstring for the template slots and the rows). Varied on
purpose: money by symbol and by word, rates, percentages, fractions written as words, time, comparisons ("three times
as many", "fewer than"), multi-step intermediate quantities, statements split or joined and clauses reordered
(`alt`), paraphrased questions, objects of one to four words ("bags of rice", "pairs of socks", "slices of cake"),
kinship and role nouns. The pools of people, kin nouns and currencies are the varied set's plus entries that set never
used (names from more cultures, among them ones no name list knows and a hyphenated one; role nouns such as
"roommate"; the won, naira and lira), so a list fitted to the development names cannot pass for a rule.

What differs from the varied rows: every family has near misses of all three kinds `entity`, `unit` and `step`, plus
one per slot kind it has (`person`, `kin`, `currency`, `object`); and besides the 3 `renamed` instances (every slot
renamed) each family has one `renamed` instance per slot kind with only that slot changed, the edits users make:
variant `edit_person` (the first person renamed to a name of another length, pronouns following), `edit_kin` (the kin
or role noun changed), `edit_currency` (symbol and word changed together), `edit_object` (the object renamed to one
of another number of words). Every row but `recurrence` has new numbers; the `transfer` variant `constants` keeps the
base words. No drawn number equals a number written in the template (the "5" of "5 school days").

    python -m bench.flywheel_fresh_data   # rewrites bench/data/flywheel-varied-fresh-{library,eval}.jsonl
"""

from __future__ import annotations

import contextlib
import io
import random
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.flywheel_gsm_data import _div
from bench.flywheel_varied_data import (
    CURRENCIES,
    KIN,
    NAMES,
    NO_ANSWER,
    PRONOUNS,
    RENAMED_PER_FAMILY,
    SUPPLIES,
    Family,
    R,
    _draw,
    _fill,
    _role,
    _words,
    render,
)

DATA_DIR = Path(__file__).parent / "data"
NAME = "varied-fresh"
SEED = 1204
SLOT_KINDS = ("person", "kin", "currency", "object")
REQUIRED_KINDS = ("entity", "unit", "step")

# the varied set's pools and entries it never used
FRESH_NAMES = NAMES + tuple((n, "f") for n in "Ngozi Saoirse Marisol Keiko Abebi Ximena Parisa Oksana Ana Yaa"
                             .split()) + tuple((n, "m") for n in "Wiremu Bao Ikaika Tadeusz Obinna Youssef Rahim "
                                               "Joaquin Bo Jean-Luc".split())
FRESH_KIN = KIN + ("roommate", "classmate", "stepfather", "godmother", "boss", "landlady")
FRESH_CURRENCIES = CURRENCIES + (("₩", "won"), ("₦", "naira"), ("₺", "lira"))


@dataclass(frozen=True)
class Pools:
    """The people, kin nouns and currencies a set draws from (another set may pass larger ones)."""
    names: tuple[tuple[str, str], ...]
    kin: tuple[str, ...]
    currencies: tuple[tuple[str, str], ...]


FRESH_POOLS = Pools(FRESH_NAMES, FRESH_KIN, FRESH_CURRENCIES)

SACKS = (("bag of rice", "bags of rice"), ("sack of flour", "sacks of flour"), ("bag of beans", "bags of beans"),
         ("sack of potatoes", "sacks of potatoes"), ("rice sack", "rice sacks"), ("sack", "sacks"),
         ("bag of lentils", "bags of lentils"))
GADGETS = (("laptop", "laptops"), ("sewing machine", "sewing machines"), ("bicycle", "bicycles"),
           ("electric scooter", "electric scooters"), ("phone", "phones"), ("gaming console", "gaming consoles"),
           ("washing machine", "washing machines"))
WORKPLACES = (("warehouse", "warehouses"), ("car wash", "car washes"), ("hardware store", "hardware stores"),
              ("garden center", "garden centers"), ("hotel", "hotels"), ("movie theater", "movie theaters"))
KIT = (("pair of socks", "pairs of socks"), ("water bottle", "water bottles"), ("headband", "headbands"),
       ("pair of gloves", "pairs of gloves"), ("towel", "towels"), ("pair of shin guards", "pairs of shin guards"),
       ("jersey", "jerseys"))
HOBBY = (("paint set", "paint sets"), ("skateboard", "skateboards"), ("sketchbook", "sketchbooks"),
         ("video game", "video games"), ("model airplane kit", "model airplane kits"),
         ("jigsaw puzzle", "jigsaw puzzles"), ("yo-yo", "yo-yos"))
ORCHARD = (("apple", "apples"), ("pear", "pears"), ("plum", "plums"), ("cherry", "cherries"),
           ("green apple", "green apples"), ("red plum", "red plums"), ("sour cherry", "sour cherries"),
           ("apricot", "apricots"))
SCHOOL = SUPPLIES + (("graphing calculator", "graphing calculators"), ("box of crayons", "boxes of crayons"),
                     ("backpack", "backpacks"), ("pencil case", "pencil cases"))
VEHICLES = (("van", "vans"), ("moving truck", "moving trucks"), ("pickup truck", "pickup trucks"),
            ("trailer", "trailers"), ("cargo van", "cargo vans"))
CLUBS = (("gym", "gyms"), ("swimming pool", "swimming pools"), ("climbing wall", "climbing walls"),
         ("yoga studio", "yoga studios"), ("tennis club", "tennis clubs"), ("dojo", "dojos"))
INSTRUMENTS = (("piano", "pianos"), ("violin", "violins"), ("bass guitar", "bass guitars"),
               ("steel drum", "steel drums"), ("flute", "flutes"), ("electric keyboard", "electric keyboards"))
FURNITURE = (("bookshelf", "bookshelves"), ("shoe rack", "shoe racks"), ("spice rack", "spice racks"),
             ("cabinet", "cabinets"), ("display case", "display cases"), ("cupboard", "cupboards"))
CAFE = (("croissant", "croissants"), ("bagel", "bagels"), ("iced coffee", "iced coffees"),
        ("cup of tea", "cups of tea"), ("fruit smoothie", "fruit smoothies"), ("slice of cake", "slices of cake"),
        ("hot chocolate", "hot chocolates"))
POULTRY = (("chicken", "chickens"), ("duck", "ducks"), ("goose", "geese"), ("turkey", "turkeys"),
           ("guinea fowl", "guinea fowl"), ("bantam hen", "bantam hens"))
FUNDRAISER = (("raffle ticket", "raffle tickets"), ("bag of popcorn", "bags of popcorn"), ("candle", "candles"),
              ("potted plant", "potted plants"), ("tote bag", "tote bags"), ("wristband", "wristbands"),
              ("jar of jam", "jars of jam"))
WASH = (("load", "loads"), ("load of towels", "loads of towels"), ("basket of clothes", "baskets of clothes"),
        ("load of bedding", "loads of bedding"), ("batch", "batches"))

FRESH_FAMILIES: tuple[Family, ...] = (
    Family("pantry_sacks", "{n1} buys {a} {os} for {his1} restaurant, and {his1} {k1} brings {b} more. Each of the "
           "{os} weighs {c} kilograms. The kitchen uses {d} kilograms a day. How many days will the {os} last?",
           "bought = {a}\nbrought = {b}\nweight = {c}\nper_day = {d}\nprint((bought + brought) * weight // per_day)",
           lambda a, b, c, d: _div((a + b) * c, d), {"a": R(4, 12), "b": R(2, 6), "c": R(5, 25, 5), "d": R(4, 15)},
           (("entity", "How many kilograms did {his1} {k1} bring?", lambda a, b, c, d: b * c),
            ("unit", "How many hours will the {os} last?", lambda a, b, c, d: _div((a + b) * c, d) * 24),
            ("step", "How many kilograms do the {os} weigh in all?", lambda a, b, c, d: (a + b) * c),
            ("person", "How many kilograms did {n2} bring?", lambda a, b, c, d: NO_ANSWER),
            ("kin", "How many kilograms did {his1} {xk} bring?", lambda a, b, c, d: NO_ANSWER),
            ("object", "How many days will the {xos} last?", lambda a, b, c, d: NO_ANSWER)),
           SACKS, alt="{n1} buys {a} {os} for {his1} restaurant. {His1} {k1} brings {b} more. Each of the {os} weighs "
           "{c} kilograms, and the kitchen uses {d} kilograms a day. How many days will the {os} last?",
           paraphrase="For how many days will the {os} be enough?"),
    Family("installments", "{n1} buys a {o} for {cs}{a} and a case for it for {cs}{b}. {He1} pays {cs}{c} up front and "
           "the rest in {d} equal monthly payments. How many {cw} is each monthly payment?",
           "item = {a}\ncase = {b}\nup_front = {c}\nmonths = {d}\nprint((item + case - up_front) // months)",
           lambda a, b, c, d: _div(a + b - c, d),
           {"a": R(300, 1200, 50), "b": R(20, 80, 10), "c": R(50, 250, 25), "d": R(3, 12)},
           (("entity", "How many more {cw} does the {o} cost than the case?", lambda a, b, c, d: a - b),
            ("unit", "How many {cw} is each weekly payment?", lambda a, b, c, d: NO_ANSWER),
            ("step", "How many {cw} does {n1} pay in monthly payments?", lambda a, b, c, d: a + b - c),
            ("person", "How many {cw} is each of {n2}'s monthly payments?", lambda a, b, c, d: NO_ANSWER),
            ("currency", "How many {xw} is each monthly payment?", lambda a, b, c, d: NO_ANSWER),
            ("object", "How many {cw} is each monthly payment for the {xo}?", lambda a, b, c, d: NO_ANSWER)),
           GADGETS, alt="{n1} pays {cs}{c} up front for a {o} that costs {cs}{a} and a case for it that costs {cs}{b}. "
           "{He1} pays the rest in {d} equal monthly payments. How many {cw} is each monthly payment?",
           alt_kind="reorder", paraphrase="How much is each of {n1}'s monthly payments, in {cw}?"),
    Family("pay_raise", "{n1} earns {cs}{a} an hour at the {o}. After a year {he1} gets a raise of {b}%. How many {cw} "
           "does {n1} now earn for one {c}-hour shift?",
           "wage = {a}\nraise_pct = {b}\nhours = {c}\nprint((wage + wage * raise_pct // 100) * hours)",
           lambda a, b, c: (a + _div(a * b, 100)) * c, {"a": R(10, 40), "b": R(5, 25, 5), "c": R(4, 9)},
           (("entity", "How many {cw} did {n1} earn for one {c}-hour shift before the raise?", lambda a, b, c: a * c),
            ("unit", "How many cents does {n1} now earn for one {c}-hour shift?",
             lambda a, b, c: (a + _div(a * b, 100)) * c * 100),
            ("step", "How many {cw} an hour does {n1} earn after the raise?", lambda a, b, c: a + _div(a * b, 100)),
            ("person", "How many {cw} does {n2} now earn for one {c}-hour shift?", lambda a, b, c: NO_ANSWER),
            ("currency", "How many {xw} does {n1} now earn for one {c}-hour shift?", lambda a, b, c: NO_ANSWER),
            ("object", "How many {cw} does {n1} now earn for one {c}-hour shift at the {xo}?",
             lambda a, b, c: NO_ANSWER)),
           WORKPLACES, paraphrase="What is {n1}'s pay now for one {c}-hour shift, in {cw}?"),
    Family("sunday_visit", "{n1} visits {his1} {k1} every Sunday. The train ride takes {a} minutes, {he1} waits {b} "
           "minutes for the train, and the walk from the station takes {c} minutes. {He1} makes the same trip home. "
           "How many minutes does {n1} spend on the trip each Sunday?",
           "ride = {a}\nwait = {b}\nwalk = {c}\nprint(2 * (ride + wait + walk))", lambda a, b, c: 2 * (a + b + c),
           {"a": R(30, 90, 5), "b": R(5, 20, 5), "c": R(5, 25, 5)},
           (("entity", "How many minutes does {n1} spend on the train each Sunday?", lambda a, b, c: 2 * a),
            ("unit", "How many hours does {n1} spend on the trip each Sunday?",
             lambda a, b, c: _div(2 * (a + b + c), 60)),
            ("step", "How many minutes does the trip to {his1} {k1} take?", lambda a, b, c: a + b + c),
            ("person", "How many minutes does {n2} spend on the trip each Sunday?", lambda a, b, c: NO_ANSWER),
            ("kin", "How many minutes does the trip to {his1} {xk} take?", lambda a, b, c: NO_ANSWER)),
           alt="{n1} visits {his1} {k1} every Sunday. The train ride takes {a} minutes. {He1} waits {b} minutes for "
           "the train. The walk from the station takes {c} minutes. {He1} makes the same trip home. How many minutes "
           "does {n1} spend on the trip each Sunday?"),
    Family("team_kit", "{n1} coaches a team of {c} players. {He1} wants one of the {os} for each player and {d} "
           "spares. The sports shop sells the {os} in packs of {a} for {b} {cw} a pack. How many {cw} does {n1} "
           "spend on the packs?",
           "per_pack = {a}\nprice = {b}\nplayers = {c}\nspares = {d}\nprint((players + spares) // per_pack * price)",
           lambda a, b, c, d: _div(c + d, a) * b, {"a": R(2, 6), "b": R(5, 30), "c": R(10, 24), "d": R(2, 6)},
           (("entity", "How many {os} does {n1} buy?", lambda a, b, c, d: c + d),
            ("unit", "How many cents does {n1} spend on the packs?", lambda a, b, c, d: _div(c + d, a) * b * 100),
            ("step", "How many packs does {n1} buy?", lambda a, b, c, d: _div(c + d, a)),
            ("person", "How many {cw} does {n2} spend on the packs?", lambda a, b, c, d: NO_ANSWER),
            ("currency", "How many {xw} does {n1} spend on the packs?", lambda a, b, c, d: NO_ANSWER),
            ("object", "How many {cw} does {n1} spend on packs of {xos}?", lambda a, b, c, d: NO_ANSWER)),
           KIT, alt="The sports shop sells the {os} in packs of {a} for {b} {cw} a pack. {n1} coaches a team of {c} "
           "players. {He1} wants one of the {os} for each player and {d} spares. How many {cw} does {n1} spend on the "
           "packs?", alt_kind="reorder", paraphrase="What does {n1} pay for the packs in all, in {cw}?"),
    Family("birthday_money", "{n1} got {cs}{a} from {his1} {k1} for {his1} birthday. {He1} spent a quarter of it on "
           "{os} and then two fifths of what was left on a {o2}. How many {cw} does {n1} have left?",
           "gift = {a}\nleft = gift - gift // 4\nprint(left - left * 2 // 5)",
           lambda a: a - _div(a, 4) - _div((a - _div(a, 4)) * 2, 5), {"a": R(40, 400, 20)},
           (("entity", "How many {cw} did the {o2} cost?", lambda a: _div((a - _div(a, 4)) * 2, 5)),
            ("unit", "How many cents does {n1} have left?", lambda a: (a - _div(a, 4) - _div((a - _div(a, 4)) * 2,
                                                                                             5)) * 100),
            ("step", "How many {cw} did {n1} spend on {os}?", lambda a: _div(a, 4)),
            ("person", "How many {cw} does {n2} have left?", lambda a: NO_ANSWER),
            ("kin", "How many {cw} did {n1} get from {his1} {xk}?", lambda a: NO_ANSWER),
            ("currency", "How many {xw} does {n1} have left?", lambda a: NO_ANSWER),
            ("object", "How many {cw} did {n1} spend on {xos}?", lambda a: NO_ANSWER)),
           HOBBY, alt="{n1} got {cs}{a} from {his1} {k1} for {his1} birthday, and {he1} spent a quarter of it on {os}. "
           "Then {he1} spent two fifths of what was left on a {o2}. How many {cw} does {n1} have left?",
           paraphrase="How much money does {n1} still have, in {cw}?"),
    Family("orchard_pick", "{n1} picked {a} {os} at the orchard. {n2} picked three times as many as {n1}, and {n2}'s "
           "{k1} picked {b} fewer than {n2}. How many {os} did the three of them pick?",
           "first = {a}\nfewer = {b}\nsecond = 3 * first\nprint(first + second + second - fewer)",
           lambda a, b: 7 * a - b, {"a": R(8, 40), "b": R(2, 15)},
           (("entity", "How many {os} did {n2}'s {k1} pick?", lambda a, b: 3 * a - b),
            ("unit", "How many kilograms of {os} did the three of them pick?", lambda a, b: NO_ANSWER),
            ("step", "How many {os} did {n1} and {n2} pick together?", lambda a, b: 4 * a),
            ("person", "How many {os} did {n2} pick?", lambda a, b: 3 * a),
            ("kin", "How many {os} did {n2}'s {xk} pick?", lambda a, b: NO_ANSWER),
            ("object", "How many {xos} did the three of them pick?", lambda a, b: NO_ANSWER)),
           ORCHARD, alt="{n1} picked {a} {os} at the orchard, {n2} picked three times as many as {n1}, and {n2}'s {k1} "
           "picked {b} fewer than {n2}. How many {os} did the three of them pick?",
           paraphrase="What is the total number of {os} the three of them picked?"),
    Family("laundromat", "At the laundromat, a washer costs {a} {cw} per {o} and a dryer costs {b} {cw} per {o}. {n1} "
           "washes {c} {os} for {his1} {k1} and dries all of them except {d}. How many {cw} does {n1} pay?",
           "wash = {a}\ndry = {b}\nloads = {c}\nair_dried = {d}\nprint(wash * loads + dry * (loads - air_dried))",
           lambda a, b, c, d: a * c + b * (c - d), {"a": R(3, 7), "b": R(2, 5), "c": R(4, 10), "d": R(1, 3)},
           (("entity", "How many {cw} does {n1} pay for the dryer?", lambda a, b, c, d: b * (c - d)),
            ("unit", "How many {cw} does {n1} pay per hour?", lambda a, b, c, d: NO_ANSWER),
            ("step", "How many {os} does {n1} dry?", lambda a, b, c, d: c - d),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c, d: NO_ANSWER),
            ("kin", "How many {cw} does {n1} pay for {his1} {xk}?", lambda a, b, c, d: NO_ANSWER),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b, c, d: NO_ANSWER),
            ("object", "How many {cw} does {n1} pay for the {xos}?", lambda a, b, c, d: NO_ANSWER)),
           WASH, alt="At the laundromat, a washer costs {a} {cw} per {o}. A dryer costs {b} {cw} per {o}. {n1} washes "
           "{c} {os} for {his1} {k1} and dries all of them except {d}. How many {cw} does {n1} pay?",
           paraphrase="What does {n1} pay altogether, in {cw}?"),
    Family("race_training", "{n1} is training for a race. In the first week {he1} runs {a} kilometers a day on {b} "
           "days. Each week after that, {he1} runs {c} kilometers more per day than the week before, still on {b} "
           "days. How many kilometers does {n1} run in the third week?",
           "first = {a}\ndays = {b}\nmore = {c}\nprint((first + 2 * more) * days)", lambda a, b, c: (a + 2 * c) * b,
           {"a": R(2, 8), "b": R(3, 6), "c": R(2, 4)},
           (("entity", "How many kilometers does {n1} run in the first week?", lambda a, b, c: a * b),
            ("unit", "How many meters does {n1} run in the third week?", lambda a, b, c: (a + 2 * c) * b * 1000),
            ("step", "How many kilometers does {n1} run each day in the third week?", lambda a, b, c: a + 2 * c),
            ("person", "How many kilometers does {n2} run in the third week?", lambda a, b, c: NO_ANSWER)),
           alt="{n1} is training for a race, and in the first week {he1} runs {a} kilometers a day on {b} days. Each "
           "week after that, {he1} runs {c} kilometers more per day than the week before, still on {b} days. How many "
           "kilometers does {n1} run in the third week?",
           paraphrase="How far does {n1} run in the third week, in kilometers?"),
    Family("sales_tax", "{n1} buys {a} {os} at {cs}{b} each for {his1} {k1}. A sales tax of {c}% is added to the "
           "total. How many {cw} does {n1} pay?",
           "count = {a}\nprice = {b}\ntax = {c}\ncost = count * price\nprint(cost + cost * tax // 100)",
           lambda a, b, c: a * b + _div(a * b * c, 100), {"a": R(2, 10), "b": R(4, 30), "c": R(5, 20, 5)},
           (("entity", "How many {cw} does {n1} pay before tax?", lambda a, b, c: a * b),
            ("unit", "How many cents does {n1} pay?", lambda a, b, c: (a * b + _div(a * b * c, 100)) * 100),
            ("step", "How many {cw} is the tax?", lambda a, b, c: _div(a * b * c, 100)),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c: NO_ANSWER),
            ("kin", "How many {cw} does {n1} pay for {his1} {xk}?", lambda a, b, c: NO_ANSWER),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b, c: NO_ANSWER),
            ("object", "How many {cw} does {n1} pay for the {xos}?", lambda a, b, c: NO_ANSWER)),
           SCHOOL, alt="For {his1} {k1}, {n1} buys {a} {os} at {cs}{b} each. A sales tax of {c}% is added to the "
           "total. How many {cw} does {n1} pay?", alt_kind="reorder",
           paraphrase="What is the total {n1} pays, tax included, in {cw}?"),
    Family("moving_rental", "{n1} rents a {o} for {a} days to move to a new apartment. The {o} costs {cs}{b} a day. "
           "Fuel costs {cs}{c} in all, and {his1} {k1} pays {cs}{d} toward the cost. How many {cw} does {n1} pay?",
           "days = {a}\ndaily = {b}\nfuel = {c}\nshared = {d}\nprint(days * daily + fuel - shared)",
           lambda a, b, c, d: a * b + c - d, {"a": R(2, 7), "b": R(30, 90, 5), "c": R(20, 80, 5), "d": R(20, 100, 10)},
           (("entity", "How many {cw} does the {o} cost for the days, without fuel?", lambda a, b, c, d: a * b),
            ("unit", "How many {cw} does the {o} cost per hour?", lambda a, b, c, d: NO_ANSWER),
            ("step", "How many {cw} does the move cost in all?", lambda a, b, c, d: a * b + c),
            ("person", "How many {cw} does {n2} pay?", lambda a, b, c, d: NO_ANSWER),
            ("kin", "How many {cw} does {his1} {xk} pay?", lambda a, b, c, d: NO_ANSWER),
            ("currency", "How many {xw} does {n1} pay?", lambda a, b, c, d: NO_ANSWER),
            ("object", "How many {cw} does the {xo} cost in all?", lambda a, b, c, d: NO_ANSWER)),
           VEHICLES, alt="{n1} rents a {o} for {a} days to move to a new apartment, and the {o} costs {cs}{b} a day. "
           "Fuel costs {cs}{c} in all. {His1} {k1} pays {cs}{d} toward the cost. How many {cw} does {n1} pay?",
           paraphrase="How much does {n1} pay, in {cw}?"),
    Family("paint_cans", "{n1} is painting {a} walls in {his1} {k1}'s house. Each wall is {b} square meters. One can "
           "of paint covers {c} square meters. Each can costs {d} {cw}. How many {cw} does {n1} spend on paint?",
           "walls = {a}\narea = {b}\ncovers = {c}\nprice = {d}\nprint(walls * area // covers * price)",
           lambda a, b, c, d: _div(a * b, c) * d, {"a": R(2, 8), "b": R(6, 20), "c": R(8, 24, 4), "d": R(12, 40)},
           (("entity", "How many square meters of wall does {n1} paint?", lambda a, b, c, d: a * b),
            ("unit", "How many cents does {n1} spend on paint?", lambda a, b, c, d: _div(a * b, c) * d * 100),
            ("step", "How many cans of paint does {n1} need?", lambda a, b, c, d: _div(a * b, c)),
            ("person", "How many {cw} does {n2} spend on paint?", lambda a, b, c, d: NO_ANSWER),
            ("kin", "How many {cw} does {n1} spend on paint for {his1} {xk}'s house?", lambda a, b, c, d: NO_ANSWER),
            ("currency", "How many {xw} does {n1} spend on paint?", lambda a, b, c, d: NO_ANSWER)),
           alt="{n1} is painting {a} walls in {his1} {k1}'s house, and each wall is {b} square meters. One can of "
           "paint covers {c} square meters, and each can costs {d} {cw}. How many {cw} does {n1} spend on paint?"),
    Family("membership", "A {o} charges {cs}{a} a month, or {cs}{b} for a whole year paid at once. {n1} and {his1} "
           "{k1} both join. {n1} pays every month, and {his1} {k1} pays for the year at once. How many more {cw} does "
           "{n1} pay in a year than {his1} {k1}?", "monthly = {a}\nyearly = {b}\nprint(12 * monthly - yearly)",
           lambda a, b: 12 * a - b, {"a": R(20, 60, 5), "b": R(150, 500, 10)},
           (("entity", "How many {cw} does {n1} pay in a year?", lambda a, b: 12 * a),
            ("unit", "How many more {cw} does {n1} pay in a week than {his1} {k1}?", lambda a, b: NO_ANSWER),
            ("step", "How many {cw} do they pay together in a year?", lambda a, b: 12 * a + b),
            ("person", "How many more {cw} does {n2} pay in a year than {his1} {k1}?", lambda a, b: NO_ANSWER),
            ("kin", "How many more {cw} does {n1} pay in a year than {his1} {xk}?", lambda a, b: NO_ANSWER),
            ("currency", "How many more {xw} does {n1} pay in a year than {his1} {k1}?", lambda a, b: NO_ANSWER),
            ("object", "How many more {cw} does {n1} pay in a year at the {xo} than {his1} {k1}?",
             lambda a, b: NO_ANSWER)),
           CLUBS, alt="A {o} charges {cs}{a} a month, or {cs}{b} for a whole year paid at once. {n1} and {his1} {k1} "
           "both join, and {n1} pays every month. {His1} {k1} pays for the year at once. How many more {cw} does {n1} "
           "pay in a year than {his1} {k1}?",
           paraphrase="How much more does {n1} pay in a year than {his1} {k1}, in {cw}?"),
    Family("practice_hours", "{n1} spends {a} minutes on math homework and {b} minutes on {his1} science project each "
           "school day. On Saturday {he1} spends {c} minutes practicing the {o}. How many hours does {n1} spend on "
           "these in a week of 5 school days?",
           "math = {a}\nscience = {b}\nsaturday = {c}\nprint((5 * (math + science) + saturday) // 60)",
           lambda a, b, c: _div(5 * (a + b) + c, 60), {"a": R(20, 60, 5), "b": R(10, 45, 5), "c": R(30, 120, 15)},
           (("entity", "How many minutes does {n1} spend on math homework in a week of 5 school days?",
             lambda a, b, c: 5 * a),
            ("unit", "How many minutes does {n1} spend on these in a week of 5 school days?",
             lambda a, b, c: 5 * (a + b) + c),
            ("step", "How many minutes does {n1} spend on homework each school day?", lambda a, b, c: a + b),
            ("person", "How many hours does {n2} spend on these in a week of 5 school days?",
             lambda a, b, c: NO_ANSWER),
            ("object", "How many minutes does {n1} spend practicing the {xo}?", lambda a, b, c: NO_ANSWER)),
           INSTRUMENTS, paraphrase="In a week of 5 school days, how many hours does {n1} spend on these?"),
    Family("play_tickets", "{n1}'s drama club sold {a} tickets to its play on Friday. On Saturday it sold twice as "
           "many tickets as on Friday, and on Sunday it sold {b} fewer than on Saturday. Each ticket costs {c} {cw}. "
           "How many {cw} did the club make over the three days?",
           "friday = {a}\nfewer = {b}\nprice = {c}\nsaturday = 2 * friday\n"
           "print((friday + saturday + saturday - fewer) * price)",
           lambda a, b, c: (5 * a - b) * c, {"a": R(20, 80), "b": R(3, 18), "c": R(4, 15)},
           (("entity", "How many {cw} did the club make on Saturday?", lambda a, b, c: 2 * a * c),
            ("unit", "How many cents did the club make over the three days?", lambda a, b, c: (5 * a - b) * c * 100),
            ("step", "How many tickets did the club sell over the three days?", lambda a, b, c: 5 * a - b),
            ("person", "How many {cw} did {n2}'s drama club make over the three days?", lambda a, b, c: NO_ANSWER),
            ("currency", "How many {xw} did the club make over the three days?", lambda a, b, c: NO_ANSWER)),
           alt="{n1}'s drama club sold {a} tickets to its play on Friday. On Saturday it sold twice as many tickets as "
           "on Friday. On Sunday it sold {b} fewer than on Saturday. Each ticket costs {c} {cw}. How many {cw} did the "
           "club make over the three days?",
           paraphrase="How much money did the club take in over the three days, in {cw}?"),
    Family("shelf_screws", "{n1} builds {a} {os} for {his1} {k1}'s shop. Each {o} has {b} shelves, and each shelf "
           "needs {c} screws. Screws come in boxes of {d}. How many boxes of screws does {n1} need?",
           "units = {a}\nshelves = {b}\nscrews = {c}\nper_box = {d}\nprint(units * shelves * screws // per_box)",
           lambda a, b, c, d: _div(a * b * c, d),
           {"a": R(2, 6), "b": R(3, 6), "c": R(4, 12, 2), "d": R(20, 50, 10)},
           (("entity", "How many boxes of nails does {n1} need?", lambda a, b, c, d: NO_ANSWER),
            ("unit", "How many screws does {n1} need?", lambda a, b, c, d: a * b * c),
            ("step", "How many shelves does {n1} make?", lambda a, b, c, d: a * b),
            ("person", "How many boxes of screws does {n2} need?", lambda a, b, c, d: NO_ANSWER),
            ("kin", "How many boxes of screws does {n1} need for {his1} {xk}'s shop?", lambda a, b, c, d: NO_ANSWER),
            ("object", "How many boxes of screws does {n1} need for the {xos}?", lambda a, b, c, d: NO_ANSWER)),
           FURNITURE, alt="Screws come in boxes of {d}. {n1} builds {a} {os} for {his1} {k1}'s shop. Each {o} has {b} "
           "shelves, and each shelf needs {c} screws. How many boxes of screws does {n1} need?", alt_kind="reorder"),
    Family("cafe_change", "{n1} orders {a} {os} at {cs}{c} each and a {o2} for {cs}{d} at a cafe. {He1} pays with a "
           "{cs}{b} note. How much change, in {cw}, does {n1} get?",
           "count = {a}\nnote = {b}\nprice = {c}\nother = {d}\nprint(note - count * price - other)",
           lambda a, b, c, d: b - a * c - d, {"a": R(2, 6), "b": R(50, 100, 50), "c": R(3, 9), "d": R(4, 15)},
           (("entity", "How many {cw} do the {os} cost?", lambda a, b, c, d: a * c),
            ("unit", "How much change, in cents, does {n1} get?", lambda a, b, c, d: (b - a * c - d) * 100),
            ("step", "How many {cw} does {n1} spend?", lambda a, b, c, d: a * c + d),
            ("person", "How much change, in {cw}, does {n2} get?", lambda a, b, c, d: NO_ANSWER),
            ("currency", "How much change, in {xw}, does {n1} get?", lambda a, b, c, d: NO_ANSWER),
            ("object", "How many {cw} does the {xo} cost?", lambda a, b, c, d: NO_ANSWER)),
           CAFE, paraphrase="How many {cw} does {n1} get back?"),
    Family("farm_legs", "{n1}'s {k1} keeps {a} {os} and {b} goats on a small farm. {n1} takes {c} of the goats to the "
           "market and sells them. How many legs do the animals left on the farm have in all?",
           "birds = {a}\ngoats = {b}\nsold = {c}\nprint(2 * birds + 4 * (goats - sold))",
           lambda a, b, c: 2 * a + 4 * (b - c), {"a": R(6, 30), "b": R(5, 20), "c": R(2, 5)},
           (("entity", "How many legs do the goats left on the farm have?", lambda a, b, c: 4 * (b - c)),
            ("unit", "How many pairs of legs do the animals left on the farm have in all?",
             lambda a, b, c: a + 2 * (b - c)),
            ("step", "How many goats are left on the farm?", lambda a, b, c: b - c),
            ("person", "How many legs do the animals on {n2}'s farm have in all?", lambda a, b, c: NO_ANSWER),
            ("kin", "How many legs do the animals on {n1}'s {xk}'s farm have in all?", lambda a, b, c: NO_ANSWER),
            ("object", "How many legs do the {xos} have?", lambda a, b, c: NO_ANSWER)),
           POULTRY, alt="On a small farm, {n1}'s {k1} keeps {a} {os} and {b} goats. {n1} takes {c} of the goats to the "
           "market and sells them. How many legs do the animals left on the farm have in all?", alt_kind="reorder",
           paraphrase="In all, how many legs are on the farm now?"),
    Family("fundraiser", "{n1}'s class wants to raise {cs}{a} for a trip by selling {os} at {cs}{b} each. The students "
           "have sold {c} so far. {n1}'s {k1} buys {d} more. How many more {os} must the class sell to reach the goal?",
           "goal = {a}\nprice = {b}\nsold = {c}\nbought = {d}\nprint(goal // price - sold - bought)",
           lambda a, b, c, d: _div(a, b) - c - d,
           {"a": R(200, 800, 50), "b": R(2, 10), "c": R(10, 60), "d": R(3, 9)},
           (("entity", "How many {os} must the class sell in all to reach the goal?", lambda a, b, c, d: _div(a, b)),
            ("unit", "How many more {cw} must the class raise to reach the goal?",
             lambda a, b, c, d: a - b * (c + d)),
            ("step", "How many {cw} has the class raised so far?", lambda a, b, c, d: b * (c + d)),
            ("person", "How many more {os} must {n2}'s class sell to reach the goal?", lambda a, b, c, d: NO_ANSWER),
            ("kin", "How many {os} does {n1}'s {xk} buy?", lambda a, b, c, d: NO_ANSWER),
            ("currency", "How many more {xw} must the class raise to reach the goal?", lambda a, b, c, d: NO_ANSWER),
            ("object", "How many more {xos} must the class sell to reach the goal?", lambda a, b, c, d: NO_ANSWER)),
           FUNDRAISER, alt="{n1}'s class wants to raise {cs}{a} for a trip by selling {os} at {cs}{b} each, and the "
           "students have sold {c} so far. {n1}'s {k1} buys {d} more. How many more {os} must the class sell to reach "
           "the goal?", paraphrase="How many {os} does the class still need to sell to reach the goal?"),
)


@dataclass(frozen=True)
class Instance:
    """One written row with what made it: the family, the template it was rendered from, its numbers and words."""
    family: Family
    kind: str  # "library" or "eval"
    row: dict[str, Any]
    template: str
    numbers: dict[str, int]
    words: dict[str, str]


PRONOUN_SLOTS = frozenset(f"{p}{n}" for p in ("he", "his", "him", "He", "His", "Him") for n in "12")


def _placeholders(template: str) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", template))


def literal_numbers(template: str) -> frozenset[int]:
    """Numbers written into a template itself (outside its `{..}` slots)."""
    return frozenset(int(n) for n in re.findall(r"\d+", re.sub(r"\{\w+\}", " ", template)))


def slot_kinds(family: Family) -> tuple[str, ...]:
    """The slot kinds the family's text uses: person, kin, currency, object."""
    used = _placeholders(family.text)
    present = {"person": "n1" in used, "kin": "k1" in used, "currency": bool({"cs", "cw"} & used),
               "object": bool({"o", "os"} & used)}
    return tuple(k for k in SLOT_KINDS if present[k])


def _templates(family: Family) -> list[str]:
    return [family.text, *([family.alt] if family.alt else []),
            *([family.with_question(family.paraphrase)] if family.paraphrase else []),
            *(family.with_question(q) for _, q, _ in family.misses)]


def _draw_fresh(family: Family, r: random.Random) -> dict[str, int]:
    """The varied set's draw (distinct numbers, whole positive answers, near misses unlike the answer), drawn again
    while a number equals one the template writes itself."""
    written = frozenset().union(*(literal_numbers(t) for t in _templates(family)))
    for _ in range(1000):
        numbers = _draw(family, r)
        if not set(numbers.values()) & written:
            return numbers
    raise RuntimeError(f"{family.name}: no numbers unlike the written ones")  # pragma: no cover


def _pick(r: random.Random, family: Family, exclude: frozenset[str] = frozenset(),
          pools: Pools = FRESH_POOLS) -> dict[str, str]:
    return _words(family, r, exclude, names=pools.names, kin=pools.kin, currencies=pools.currencies)


def _edit(kind: str, words: dict[str, str], family: Family, r: random.Random,
          pools: Pools = FRESH_POOLS) -> dict[str, str]:
    """The base words with one slot changed as users change it."""
    new = dict(words)
    if kind == "person":  # a first name of another length; its pronouns follow
        name, gender = r.choice([p for p in pools.names if len(p[0]) != len(words["n1"])
                                 and p[0] not in (words["n1"], words["n2"])])
        new["n1"] = name
        for key, word in zip(("he", "his", "him"), PRONOUNS[gender], strict=True):
            new[key + "1"], new[key.capitalize() + "1"] = word, word.capitalize()
    elif kind == "kin":
        new["k1"] = r.choice([k for k in pools.kin if k != words["k1"]])
    elif kind == "currency":  # symbol and word together
        new["cs"], new["cw"] = r.choice([c for c in pools.currencies if c[1] != words["cw"]])
        new["xw"] = r.choice([c[1] for c in pools.currencies if c[1] != new["cw"]])
    else:  # an object of another number of words
        new["o"], new["os"] = r.choice([o for o in family.objects if len(o[0].split()) != len(words["o"].split())
                                        and o[0] not in (words["o2"], words["xo"])])
    return new


def family_instances(family: Family, r: random.Random, pools: Pools = FRESH_POOLS) -> Iterator[Instance]:
    """The rows of bench/flywheel_varied_data.family_rows, plus one `renamed` row per slot kind with only that slot
    changed; near misses last."""
    fam = family.name
    base, words = _draw_fresh(family, r), _pick(r, family, pools=pools)
    base_answer = family.answer(**base)
    used = {k: v for k, v in base.items() if "{" + k + "}" in family.program}
    yield Instance(family, "library", {"id": f"{fam}-base", "family": fam, "question": _fill(family.text, base, words),
                                       "answer": base_answer, "solution": family.program.format(**used)},
                   family.text, base, words)
    yield Instance(family, "eval", {"id": f"{fam}-recurrence", "family": fam, "role": "recurrence",
                                    "question": _fill(family.text, base, words), "answer": base_answer},
                   family.text, base, words)
    exclude = frozenset(words[k] for k in ("n1", "n2", "k1", "cw", "o", "o2"))

    def other() -> dict[str, int]:
        for _ in range(1000):
            numbers = _draw_fresh(family, r)
            if family.answer(**numbers) != base_answer and not set(base.values()) <= set(numbers.values()):
                return numbers
        raise RuntimeError(fam)  # pragma: no cover

    variants: list[tuple[str, str, str | None, str, dict[str, str] | None]] = [
        (f"{fam}-renamed-{i}", "renamed", None, family.text, None) for i in range(1, RENAMED_PER_FAMILY + 1)]
    variants += [(f"{fam}-edit-{kind}", "renamed", f"edit_{kind}", family.text, _edit(kind, words, family, r, pools))
                 for kind in slot_kinds(family)]
    variants.append((f"{fam}-transfer-1", "transfer", "constants", family.text, words))
    if family.alt is not None:
        variants.append((f"{fam}-{family.alt_kind}", "reordered", family.alt_kind, family.alt, None))
    if family.paraphrase is not None:
        variants.append((f"{fam}-paraphrase", "transfer", "paraphrase", family.with_question(family.paraphrase),
                         None))
    for row_id, role, variant, template, fixed in variants:
        numbers = other()
        new_words = fixed if fixed is not None else _pick(r, family, exclude, pools)
        yield Instance(family, "eval", {"id": row_id, "family": fam, "role": role,
                                        **({"variant": variant} if variant else {}),
                                        "question": _fill(template, numbers, new_words),
                                        "answer": family.answer(**numbers)}, template, numbers, new_words)
    numbers, new_words = other(), _pick(r, family, exclude, pools)
    for kind, question, fn in family.misses:
        answer = fn(**numbers)
        assert answer != family.answer(**numbers), (fam, kind)
        template = family.with_question(question)
        yield Instance(family, "eval", {"id": f"{fam}-near-miss-{kind}", "family": fam, "role": _role(kind),
                                        "variant": kind, "question": _fill(template, numbers, new_words),
                                        "answer": answer}, template, numbers, new_words)


def instances() -> list[Instance]:
    r = random.Random(SEED)
    return [i for family in FRESH_FAMILIES for i in family_instances(family, r)]


def build() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    every = instances()
    return [i.row for i in every if i.kind == "library"], [i.row for i in every if i.kind == "eval"]


def paths() -> tuple[Path, Path]:
    return DATA_DIR / f"flywheel-{NAME}-library.jsonl", DATA_DIR / f"flywheel-{NAME}-eval.jsonl"


def run_program(program: str) -> str:
    """What a reference program prints (the programs are this module's own, numbers only)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(program, {})  # noqa: S102
    return out.getvalue().strip()


def _program_for(family: Family, numbers: dict[str, int]) -> str:
    return family.program.format(**{k: v for k, v in numbers.items() if "{" + k + "}" in family.program})


def problems(every: list[Instance] | None = None, draws: int = 40,
             families: tuple[Family, ...] | None = None) -> list[str]:
    """Every way the set breaks its own rules, empty when it is sound: the near-miss kinds a family needs, slot words
    the text does not have, templates that leave braces, numbers that repeat or equal a written one, reference
    programs that do not print the answer (on every row that is not a near miss and on `draws` more draws)."""
    found: list[str] = []
    every = instances() if every is None else every
    families = FRESH_FAMILIES if families is None else families
    ids = [i.row["id"] for i in every]
    found += [f"duplicate id {x}" for x in sorted({x for x in ids if ids.count(x) > 1})]
    r = random.Random(0)
    for family in families:
        kinds = [k for k, _, _ in family.misses]
        want = set(REQUIRED_KINDS) | set(slot_kinds(family))
        if set(kinds) != want or len(kinds) != len(set(kinds)):
            found.append(f"{family.name}: near-miss kinds {sorted(kinds)}, want {sorted(want)}")
        text_slots = _placeholders(family.text)
        if not _placeholders(family.program) <= text_slots:
            found.append(f"{family.name}: the program uses numbers the text does not have")
        if family.alt is not None and _placeholders(family.alt) - PRONOUN_SLOTS != text_slots - PRONOUN_SLOTS:
            found.append(f"{family.name}: alt has other slots than the text")
        if family.paraphrase is not None and not _placeholders(family.paraphrase) <= text_slots:
            found.append(f"{family.name}: the paraphrase names what the text does not")
        if "object" in slot_kinds(family) and len({len(o.split()) for o, _ in family.objects}) < 2:
            found.append(f"{family.name}: objects of one word count only (no edit_object possible)")
        for _ in range(draws):
            numbers = _draw_fresh(family, r)
            if run_program(_program_for(family, numbers)) != str(family.answer(**numbers)):
                found.append(f"{family.name}: program != answer for {numbers}")
    base_words = {i.family.name: i.words for i in every if i.kind == "library"}
    for inst in every:
        row, rid = inst.row, inst.row["id"]
        variant = str(row.get("variant", ""))
        if variant.startswith("edit_"):
            found += [f"{rid}: {p}" for p in edit_problems(variant.removeprefix("edit_"), base_words[row["family"]],
                                                           inst.words)]
        if "{" in row["question"] or "}" in row["question"]:
            found.append(f"{rid}: braces left in the question")
        values = list(inst.numbers.values())
        if len(set(values)) != len(values):
            found.append(f"{rid}: numbers repeat")
        if set(values) & literal_numbers(inst.template):
            found.append(f"{rid}: a drawn number equals a written one")
        if not row.get("role", "").startswith("near_miss"):
            if run_program(_program_for(inst.family, inst.numbers)) != str(row["answer"]):
                found.append(f"{rid}: program != answer")
            if "solution" in row and run_program(row["solution"]) != str(row["answer"]):
                found.append(f"{rid}: solution != answer")
    return found


EDITED_KEYS = {"person": ("n1", "he1", "his1", "him1", "He1", "His1", "Him1"), "kin": ("k1",),
               "currency": ("cs", "cw", "xw"), "object": ("o", "os")}


def edit_problems(kind: str, before: dict[str, str], after: dict[str, str]) -> list[str]:
    """How an `edit_<kind>` row's words fail to be the base words with that one slot changed as users change it."""
    found = [f"{key} changed" for key in before if key not in EDITED_KEYS[kind] and before[key] != after[key]]
    if kind == "person" and len(before["n1"]) == len(after["n1"]):
        found.append("the new name has the old one's length")
    if kind == "kin" and before["k1"] == after["k1"]:
        found.append("the kin noun is unchanged")
    if kind == "currency" and (before["cs"] == after["cs"] or before["cw"] == after["cw"]):
        found.append("the currency symbol or word is unchanged")
    if kind == "object" and len(before["o"].split()) == len(after["o"].split()):
        found.append("the new object has the old one's number of words")
    return found


def main() -> None:
    every = instances()
    broken = problems(every)
    if broken:
        raise SystemExit("\n".join(broken))
    library = [i.row for i in every if i.kind == "library"]
    evaluation = [i.row for i in every if i.kind == "eval"]
    library_path, eval_path = paths()
    library_path.write_text(render(library), encoding="utf-8")
    eval_path.write_text(render(evaluation), encoding="utf-8")
    print(f"{NAME}: {len(library)} library problems, {len(evaluation)} eval questions", file=sys.stderr)


if __name__ == "__main__":
    main()
