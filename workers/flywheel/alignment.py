"""Slot alignment of a new question with a routed problem: which number of the question fills which parameter of
the routed problem's program, and whether the question asks for the same quantity.

Both texts are split into tokens (numbers, words, a possessive 's, punctuation) and sentences. A question aligns
with a routed problem when its sentences can be paired one to one with the routed problem's (the asked sentence
with the asked sentence, the statements in any order) so that, within every pair, the tokens agree except for
slots that change together and consistently:

- numbers: any number may replace any number (signed, decimal, a fraction a/b); the routed problem's number at a
  position binds the parameter of that number to the question's number at the aligned position;
- people's names: a capitalized word for a capitalized word;
- object nouns: a word for a word where both are nouns by their use in their own text (the word follows a number,
  a determiner, a possessive, "many", "of", ... somewhere), and neither is a word whose meaning the program may
  depend on (units, money, time, comparatives, quantifiers, ordinals: MUST_AGREE);
- gendered pronouns: he/she, him/her, his/her, himself/herself, when they stand for the same person renamed: the
  people a pronoun may stand for (the text's first names of its gender, by gender-guesser) are, renamed, the
  people the question's pronoun may stand for, or its referent in the sentence ("Mia rode her bike") is.

A rename is a bijection: a word of the routed problem stands for one word of the question everywhere (plural and
singular alike), and no two words of the routed problem stand for the same word of the question; words kept as
they are count in it too. So a question that asks about another person of the problem ("does Michael have" ->
"does Dorothy have", Dorothy being in the problem) breaks it, and so does one that asks for another of the
problem's objects. Everything else must agree exactly: verbs, comparatives, the asked clause's structure; a word
added or dropped ("how many dozens of eggs" -> "how many eggs") does not align, except for the few equivalent
question frames `_asked_frame` writes one way ("how much money" / "how many <currency>", "are left" / "remain",
"how many of the X" / "how many X"). A rename seen only in the asked sentence (a person or object the rest of the
question never mentions) is refused: the question then asks about something the routed problem does not have.
Statements are clauses (`_clauses`): a clause whose subject is left out ("... and then spends $3") pairs with one
whose subject pronoun stands for the clause before's subject and keeps its place after it; a standing fact
(`_standing`: "Each bucket held 11 crabs") may move among statements that share its words. docs/FLYWHEEL.md has
the whole list.

Slots are also found by their use where they align with a slot of their kind in the other text (issue 38): a
currency sign by its Unicode category (not one naming a fraction of a currency), a proper noun for a name (written
capitalized inside a sentence), and names or kinship nouns of another word count ("Lucy" -> "Mary Ann"). Currency
words and kinship nouns are slots only where the tables know them (guessing them by use let "centavos" stand for
dollars and "his parents" for "his uncle": docs/FLYWHEEL.md). A currency sign of letters right before the amount
("kr90", "R15": CURRENCY_PREFIXES) is a sign and its amount a number; a capitalized word a gendered pronoun stands
for is a person ("Bongani cycles ... His"); a kinship noun of another word count may follow another possessive
pronoun or keep its last word ("her teacher" -> "his great-aunt", "great-aunt" -> "aunt"), and a name renamed as a
whole never has a word renamed alone elsewhere; a kinship noun's plural for its singular is another count of
people and refuses.

Clause structure (issue 38, fifth session): a phrase of time or place before a clause's subject stands at its end
(`_fronted`; it holds for the clauses after it in its sentence too), a clause that repeats the clause before's
subject pairs with one that leaves it out, and an object's name of another word count that keeps its last word
("double-decker bus" -> "bus") is one rename; docs/FLYWHEEL.md has the conditions and the near misses.

Sixth session (issue 38): the world's currency names and signs (`_CURRENCY_NAMES`, more signs and letter signs),
kinship nouns of several words headed by one the table knows ("half-brother", "mother-in-law", `_kin_head`), a
name, kinship noun or object the diff splits into pieces renamed as a whole (`merged` in `_pair`), hyphenated and
compound given names, a text's only person's gender from its pronouns, object names of up to six words; the list
with its conditions is in docs/FLYWHEEL.md.

Seventh session (issue 38): statements joined by ", while", ", but", ", so" are clauses as with "and";
"twice a week" is a frequency and a duration a standing fact; a pronoun stands for no person named only after it;
an object's name may end in a phrase that places or qualifies it ("rabbits in the back shed"), its first words may
change where it names a kind of its own ("a rowing boat" -> "a pedal boat"), and no superlative, word of price or
word of degree picks one thing by it ("the cheapest item", "the fast vehicle"); docs/FLYWHEEL.md has the
conditions and the near misses two adversarial reviews tried.

Ninth session (issue 38): a word of age before a kinship noun and a verb before a role noun are words of it ("his
younger sister", "her swim coach"); an opening phrase moves alike before a name of several parts; the second part of
a hyphenated word is no word of its own; a place or thing named as a whole in a clause of no number
(`_a_whole_name`), a name's kept words up to its noun, a mass noun headed elsewhere (`_headed_elsewhere`); a
kinship noun of no gender that a pronoun may stand for keeps it from being renamed to the other gender; three
reviews' attacks are tests. docs/FLYWHEEL.md has the list.

Tenth session (issue 38): a counted name of several words ends in its noun (`_phrase_head`); a trade's plural after
a verb is no other kind of a compound name's noun; where the word diff refuses and both texts write a hyphen, a
second diff matches no hyphen across (`_pair`), and a hyphenated name's first part is a name's part though alone a
unit or a currency (`_hyphen_head`); a possessive pronoun and the object after it rename together; a group's noun
for a noun of one thing is another count (`_COLLECTIVES`); the world's letter currency signs; hyphen-joined names of
two genders are one person; more role nouns and a cousin's degree. docs/FLYWHEEL.md has the list.

`align` never raises on odd text: what does not align is a refusal with its reason."""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation, localcontext
from functools import lru_cache
from typing import Any

# currency signs written with letters right before the amount ("kr90", "R15", "zł17", "Rs500"), from a closed table:
# the sign is a currency slot as "$" is, and the amount after it a number (a word before digits, "v2", is neither)
CURRENCY_PREFIXES = {"R": "zar", "kr": "sek", "zł": "pln", "Rs": "inr", "Rp": "idr", "RM": "myr", "CHF": "chf",
                     "KSh": "kes", "Ksh": "kes", "TSh": "tzs", "USh": "ugx", "Br": "etb", "Tk": "bdt", "Bs": "bob",
                     "US$": "usd", "A$": "aud", "C$": "cad", "NZ$": "nzd", "HK$": "hkd", "S$": "sgd", "R$": "brl",
                     "MX$": "mxn", "GH₵": "ghs", "Kč": "czk", "Ft": "huf", "Kz": "aoa", "Nu": "btn",
                     "ден": "mkd", "лв": "bgn", "L": "hnl", "Q": "gtq", "S/": "pen", "KD": "kwd", "SR": "sar",
                     "Dh": "aed", "DH": "aed", "K": "zmw", "MT": "mzn", "JD": "jod",
                     # the rest of the world's letter signs (tenth session): written before the amount where
                     # people write them
                     "Ar": "mga", "UM": "mru", "VT": "vuv", "Le": "sll", "G": "htg", "D": "gmd", "P": "bwp",
                     "M": "lsl", "E": "szl", "MK": "mwk", "ZK": "zmw", "Ks": "mmk", "Gs": "pyg", "Afs": "afn",
                     "Rf": "mvr", "Nfk": "ern", "Db": "stn", "SM": "tjs", "Afl": "awg", "NAf": "ang", "SRe": "scr",
                     "FCFA": "xof", "CFA": "xof", "FBu": "bif", "FRw": "rwf", "Fdj": "djf", "DA": "dzd",
                     "DT": "tnd", "LD": "lyd", "BD": "bhd", "QR": "qar", "RO": "omr", "T$": "top", "WS$": "wst",
                     "SI$": "sbd", "FJ$": "fjd", "J$": "jmd", "TT$": "ttd", "EC$": "xcd", "BZ$": "bzd",
                     "N$": "nad", "B$": "bsd", "Bds$": "bbd", "L$": "lrd", "G$": "gyd", "RD$": "dop",
                     "MOP$": "mop"}
# a sign of one country's currency whose word names several ("dollars", "shillings", "pesos"): the word stands for
# the one such sign its text writes ("A$5 ... how many dollars": aud), so that "US$3 and HK$5" are two currencies
# (review 38: a mix is refused) and "KSh12 ... how many shillings" one
_CURRENCY_FAMILY = {"aud": "usd", "cad": "usd", "nzd": "usd", "hkd": "usd", "sgd": "usd", "tzs": "kes", "ugx": "kes",
                    "mxn": "php", "rs": "inr", "jod": "kwd",  # ₨: the rupee of Pakistan, Nepal, Sri Lanka ... (not ₹)
                    **dict.fromkeys("sbd fjd jmd ttd xcd bzd nad bsd bbd lrd gyd".split(), "usd"),
                    **dict.fromkeys("xof bif rwf djf".split(), "chf"),
                    **dict.fromkeys("dzd tnd lyd bhd".split(), "kwd"),
                    "qar": "sar", "omr": "sar", "dop": "php", "scr": "inr", "mwk": "zmw"}
# an amount after a letter sign with a full stop before three digits ("Rp15.000", "kr1.500") is fifteen thousand
# where those signs are written, not 15: no number, and its sign no sign
_DOT_THOUSANDS = r"(?![\d,]*\.\d{3}(?!\d))"
# letter signs that also label things ("Q1" a quarter, "L2" a level, "DH2" a hitter): a sign only in a text that
# writes its currency's word ("L19 ... lempiras"; NOTE-review8 2: "In Q1 ... In Q2 twice as many" bound the
# program's 2 to the label). "R" (rand) is a sign without its word, as it was before this rule.
_LABEL_LIKE = {"L": "hnl", "Q": "gtq", "KD": "kwd", "SR": "sar", "Dh": "aed", "DH": "aed", "K": "zmw", "MT": "mzn",
               "JD": "jod",
               # the tenth session's signs of one or two letters ("G4", "D2", "P3", "M5", "RO2" may label)
               **{sign: CURRENCY_PREFIXES[sign]
                  for sign in "Ar UM VT Le G D P M E MK ZK Ks Gs Rf Db SM DA DT LD BD QR RO".split()}}

LABEL_LIKE_SIGNS = frozenset(_LABEL_LIKE)  # for transfer: a number after one of them may be a label (NOTE-review10b)


def _patterns(prefixes: Iterable[str]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The number and token patterns where these letter signs are signs. A number: optional sign, digits with
    optional thousands commas, optional decimals, optional /denominator; not part of a word, another number or a
    range ("v2", "5-10" and "1.2.3" are not numbers), except after a currency prefix."""
    signs = sorted(prefixes, key=len, reverse=True)
    after = "|".join(f"(?<=(?<![^\\W\\d_]){re.escape(p)})" for p in signs)
    number = re.compile(rf"(?:(?<![\w.\-/])|(?:{after}){_DOT_THOUSANDS})-?(?:\d{{1,3}}(?:,\d{{3}})+|\d+)"
                        r"(?:\.\d+|/\d+)?(?![\w/]|[.,]\d)")
    prefix = "|".join(map(re.escape, signs))
    token = re.compile(rf"(?P<number>{number.pattern})|(?P<prefix>(?<![^\W\d_])(?:{prefix})(?=\d){_DOT_THOUSANDS})"
                       r"|(?P<word>[^\W\d_]+)|(?P<poss>(?<=[^\W\d_])'s?(?![^\W\d_]))|(?P<punct>\S)")
    return number, token


NUMBER, _TOKEN = _patterns(CURRENCY_PREFIXES)
_NUMBER_UNLABELED, _TOKEN_UNLABELED = _patterns(p for p in CURRENCY_PREFIXES if p not in _LABEL_LIKE)


def _labels_only(text: str) -> bool:
    """Whether the text writes a label-like letter sign before digits without its currency's word anywhere."""
    words = {w.casefold() for w in re.findall(r"[^\W\d_]+", text)}
    return any(re.search(rf"(?<![^\W\d_]){re.escape(sign)}(?=\d)", text)
               and not any(CURRENCY_WORDS.get(w) in (code, _CURRENCY_FAMILY.get(code, code)) for w in words)
               for sign, code in _LABEL_LIKE.items())


def number_pattern(text: str) -> re.Pattern[str]:
    """The pattern of the numbers of a text (NUMBER, less the label-like signs where the text names no currency of
    theirs)."""
    return _NUMBER_UNLABELED if _labels_only(text) else NUMBER
_SENTENCE_END = frozenset(".!?")
_ASK_WORDS = frozenset("how what find calculate compute determine which".split())
_DETERMINERS = frozenset("a an the his her their its my your our".split())
_TITLES = frozenset("mr mrs ms dr st jr sr prof mt vs etc".split())  # "Mr. Lee" is one sentence

# words no rename may touch: what the program's arithmetic may depend on
MUST_AGREE = frozenset("""
    more less fewer most least many much few several total remaining rest left other another same each every per all
    both half twice double triple quarter third times dozen dozens pair pairs score percent percentage number amount
    first second last next previous original initial final extra additional whole entire new old only
    sum difference product average profit loss cost costs price prices change tax tip discount interest fee rate
    bonus bonuses deduction deductions fine fines penalty penalties refund refunds salary salaries wage wages rent
    rents debt debts savings allowance allowances income expense expenses commission commissions loan loans credit
    rebate rebates surcharge surcharges cashback reimbursement reimbursements toll tolls dues subsidy subsidies markup
    markdown withdrawal withdrawals overdraft
    cent cents dollar dollars penny pennies nickel nickels dime dimes euro euros pound pounds money
    second seconds minute minutes hour hours day days week weeks month months year years decade decades
    mile miles kilometer kilometers meter meters centimeter centimeters foot feet inch inches yard yards
    gram grams kilogram kilograms ounce ounces ton tons liter liters gallon gallons cup cups quart quarts pint pints
    morning afternoon evening night weekend today yesterday tomorrow
    hourly daily nightly weekly biweekly fortnightly monthly quarterly yearly annual annually
    older younger taller shorter longer heavier faster slower bigger smaller cheaper age ages
    higher lower greater larger wider narrower lighter deeper above below forward back backward backwards off ahead
    behind up down under over inside outside before after early late
    zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen
    eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred hundreds thousand thousands
    million millions billion billions fourth fifth sixth seventh eighth ninth tenth twelfth twentieth hundredth
    halves thirds quarters fourths fifths tenths ones tens twins triplets couple trio single gross
    twin dual duo quad quads multi quadruple twofold threefold bi tri semi penta hexa octa deca
    radius diameter side sides area perimeter volume circumference length width height depth square circle
    triangle rectangle cube sphere cylinder quotient remainder ratio speed distance weight capacity
    metre metres kilometre kilometres centimetre centimetres millimeter millimeters millimetre millimetres litre
    litres milliliter milliliters millilitre millilitres teaspoon teaspoons tablespoon tablespoons fortnight
    century centuries millennium km m cm mm kg g mg ml l lb lbs oz ft yd mi hr hrs min mins sec secs mph kph
    celsius fahrenheit kelvin degree degrees
    byte bytes kilobyte kilobytes megabyte megabytes gigabyte gigabytes terabyte terabytes kb mb gb tb
    milligram milligrams microgram micrograms microliter microliters nanosecond nanoseconds millisecond milliseconds
    january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday
    wheel wheels leg legs
""".split())
# verbs of word problems (base forms; their -s, -ed, -ing forms follow): an operation is never a rename
_VERBS = """
    buy sell give take eat get lose win spend pay earn save find make borrow lend return receive send keep leave
    arrive add remove double triple share split divide multiply subtract increase decrease drop rise fall grow shrink
    break fix steal donate collect gather pick throw catch drink use need want cost weigh measure cut fill empty
    open close read write run walk drive ride fly swim travel move jump climb carry bring hold own owe charge spill
    waste burn plant harvest hire join quit enter exit push pull lift bake cook sew knit paint build buy order rent
    deliver load unload pack unpack wrap mix pour boil fry print score miss hit kick pass play sing dance study learn
    teach help visit call count sort stack store ship mail feed water wash clean dry iron fold hang sleep wake work
    rest wait stay come go see watch hear say tell ask answer tip trade swap exchange offer accept refuse reject
    deposit withdraw invest lose gain melt freeze cool heat fit shave sort replace repair put remain
"""
_IRREGULAR = """
    sold bought ate eaten gave given took taken got gotten lost won spent paid found made lent sent kept left grew
    grown broke broken stole stolen threw thrown caught drank drunk wrote written ran drove driven rode ridden flew
    flown swam swum brought held fell fallen rose risen built began begun came went gone saw seen heard said told
    slept woke woken sang sung hung dug fed shook shaken sewn knew known
"""


def _forms(base: str) -> set[str]:
    out = {base, base + "s", base + "es", base + "ed", base + "d", base + "ing", base + base[-1] + "ed",
           base + base[-1] + "ing"}
    if base.endswith("e"):
        out |= {base[:-1] + "ing"}
    if base.endswith("y"):
        out |= {base[:-1] + "ies", base[:-1] + "ied"}
    return out


VERBS = frozenset(f for b in _VERBS.split() for f in _forms(b)) | frozenset(_IRREGULAR.split())
# common nouns that name a person of a gender: people for the pronoun check
GENDERED_NOUNS = {**dict.fromkeys("boy man brother son father dad uncle nephew husband grandfather grandpa king "
                                  "prince gentleman sir mr grandson stepbrother stepfather stepson godfather godson "
                                  "landlord fiancé headmaster grandnephew".split(), "m"),
                  **dict.fromkeys("girl woman sister daughter mother mom mum aunt niece wife grandmother grandma "
                                  "queen princess lady madam mrs ms miss granddaughter stepsister stepmother "
                                  "stepdaughter godmother goddaughter landlady fiancée headmistress grandniece".split(),
                                  "f")}
# kinship and role nouns: slots renamed consistently (uncle -> brother, teacher -> coach); a person for pronouns. A
# closed table: a noun after a possessive is not guessed to be one ("his dog", "his parents": docs/FLYWHEEL.md)
KIN = frozenset("brother sister uncle aunt cousin grandmother grandfather grandma grandpa mother father mom dad mum "
                "son daughter niece nephew husband wife neighbor neighbour teacher coach boss "
                "roommate grandson granddaughter stepbrother stepsister stepfather stepmother stepson stepdaughter "
                "godmother godfather godson goddaughter tutor landlord landlady flatmate housemate manager "
                "partner coworker colleague classmate teammate bandmate mentor employer supervisor babysitter nanny "
                "guardian fiance fiancee girlfriend boyfriend spouse grandparent godparent sibling "
                "grandchild leader instructor trainer counselor counsellor captain fiancé fiancée chef "
                "headteacher headmaster headmistress grandniece grandnephew pastor priest vicar rabbi imam apprentice "
                "foreman intern trainee assistant caretaker carer tenant lodger secretary principal".split())

# common nouns for people by their work or place (and GENDERED_NOUNS): a thing renamed as one of them is not one
# object for another, since the question's pronouns may stand for the person (review 38)
_PEOPLE = frozenset("waiter waitress cashier nurse doctor driver farmer baker chef cook clerk pilot customer "
                    "student pupil child kid friend classmate player worker employee owner shopkeeper seller buyer "
                    "librarian gardener painter plumber mechanic dentist vet clown magician guide guard ranger "
                    "officer soldier scientist artist author writer singer dancer musician teammate stranger visitor "
                    "guest actor actress host hostess server vendor tailor carpenter lawyer principal "
                    "policeman policewoman salesman saleswoman businessman businesswoman person people "
                    "adult baby toddler teenager".split()) | frozenset(GENDERED_NOUNS)
# currencies: a symbol or a word, renamed as one consistent slot (its code) that the program does not depend on
CURRENCY_SYMBOLS = {"$": "usd", "€": "eur", "£": "gbp", "¥": "jpy", "₹": "inr", "₱": "php", "₩": "krw", "₽": "rub",
                    "₦": "ngn", "₺": "try", "₫": "vnd", "฿": "thb", "₴": "uah", "₾": "gel", "₭": "lak", "₵": "ghs",
                    "₪": "ils", "₡": "crc", "₸": "kzt", "₼": "azn", "₲": "pyg", "₮": "mnt", "៛": "khr", "₨": "rs",
                    "৳": "bdt", "֏": "amd", "﷼": "sar"}
# more currencies by name (singular and plural forms), from ISO 4217's list: a word here is a currency slot wherever
# it stands, so none is a common English word of another meaning ("real", "mark", "sol", "sum" are left out; "won"
# and "kip" are _AMBIGUOUS_CURRENCY); one sign (﷼) writes the riyal and the rial, so their words are one currency
_CURRENCY_NAMES = {w: code for code, forms in {
    "uah": "hryvnia hryvnias hryvnya hryvnyas", "gel": "lari laris", "lak": "kip", "kes": "shilling shillings",
    "ghs": "cedi cedis", "etb": "birr birrs", "zmw": "kwacha kwachas",
    "mmk": "kyat kyats", "khr": "riel riels", "bdt": "taka takas", "aed": "dirham dirhams",
    "sar": "riyal riyals rial rials", "ils": "shekel shekels shekalim", "huf": "forint forints",
    "czk": "koruna korunas koruny", "hrk": "kuna kunas", "mkd": "denar denars denari", "all": "lek leke leks",
    "ron": "leu lei", "bgn": "lev leva", "amd": "dram drams", "azn": "manat manats", "kzt": "tenge tenges",
    "kgs": "som soms", "afn": "afghani afghanis", "btn": "ngultrum ngultrums", "mvr": "rufiyaa rufiyaas",
    "top": "paanga", "wst": "tala talas", "vuv": "vatu vatus", "pgk": "kina kinas", "bwp": "pula pulas",
    "lsl": "loti maloti", "szl": "lilangeni emalangeni", "mzn": "metical meticais meticals",
    "aoa": "kwanza kwanzas", "gmd": "dalasi dalasis", "mga": "ariary ariarys", "sll": "leone leones",
    "pen": "soles", "bob": "boliviano bolivianos", "pyg": "guarani guaranis guaranies", "crc": "colones",
    "nio": "cordoba cordobas", "hnl": "lempira lempiras", "gtq": "quetzal quetzales quetzals",
    "pab": "balboa balboas", "ves": "bolivar bolivars bolivares", "brl": "reais", "cny": "renminbi",
    "htg": "gourde gourdes", "mru": "ouguiya ouguiyas", "ern": "nakfa nakfas", "stn": "dobra dobras",
    "tjs": "somoni somonis", "mop": "pataca patacas", "awg": "florin florins", "ang": "guilder guilders",
    "mnt": "tugrik tugriks", "kwd": "dinar dinars", "isk": "krónur kronur",
}.items() for w in forms.split()}
CURRENCY_WORDS = {**dict.fromkeys(("dollar", "dollars"), "usd"), **dict.fromkeys(("euro", "euros"), "eur"),
                  **dict.fromkeys(("pound", "pounds"), "gbp"), "yen": "jpy",
                  **dict.fromkeys(("rupee", "rupees"), "inr"), **dict.fromkeys(("peso", "pesos"), "php"),
                  "yuan": "cny", **dict.fromkeys(("franc", "francs"), "chf"), "naira": "ngn",
                  **dict.fromkeys(("ruble", "rubles", "rouble", "roubles"), "rub"), "baht": "thb",
                  **dict.fromkeys(("lira", "liras"), "try"), "dong": "vnd", "won": "krw", "rand": "zar",
                  **dict.fromkeys(("krona", "kronor", "kr"), "sek"),
                  **dict.fromkeys(("krone", "kroner"), "nok"),  # Norway's and Denmark's, not Sweden's (review 38b)
                  **dict.fromkeys(("złoty", "zloty", "złotys", "zlotys", "zł"), "pln"), "rupiah": "idr",
                  "ringgit": "myr", **_CURRENCY_NAMES}
_SMALL_SYMBOLS = frozenset("¢₥")  # a fraction of a currency (cents, mills): a unit, never a currency slot
# words in a symbol's Unicode name that make it a fraction of a currency or no currency sign ("FULLWIDTH CENT SIGN",
# "GERMAN PENNY SIGN", "BENGALI GANDA MARK"): never a currency slot
_SMALL_SYMBOL_NAMES = ("CENT", "PENNY", "PFENNIG", "MILL", "FARTHING", "PARA", "KOPEK", "GANDA", "FRACTION")


def _whole_currency_symbol(ch: str) -> bool:
    """A one-character currency sign the table does not know that may be a currency slot ("₴", "₪"): Unicode
    category Sc, its name a SIGN naming no fraction of a currency (the cent and mill signs are units)."""
    name = unicodedata.name(ch, "")
    return (unicodedata.category(ch) == "Sc" and ch not in _SMALL_SYMBOLS and name.endswith("SIGN")
            and not any(w in name.split() for w in _SMALL_SYMBOL_NAMES) and "FULLWIDTH" not in name)
# a weight or a verb unless the text writes its symbol ("pounds" of flour, a game "won")
_AMBIGUOUS_CURRENCY = {"pound": "£", "pounds": "£", "won": "₩", "kip": "₭"}
# of those, the ones that are money right after an amount as well ("earns 720 won"; "5 pounds" may be a weight)
_MONEY_AFTER_AMOUNT = frozenset("won kip".split())
_SUBJECTS = frozenset("he she they it we i you".split())
# words after a person's name: what a person does (a name not in gender-guesser is a person by its role)
_AFTER_PERSON = frozenset("is was has had and can will would could should does did wants needs gets got "
                          "likes decides plans tries".split())
# words after which the order of the statements matters (a running total, a reference back)
ORDER_SENSITIVE = frozenset("rest remaining remainder left half twice double doubles doubled triple triples tripled "
                            "percent then now after afterwards later finally next again total money new same "
                            "first last before former latter earlier previous preceding following afterward "
                            "second third".split())
# words that refer back to an earlier sentence
_BACK_REFERENCES = frozenset("it its they them their this that these those such".split())
# function words: must agree, and never a name even when capitalized at a sentence's start
FUNCTION = frozenset("""
    a an the and or but if then so than as at by for from in into of on onto out over to up with without about after
    before during until while when where which who whom whose what how why that this these those there here
    is are was were be been being am has have had do does did will would shall should can could may might must
    it its they them their theirs we us our you your i me my he him his she her hers himself herself each every
    all some any no not none both either neither one
""".split())
# gendered pronouns: (gender, grammatical role); "her" is object or possessive
PRONOUNS = {"he": ("m", "subject"), "him": ("m", "object"), "his": ("m", "possessive"),
            "himself": ("m", "reflexive"), "she": ("f", "subject"), "her": ("f", "object|possessive"),
            "hers": ("f", "possessive"), "herself": ("f", "reflexive")}
_POSSESSIVES = frozenset(("his", "her"))  # the gendered pronouns that may stand before a thing
MIN_KEPT = 0.35  # at least this share of the routed problem's words kept as they are (docs/FLYWHEEL.md)
MAX_SENTENCES = 12
MAX_PAIRINGS = 400  # sentence pairings one alignment may try (the backtracking's bound: many alike sentences)


@dataclass(frozen=True)
class Token:
    text: str
    kind: str  # number | word | poss | punct
    start: int

    @property
    def key(self) -> str:
        """What must agree between aligned tokens."""
        if self.kind == "number":
            return "<num>"
        if self.kind == "poss":
            return "'s"
        if self.kind == "word":
            word = self.text.casefold()
            return "a" if word == "an" else word
        return self.text


def tokens_of(text: str) -> tuple[Token, ...]:
    """The tokens of a text; a currency prefix written with letters ("kr" in "kr90") is a sign, as "$" is."""
    pattern = _TOKEN_UNLABELED if _labels_only(text) else _TOKEN
    return tuple(Token(m.group(0), "punct" if m.lastgroup == "prefix" else str(m.lastgroup), m.start())
                 for m in pattern.finditer(text))


def number_value(text: str) -> Decimal | None:
    """The value of a number token (commas dropped, a/b divided to 40 digits), None when it has none."""
    plain = text.replace(",", "")
    try:
        if "/" in plain:
            num, den = plain.split("/", 1)
            with localcontext() as ctx:
                ctx.prec = 40
                return Decimal(num) / Decimal(den) if Decimal(den) != 0 else None
        return Decimal(plain)
    except (InvalidOperation, ValueError):
        return None


def sentences_of(tokens: Sequence[Token]) -> list[tuple[Token, ...]]:
    out: list[tuple[Token, ...]] = []
    current: list[Token] = []
    for tok in tokens:
        current.append(tok)
        prev = current[-2] if len(current) >= 2 else None
        if tok.kind == "punct" and tok.text in _SENTENCE_END and not (
                tok.text == "." and prev is not None and prev.kind == "word"
                and (prev.key in _TITLES or (len(prev.text) == 1 and prev.text.isupper()))):
            out.append(tuple(current))
            current = []
    if current:
        out.append(tuple(current))
    return out


def _clause_break(tokens: Sequence[Token], k: int) -> bool:
    """Whether the "and" at k joins two statements: after a comma ("..., and the teacher adds"), before a subject
    pronoun or a person's name that does not follow another name ("5 apples and he buys", not "Ana and Bo"), or
    before a verb of its own after an object ("bakes 84 rolls and puts them", "and then spends": the second
    statement's subject, left out, is the first's)."""
    tok = tokens[k]
    if tok.kind != "word" or k == 0 or k + 1 >= len(tokens):
        return False
    prev, nxt = tokens[k - 1], tokens[k + 1]
    comma = prev.kind == "punct" and prev.text == ","
    if tok.key in _JOINERS:
        return (comma or (tok.key == "while" and prev.kind in ("word", "number") and prev.key not in ("a", "the")))\
            and (_elided(tokens, k + 1) or _opens_clause(tokens, k + 1))
    if tok.key != "and":
        return False
    if comma:
        return True
    if nxt.kind == "word" and nxt.key in _SUBJECTS:
        return True
    if _elided(tokens, k + 1) and prev.kind in ("word", "number") and prev.key not in VERBS:
        return True
    return _is_name(nxt) and not _is_name(prev) and nxt.text[:1].isupper()


# words other than "and" that join two statements after a comma ("..., while the drive takes 15 minutes", "..., but 4
# of them are away", "..., so he scales it up"; "while" without a comma too); not ", where", which ties its clause
# to the last place named ("the museum and the aquarium, where each ticket costs $9": review 7b)
_JOINERS = frozenset("while whereas but so".split())  # not "where": it ties its clause to the last place only
# adverbs that may stand between "and" and the verb of a statement whose subject is left out ("and already has")
_BEFORE_VERB = frozenset("then already also still now".split())
_HAVE = frozenset("has have had".split())  # "... and has 3 left": a statement's verb as the verb tables' are


def _opens_clause(tokens: Sequence[Token], k: int) -> bool:
    """Whether a statement with its own subject starts at k: no relative or comparing word first, and a verb or
    an auxiliary within the next six words, before any punctuation ("each child's ticket costs", "4 of the
    students are away", "his great-uncle adds")."""
    if k >= len(tokens) or tokens[k].key in ("that", "which", "who", "as", "than", "much", "many", "far"):
        return False
    for tok in tokens[k + 1:k + 7]:
        if tok.kind == "punct" and tok.text != "-":
            return False
        if tok.kind == "word" and (tok.key in VERBS or tok.key in _AUXILIARIES) and tok.text[:1].islower():
            return True
    return False


def _elided(tokens: Sequence[Token], k: int) -> bool:
    """Whether a statement starting at k opens with its verb (after an optional "then", "already", "also", ...):
    its subject left out."""
    while k < len(tokens) and tokens[k].key in _BEFORE_VERB:
        k += 1
    return k < len(tokens) and tokens[k].kind == "word" and (tokens[k].key in VERBS or tokens[k].key in _HAVE) \
        and not tokens[k].key.endswith("ing") and not tokens[k].text[:1].isupper()


def _subject_at(clause: Sequence[Token]) -> int | None:
    """Where a clause's subject pronoun is (he or she, first or after "then"), else None."""
    k = 1 if clause and clause[0].key == "then" else 0
    return k if k < len(clause) and clause[k].kind == "word" and clause[k].key in ("he", "she") else None


@dataclass(frozen=True)
class Clauses:
    """A text's statements as clauses (clauses_of) and the asked one's index; `elided`: the clauses whose subject
    is left out (the clause before's: "... and then spends $3"); `continuing`: the clauses whose subject pronoun
    stands for the clause before's subject ("... weeks. Then he spends $3" after "he saves")."""

    clauses: list[tuple[Token, ...]]
    asked: int
    elided: frozenset[int] = frozenset()
    continuing: frozenset[int] = frozenset()
    repeated: dict[int, int] = field(default_factory=dict)  # continuing clause -> words of its repeated subject

    def without_subject(self, i: int) -> tuple[Token, ...]:
        """A continuing clause with its subject pronoun (or repeated subject) left out ("then spends $3")."""
        clause = self.clauses[i]
        at = _subject_at(clause)
        if i in self.repeated:
            at = 1 if clause[0].key == "then" else 0
            return clause[:at] + clause[at + self.repeated[i]:]
        return clause if at is None else clause[:at] + clause[at + 1:]


def _named_subject(clause: Sequence[Token], names: frozenset[str]) -> tuple[str, int] | None:
    """A clause's subject that a later clause may repeat instead of leaving it out, and its word count: a person's
    name ("Ana buys 5 pens. Ana gives 2 away." is "Ana buys 5 pens and gives 2 away.") or "each"/"every" and one
    noun ("Each table seats 9 guests. Each table gets 5 candles." is "Each table seats 9 guests and gets 5
    candles."), after an optional "then", followed by a verb (a verb the tables know, an auxiliary, or after
    "each"/"every" a word ending in -s: "each" takes no plural noun), else None."""
    k = 1 if clause and clause[0].key == "then" else 0
    if k + 1 >= len(clause) or clause[k].kind != "word":
        return None
    first = clause[k]
    if _is_name(first) and lemma(first.key) in names and first.key not in KIN:
        verb = clause[k + 1]
        return (lemma(first.key), 1) if verb.kind == "word" and verb.text[:1].islower() and (
            verb.key in VERBS or verb.key in _AUXILIARIES) else None
    if first.key in ("each", "every") and k + 2 < len(clause):
        noun, verb = clause[k + 1], clause[k + 2]
        if noun.kind == verb.kind == "word" and not _fixed(noun.key) and noun.key not in KIN and (
                verb.key in VERBS or verb.key in _AUXILIARIES
                or (verb.key.endswith("s") and not verb.key.endswith("ss"))):
            return f"{first.key} {lemma(noun.key)}", 2
    return None


def clauses_of(sentences: Sequence[Sequence[Token]], asked: int) -> tuple[list[tuple[Token, ...]], int]:
    """The statements as clauses and the asked one's index (see _clauses)."""
    found = _clauses(sentences, asked)
    return found.clauses, found.asked


def _clauses(sentences: Sequence[Sequence[Token]], asked: int) -> Clauses:
    """The statements as clauses, so that sentence boundaries do not decide: every sentence but the asked one is
    split where "and" joins two statements (_clause_break) or at a semicolon, and the joining comma, "and" and the
    closing full stop are dropped ("Ana has 5 pens, and Bo has 3 pens." and "Ana has 5 pens. Bo has 3 pens." are
    the same two clauses). The asked sentence stays whole. Which clauses leave their subject out, and which name it
    with a pronoun for the clause before's subject (the same pronoun, or a name of its gender where that clause
    names no other person of it): "She saves $5 and then spends $3." and "She saves $5. Then she spends $3." align."""
    out: list[tuple[Token, ...]] = []
    elided: set[int] = set()
    continuing: set[int] = set()
    repeated: dict[int, int] = {}
    subjects: list[str] = []  # each clause's subject as the next clause sees it: a pronoun, a name, or ""
    asked_at = 0
    persons = _persons([t for sentence in sentences for t in sentence])
    names = _person_names([t for sentence in sentences for t in sentence])

    def add(clause: list[Token], left_out: bool) -> None:
        if not clause:
            return
        before = subjects[-1] if subjects else ""
        at = _subject_at(clause)
        first = clause[0]
        owner = len(clause) > 1 and clause[1].kind == "poss"  # "Mia's brother has ...": the brother, not Mia
        subject = "" if owner else lemma(first.key) if _is_name(first) else first.key if first.key in _SUBJECTS else ""
        named = _named_subject(clause, names)
        if named is not None and not subject:
            subject = named[0]  # "each table"
        if left_out and out:
            elided.add(len(out))
            subject = before
        elif at is not None:
            subject = clause[at].key
            if out and before and _same_subject(clause[at].key, before, out[-1], persons):
                continuing.add(len(out))
        elif out and named is not None and named[0] == before:
            continuing.add(len(out))
            repeated[len(out)] = named[1]
        out.append(tuple(clause))
        subjects.append(subject)

    for i, sentence in enumerate(sentences):
        if i == asked:
            asked_at = len(out)
            out.append(tuple(sentence))
            subjects.append("")
            continue
        current: list[Token] = []
        left_out = False
        parts: list[tuple[list[Token], bool]] = []
        for k, tok in enumerate(sentence):
            if _clause_break(sentence, k) or (tok.kind == "punct" and tok.text == ";"):
                while current and current[-1].kind == "punct" and current[-1].text in ",;":
                    current.pop()
                parts.append((current, left_out))
                current, left_out = [], tok.kind == "word" and _elided(sentence, k + 1)
                continue
            current.append(tok)
        while current and current[-1].kind == "punct" and current[-1].text in _SENTENCE_END | {",", ";"}:
            current.pop()
        parts.append((current, left_out))
        # a phrase that opens a clause holds for the clauses after it in its sentence too ("On Monday, Ana buys 5
        # pens and Bo buys 3": Bo on Monday too): it stands at the end of each where the text speaks of what it
        # names elsewhere ("How many pens are bought on Monday?"), so that its reach may decide what is asked (one
        # with a number is not moved where it would stand twice)
        carried: tuple[Token, ...] = ()
        for clause, elided_here in parts:
            moved, phrase = _fronted(clause, names)
            if phrase and len(parts) > 1 and any(t.kind == "number" for t in phrase):
                moved, phrase = tuple(clause), ()
            if phrase:
                inside = {id(t) for t in phrase}
                named = {lemma(t.key) for t in phrase if t.kind == "word" and t.key not in FUNCTION
                         and t.key not in _ADVERBIAL_OPENERS}
                elsewhere = {lemma(t.key) for other in sentences for t in other
                             if t.kind == "word" and id(t) not in inside}
                carried = phrase if named & elsewhere else ()
            elif carried and clause and not elided_here:
                # not into a clause whose subject is left out: "Twice a week, Ana drives ... and waits at the pool"
                # is "Ana drives ... twice a week and waits at the pool"
                moved = moved + carried
            add(list(moved), elided_here)
    return Clauses(out, asked_at, frozenset(elided), frozenset(continuing), repeated)


# words that open a phrase of time or place standing before a clause's subject ("At the end of each week Mia gives
# ...", "Every morning Ingrid runs ...", "On Fridays, everything is ..."): the phrase may stand at the clause's end
_ADVERBIAL_OPENERS = frozenset("at on in during after before every each throughout within over this once twice".split())
_AUXILIARIES = frozenset("is are was were be been being am has have had do does did will would shall should can "
                         "could may might must".split())
_SUBJECT_PRONOUNS = frozenset("he she they we i you".split())


def _subject_end(rest: Sequence[Token], names: frozenset[str]) -> int | None:
    """Where the subject that opens `rest` ends: after a subject pronoun, after a possessive pronoun and its noun
    ("her niece"), or after a person's name (`names`) with the parts written against its hyphens ("Seung-woo") and
    the capitalized name words after it ("Duc Anh"); None where no subject opens it."""
    if not rest or rest[0].kind != "word":
        return None
    if rest[0].key in _SUBJECT_PRONOUNS:
        return 1
    if rest[0].key in ("his", "her", "their"):
        return 2
    if not (_is_name(rest[0]) and lemma(rest[0].key) in names):
        return None
    end = 1
    while end < len(rest) and end < 5:
        if end + 1 < len(rest) and rest[end + 1].kind == "word" \
                and _hyphen_joined(rest[end - 1], rest[end], rest[end + 1]):
            end += 2  # "Seung - woo": the parts of one name
        elif rest[end].kind == "word" and _is_name(rest[end]) and lemma(rest[end].key) in names:
            end += 1  # "Duc Anh"
        else:
            break
    return end


def _fronted(clause: Sequence[Token], names: frozenset[str]) -> tuple[tuple[Token, ...], tuple[Token, ...]]:
    """The clause with a phrase of time or place that opens it moved to its end, and the phrase, so that "At the
    end of each week Mia gives 1 fish away" and "Mia gives 1 fish away at the end of each week" are one clause. The
    phrase opens with a preposition or "every"/"each" (_ADVERBIAL_OPENERS) and ends at a comma ("On Fridays,
    everything is 50% off"; the comma dropped) or right before the clause's subject, a subject pronoun, a
    person's name (`names`) or a possessive pronoun and its noun ("her niece"); it holds no verb, auxiliary,
    possessive or subject pronoun, ends in a content word (not "Each of", not "At the" before a name), and a verb
    follows it. Otherwise the clause as it is and no phrase."""
    if len(clause) < 4 or clause[0].kind != "word" or clause[0].key not in _ADVERBIAL_OPENERS:
        return tuple(clause), ()
    for k in range(1, min(len(clause) - 2, 9)):
        tok = clause[k]
        comma = tok.kind == "punct" and tok.text == ","
        subject = tok.kind == "word" and (tok.key in _SUBJECT_PRONOUNS or (
            _is_name(tok) and lemma(tok.key) in names) or (  # "her niece": a possessive pronoun and its noun
            tok.key in ("his", "her", "their") and k + 1 < len(clause) and clause[k + 1].kind == "word"
            and clause[k + 1].key not in FUNCTION))
        if not comma and not subject:
            if tok.kind == "poss" or (tok.kind == "punct" and tok.text != "-") or (tok.kind == "word" and (
                    tok.key in VERBS or tok.key in _AUXILIARIES or tok.key in _INDEFINITE)):
                break
            continue
        last = clause[k - 1]
        rest = clause[k + 1:] if comma else clause[k:]
        if k < 2 or last.kind != "word" or last.key in FUNCTION or last.key in _ADVERBIAL_OPENERS:
            break
        # a verb follows: one the tables know, or a lowercase word right after a name or subject pronoun ("Every day
        # Noah practices ...": "practices" is in no verb list) or a possessive pronoun and its noun ("his niece")
        at = _subject_end(rest, names)
        after_subject = at is not None and len(rest) > at and rest[at].kind == "word" \
            and rest[at].text[:1].islower() and (rest[at].key not in FUNCTION or rest[at].key in _AUXILIARIES)
        # a comma that ends the phrase before a subject ("After a heavy snowfall, Malak and her aunt plow ...")
        # needs no verb the tables know: the comma marks the phrase's end on both sides alike
        if not after_subject and not (comma and at is not None) and not any(
                t.kind == "word" and (t.key in VERBS or t.key in _AUXILIARIES) for t in rest[:4]):
            break
        return tuple(rest) + tuple(clause[:k]), tuple(clause[:k])
    return tuple(clause), ()


def _same_subject(pronoun: str, before: str, previous: Sequence[Token], persons: dict[str, str]) -> bool:
    """Whether a subject pronoun stands for the subject of the clause before it (`before`): the same pronoun, or a
    name of its gender where that clause names no other person of that gender (by name or by a pronoun that is
    not a possessive)."""
    if pronoun == before:
        return True
    gender = PRONOUNS[pronoun][0]
    if persons.get(before) != gender:
        return False
    others = {lemma(t.key) for t in previous if _is_name(t)} - {before}
    return not any(persons.get(w) == gender for w in others) and not any(
        t.kind == "word" and t.key in PRONOUNS and PRONOUNS[t.key][0] == gender
        and t.key not in ("his", "her", "hers") for t in previous)


def asked_index(sentences: Sequence[Sequence[Token]]) -> int:
    """The sentence that asks: the last one ending in '?', else the last one starting with an asking word, else the
    last sentence (as structure.asked_sentence reads it)."""
    for i in range(len(sentences) - 1, -1, -1):
        if sentences[i] and sentences[i][-1].text == "?":
            return i
    for i in range(len(sentences) - 1, -1, -1):
        if sentences[i] and sentences[i][0].key in _ASK_WORDS:
            return i
    return len(sentences) - 1


@lru_cache(maxsize=4096)
def lemma(word: str) -> str:
    """A word's singular (inflect's), so that one rename covers "clam" and "clams"; function words as they are."""
    key = "a" if word == "an" else word
    if len(key) <= 3 or key in FUNCTION or key in PRONOUNS or key.endswith("us"):
        return key  # no plural ends in -us ("minibus", "cactus": inflect reads "minibu" + s)
    singular = _inflect().singular_noun(key)
    return singular if isinstance(singular, str) and singular else key


@lru_cache(maxsize=1)
def _inflect() -> Any:
    import inflect

    return inflect.engine()


def _nouns(tokens: Sequence[Token]) -> frozenset[str]:
    """The lemmas a text uses as nouns: a word right after a number ("12 clams"), after "many"/"much", after a
    capitalized modifier that follows a number ("20 TikTok friends"), after a counted measure and "of" ("6
    buckets of crabs"), or after a determiner where no content word follows it ("her comic every day"; not "the
    cheapest item" or "a weekly allowance": a word followed by another content word qualifies it). Only these may
    be renamed as objects."""
    out = set()
    for i in range(1, len(tokens)):
        tok, prev = tokens[i], tokens[i - 1]
        if tok.kind != "word":
            continue
        before = tokens[i - 2] if i >= 2 else None
        counted = prev.kind == "number" or (prev.kind == "word" and prev.key in ("many", "much"))
        counted = counted or (before is not None and before.kind == "number" and prev.kind == "word"
                              and prev.text[:1].isupper())
        counted = counted or (i >= 3 and prev.key == "of" and before is not None and before.kind == "word"
                              and tokens[i - 3].kind in ("number", "word") and tokens[i - 3].key != "of"
                              and (tokens[i - 3].kind == "number" or tokens[i - 3].key == "many"))
        # a determiner's noun: "her comic every day", "the guitar 30 minutes" (not "the cheapest item": a word
        # followed by another content word qualifies it)
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        heads = nxt is None or nxt.kind != "word" or nxt.key in FUNCTION
        counted = counted or (prev.kind == "word" and prev.key in _DETERMINERS and heads)
        if counted:
            out.add(lemma(tok.key))
            if prev.kind == "number" or prev.key in ("many", "much"):
                out |= _phrase_head(tokens, i)
    return frozenset(out)


def _phrase_head(tokens: Sequence[Token], i: int) -> set[str]:
    """The last word of a counted name of several words when the counted word is singular and only words no rule
    fixes follow it up to a function word or a mark ("8 sea bass a day": bass; not "6 kids play": a plural ends the
    name, nor "3 apples cost": a verb is no noun)."""
    j = i
    while j + 1 < len(tokens) and j - i < 3 and lemma(tokens[j].key) == tokens[j].key:
        nxt = tokens[j + 1]
        if nxt.kind != "word" or nxt.key in FUNCTION or nxt.key in VERBS or _fixed(nxt.key) \
                or not nxt.text[:1].islower():
            break
        j += 1
    after = tokens[j + 1] if j + 1 < len(tokens) else None
    ended = after is None or after.kind != "word" or after.key in FUNCTION
    return {lemma(tokens[j].key)} if j > i and ended else set()


@lru_cache(maxsize=1024)
def _subject_nouns(tokens: tuple[Token, ...]) -> frozenset[str]:
    """The lemmas a text uses as a subject noun after an article or "each"/"every", right before a verb the tables
    know ("The bakery bakes 40 rolls", "does the bakery make", "A hen lays" is not: "lays" is in no list): nouns
    for a rename ("bakery" -> "shop"), though not counted (_nouns), so not a category the asked sentence names."""
    out = set()
    for i in range(1, len(tokens) - 1):
        prev, tok, nxt = tokens[i - 1], tokens[i], tokens[i + 1]
        if prev.kind == tok.kind == nxt.kind == "word" and prev.key in ("a", "an", "the", "each", "every") \
                and tok.text[:1].islower() and not _fixed(tok.key) and not tok.key.endswith(("ing", "ed")) \
                and nxt.key in VERBS and nxt.text[:1].islower():
            out.add(lemma(tok.key))
    return frozenset(out)


# indefinite pronouns: capitalized at a sentence's start, acting like a person, never one ("Everyone buys 5")
_INDEFINITE = frozenset("everyone everybody someone somebody nobody anyone anybody nothing something everything "
                        "anything none no-one".split())


def _is_name(tok: Token) -> bool:
    return (tok.kind == "word" and tok.text[:1].isupper() and tok.key not in FUNCTION and tok.key not in MUST_AGREE
            and tok.key not in _INDEFINITE)


def _referents(tokens: Sequence[Token]) -> tuple[dict[int, str], dict[int, str]]:
    """For each gendered pronoun (by token index), the name it most likely stands for: the last name before it in
    its own sentence ("Mia rode her bike" -> Mia; "" when there is none), and for a pronoun that opens its
    sentence, the first name of the sentence before ("Mia picks 12 clams. She ..." -> Mia). A pronoun after a
    phrase of time or place that opens its sentence opens it too ("On Monday she gives ..."), and a sentence that
    names nobody, and no other person (no kinship or gendered noun, no pronoun of another gender), passes on the
    name its opening pronoun stands for, or else the one before it ("Mia drives. On Monday she gives 5 rides. She
    pays $2": Mia; "Mia plants 9 rows. Each row has 10 tomatoes. Her ...": Mia; not "Tom has 5 apples. His
    brother has 3. He ...": he may be the brother)."""
    inside: dict[int, str] = {}
    opening: dict[int, str] = {}
    last, first, previous, start, opened = "", "", "", True, ""
    phrase = False  # inside a phrase of time or place that opens the sentence ("On Monday", "At the end of ...")
    others = False  # the sentence speaks of a person by a kinship or gendered noun, or by a pronoun of another gender
    genders: set[str] = set()  # the genders of the sentence's pronouns
    named: list[str] = []  # the names of this sentence so far
    for k, tok in enumerate(tokens):
        if tok.kind == "punct" and tok.text in _SENTENCE_END:
            passed = "" if others or len(genders) > 1 else opened or previous
            last, previous, first, start, named, opened = "", first or passed, "", True, [], ""
            others, genders = False, set()
            continue
        if tok.kind == "word" and (lemma(tok.key) in KIN or lemma(tok.key) in GENDERED_NOUNS):
            others = True
        if tok.kind == "word" and tok.key in PRONOUNS:
            genders.add(PRONOUNS[tok.key][0])
        if start and tok.kind == "word" and (tok.key in _ADVERBIAL_OPENERS if not phrase else not (
                (tok.key in VERBS and not _before_subject(tokens, k)) or tok.key in _AUXILIARIES
                or tok.key in PRONOUNS or _is_name(tok))):
            phrase = True  # still the sentence's opening
            continue
        if start and phrase and (tok.kind == "number" or tok.text in ",-"):
            continue
        if tok.kind == "word" and tok.key in PRONOUNS:
            inside[k] = last
            if _object_of_subject(tokens, k, last):  # "Tariq gives her 5 snails": her is not Tariq
                earlier = [n for n in named if n != last]
                inside[k] = earlier[-1] if earlier else ""
                opening[k] = previous
            if start:
                opening[k] = previous
                last = previous  # "He gives 7 shrimps to his brother": his is He's
                opened = previous if tok.key in ("he", "she") else ""
        elif _is_name(tok) and named and k and (_is_name(tokens[k - 1]) or (
                tokens[k - 1].text == "-" and k > 1 and _is_name(tokens[k - 2]))):
            # a name of several words ("Xiao Wei", "Jean-Luc") is one referent: its last word, for the sentence's
            # first name as for the last one
            if first == named[-1] and len(named) == 1:
                first = lemma(tok.key)
            last = named[-1] = lemma(tok.key)
        elif _is_name(tok):
            last = lemma(tok.key)
            first = first or last
            named.append(last)
        start, phrase = False, False
    return inside, opening


def _before_subject(tokens: Sequence[Token], k: int) -> bool:
    """Whether the word at k stands right before a subject pronoun: no verb of its sentence then, but a noun or
    a gerund of the phrase that opens it ("In still water he paddles", "After shopping she ...")."""
    return k + 1 < len(tokens) and tokens[k + 1].key in ("he", "she", "they", "we", "i")


def _object_of_subject(tokens: Sequence[Token], k: int, last: str) -> bool:
    """Whether the pronoun at k is the object of a verb whose subject is the name right before the verb ("Tariq
    gives her 5 snails", "Ana helps him") or before its "to" ("asks Jim to give him"): an object pronoun never
    stands for its own clause's subject. "her" before a content word is a possessive ("Mia rode her bike") and
    stays Mia's."""
    tok = tokens[k]
    if tok.key not in ("him", "her") or k < 2 or not last:
        return False
    nxt = tokens[k + 1] if k + 1 < len(tokens) else None
    if tok.key == "her" and nxt is not None and nxt.kind == "word" and nxt.key not in FUNCTION:
        return False
    verb, subject = tokens[k - 1], tokens[k - 2]
    if subject.key == "to" and k >= 3:  # "Tom asks Jim to give him": Jim gives, so him is not Jim (NOTE-review8b)
        subject = tokens[k - 3]
    return verb.kind == "word" and verb.key in VERBS and _is_name(subject) and lemma(subject.key) == last


@lru_cache(maxsize=4096)
def name_gender(name: str) -> str | None:
    """m or f for a first name gender-guesser knows (mostly_* included), else None (not a person, or unknown)."""
    found = _detector().get_gender(name)
    return {"male": "m", "mostly_male": "m", "female": "f", "mostly_female": "f"}.get(found)


def _span_gender(name: str) -> str | None:
    """name_gender of a name of one or more words (a lemma, words joined by spaces): the gender its known words
    agree on, else None."""
    genders = {g for w in name.split(" ") if (g := name_gender(w)) is not None}
    return next(iter(genders)) if len(genders) == 1 else None


@lru_cache(maxsize=1)
def _detector() -> Any:
    import gender_guesser.detector

    return gender_guesser.detector.Detector(case_sensitive=False)


def _gerund(key: str) -> bool:
    """Whether a capitalized word ending in -ing is a verb's -ing form ("Running", "Baking": VERBS), not a name
    ("Tsering", "Xiaoming")."""
    return key.endswith("ing") and key in VERBS


def _person_names(tokens: Sequence[Token]) -> frozenset[str]:
    """The lemmas a text uses as people's names: first names gender-guesser knows, and any other capitalized word
    by its role in the sentence: followed by a possessive ("Tendai's"), a verb or an auxiliary ("Tendai buys",
    "Tendai has"), or, inside a sentence, ending a phrase ("gives 5 to Tendai."). Not a word after a number or
    before a content word ("20 TikTok friends"), not a plural, not a word ending in -ing."""
    out = set()
    inside, opening = _referents(tokens)
    referred = set(inside.values()) | set(opening.values())  # the names a gendered pronoun may stand for
    for k, tok in enumerate(tokens):
        if (not _is_name(tok) or tok.key in KIN or tok.key in CURRENCY_WORDS) and not _hyphen_head(tokens[k:k + 3], 0):
            continue
        if name_gender(tok.key):
            out.add(lemma(tok.key))
            continue
        prev = tokens[k - 1] if k else None
        # a hyphenated name's role is read after its end ("Ji-ho's", "Ji-ho buys")
        end = k + 2 if k + 2 < len(tokens) and tokens[k + 1].text == "-" and _hyphen_tail(tokens[k:k + 3], 2) else k
        nxt = tokens[end + 1] if end + 1 < len(tokens) else None
        if (prev is not None and prev.kind == "number") or _gerund(tok.key) or lemma(tok.key) != tok.key:
            continue
        after = tokens[end + 2] if end + 2 < len(tokens) else None
        # a word that qualifies the subject's noun is no name ("Car tires cost $50 each. She buys a full set": the
        # car is not who "She" is, and "Car" -> "Bike" changes the tires a set has)
        qualifies = after is not None and after.kind == "word" and after.text[:1].islower() and after.key in VERBS
        if tok.key in referred and (not _fixed(tok.key) or end > k) and nxt is not None and nxt.kind == "word" \
                and nxt.text[:1].islower() and nxt.key not in FUNCTION and not qualifies:
            out.add(tok.key)  # "Bongani cycles at 20 km an hour. His godmother ...": a person a pronoun stands for
            continue
        appositive = nxt is not None and nxt.text == "," and after is not None and after.key in ("the", "a")
        acts = nxt is not None and (nxt.kind == "poss" or (nxt.kind == "word" and (
            nxt.key in _AFTER_PERSON or nxt.key in VERBS or _verb_by_place(tokens, end + 1))))
        ends = prev is not None and not (prev.kind == "punct" and prev.text in _SENTENCE_END) and (
            nxt is None or nxt.kind == "punct" or (nxt.kind == "word" and nxt.key in FUNCTION))
        # the one given to, between a verb and an amount ("Mia gives Yaa 5 apples", "pays Vusi $5": NOTE-review8)
        given = prev is not None and prev.kind == "word" and prev.text[:1].islower() and prev.key in VERBS \
            and nxt is not None and (nxt.kind == "number" or (nxt.kind == "punct" and nxt.text not in ".,;:!?"))
        if appositive or acts or ends or given:
            out.add(lemma(tok.key))
    return frozenset(out)


def _persons(tokens: Sequence[Token]) -> dict[str, str]:
    """The people of a text: its names' lemmas with their gender (gender-guesser's; for a name it does not know,
    the gender of the pronouns that stand for it, where they agree), and the common nouns that name a person of a
    gender (sister, uncle)."""
    names = _person_names(tokens)
    people = {lemma(t.key): g for t in tokens if _is_name(t) and (g := name_gender(t.key)) is not None}
    # a name of two words whose words gender-guesser gives two genders is its first word's ("Duc Anh": Duc's, as
    # "Mary Thomas" is Mary's; NOTE-review8 1: the pronouns deciding let "He" be Mary Thomas)
    for k in range(len(tokens) - 1):
        first, second = lemma(tokens[k].key), lemma(tokens[k + 1].key)
        if _is_name(tokens[k]) and _is_name(tokens[k + 1]) and first in people and second in people \
                and people[first] != people[second]:
            people[second] = people[first]
    inside, opening = _referents(tokens)
    votes: dict[str, set[str]] = {}
    for k, tok in enumerate(tokens):
        if tok.kind == "word" and tok.key in PRONOUNS:
            ref = inside.get(k, "") or opening.get(k, "")
            if ref in names and ref not in people:
                votes.setdefault(ref, set()).add(PRONOUNS[tok.key][0])
    people |= {name: next(iter(g)) for name, g in votes.items() if len(g) == 1}
    people |= _sole_referent_genders(tokens, names)
    people |= _only_person_gender(tokens, names)
    return people | {lemma(t.key): GENDERED_NOUNS[lemma(t.key)] for t in tokens
                     if t.kind == "word" and lemma(t.key) in GENDERED_NOUNS}


# words before a noun or of their own that may name a person other than a text's only name (_only_person_gender)
# bare nouns that may name other people ("Tom hires help for 3 hours, and she pays")
_BARE_PEOPLE = frozenset("help family staff crew team friends people others group company".split())
_ANOTHER_PERSON = frozenset("a an the another someone somebody anyone anybody everyone everybody nobody no one "
                            "whoever".split()) | _BARE_PEOPLE


def _only_person_gender(tokens: Sequence[Token], names: frozenset[str]) -> dict[str, str]:
    """The gender of a text's only person: where the text names one person and speaks of no other (no kinship noun,
    no noun of _PEOPLE, no "the"/"a" before a word that may name one by its work: "the janitor") and every gendered
    pronoun has one gender, the pronouns stand for that person, whatever a name list says ("Malak walks dogs. She
    charges $5": Malak is a woman here; not "Mia asked the waiter for his pens")."""
    genders = {PRONOUNS[t.key][0] for t in tokens if t.kind == "word" and t.key in PRONOUNS}
    if len(names) != 1 or len(genders) != 1 or any(
            t.kind == "word" and (lemma(t.key) in KIN or lemma(t.key) in _PEOPLE or (
                k and tokens[k - 1].key in ("the", "a") and t.key.endswith(("er", "or", "ist", "ian"))))
            for k, t in enumerate(tokens)):
        return {}
    # before its first pronoun, the text names no one else: no noun after an article or a possessive, nothing like
    # "someone" ("Tom and a pal share 20 tickets. She takes 12": she is the pal, whatever the noun; review 38)
    first = next(k for k, t in enumerate(tokens) if t.kind == "word" and t.key in PRONOUNS)
    named = next((k for k, t in enumerate(tokens) if t.kind == "word" and lemma(t.key) in names), first)
    if named > first or any(t.kind == "poss" or (t.kind == "word" and t.key in _ANOTHER_PERSON)
                            for t in tokens[:first]):
        return {}
    return {next(iter(names)): next(iter(genders))}


def _sole_referent_genders(tokens: Sequence[Token], names: frozenset[str]) -> dict[str, str]:
    """The gender the text itself gives a name: the gender of every pronoun after it in a sentence where it is the
    only person before the pronoun ("Jin has 5 coins in his piggy bank": Jin is a man here, whatever a name list
    says), where all such pronouns agree. Another name, a kin or gendered noun, or any "the <noun>" ("Mia asked the
    waiter for his pens") before the pronoun may be whom it stands for: no override then."""
    votes: dict[str, set[str]] = {}
    before: set[str] = set()
    for k, tok in enumerate(tokens):
        if tok.kind == "punct" and tok.text in _SENTENCE_END:
            before = set()
        elif tok.kind == "word" and tok.key == "the" and k + 1 < len(tokens) and tokens[k + 1].kind == "word":
            before.add("the " + tokens[k + 1].key)  # "the waiter": may be the person the pronoun stands for
        elif tok.kind == "word" and tok.key in _BARE_PEOPLE:
            before.add(tok.key)  # "hires help ... she": may be whom the pronoun stands for
        elif tok.kind == "word" and tok.key in PRONOUNS:
            if len(before) == 1 and (only := next(iter(before))) in names:
                votes.setdefault(only, set()).add(PRONOUNS[tok.key][0])
        elif tok.kind == "word" and (_is_name(tok) or lemma(tok.key) in GENDERED_NOUNS or lemma(tok.key) in KIN):
            before.add(lemma(tok.key))
    return {name: next(iter(g)) for name, g in votes.items() if len(g) == 1}


def _currency(tok: Token, symbols: frozenset[str]) -> str | None:
    """The currency a token names (its code), or None; "pounds" ("won") is money only in a text that writes £ (₩)
    or, for "won" and "kip", writes the word right after an amount ("earns 720 won": _symbols). A symbol is a
    currency by its Unicode category (Sc: "₴", "₪", "₡"), whether the table knows it or not."""
    if tok.kind == "punct":
        known = CURRENCY_SYMBOLS.get(tok.text) or CURRENCY_PREFIXES.get(tok.text)  # a letter sign: "kr" of "kr90"
        return known or (f"sym:{tok.text}" if len(tok.text) == 1 and _whole_currency_symbol(tok.text) else None)
    if tok.kind != "word" or tok.key not in CURRENCY_WORDS or _AMBIGUOUS_CURRENCY.get(tok.key, "") not in symbols:
        return None
    code = CURRENCY_WORDS[tok.key]
    signs = [s[1:] for s in symbols if s.startswith("=") and _CURRENCY_FAMILY[s[1:]] == code]
    return signs[0] if len(signs) == 1 else code  # "dollars" in a text that writes A$: aud


def currencies_of(text: str) -> frozenset[str]:
    """The currencies (codes) a text names, as the alignment reads them ("dollars" in a text that writes A$: aud)."""
    tokens = tokens_of(text)
    symbols = _symbols(tokens)
    return frozenset(c for k, t in enumerate(tokens) if (c := _currency(t, symbols)) is not None
                     and not _hyphen_head(tokens[k:k + 3], 0))  # "Dong-hyun" is no dong


def money_at(text: str, start: int) -> bool:
    """Whether the number starting at character `start` is an amount of money: a currency sign or letter sign right
    before it ("$2", "Kč2") or a currency word right after it ("2 dollars"), as alignment reads currencies."""
    tokens = tokens_of(text)
    at = next((k for k, t in enumerate(tokens) if t.start == start and t.kind == "number"), None)
    if at is None:
        return False
    symbols = _symbols(tokens)
    return any(0 <= k < len(tokens) and _currency(tokens[k], symbols) is not None for k in (at - 1, at + 1))


def _symbols(tokens: Sequence[Token]) -> frozenset[str]:
    """The currency symbols a text writes that make an ambiguous word money ("£" for "pounds", "₩" for "won"), or
    stands for by writing "won" or "kip" right after an amount ("costs 7 won"), with "" (a word not ambiguous is
    always money)."""
    return frozenset({""} | {t.text for t in tokens if t.kind == "punct" and t.text in _AMBIGUOUS_CURRENCY.values()}
                     | {f"={code}" for t in tokens if t.kind == "punct" and (code := CURRENCY_PREFIXES.get(
                         t.text, CURRENCY_SYMBOLS.get(t.text))) in _CURRENCY_FAMILY}  # a sign its family's word names
                     | {_AMBIGUOUS_CURRENCY[t.key] for k, t in enumerate(tokens) if k and t.key in _MONEY_AFTER_AMOUNT
                        and tokens[k - 1].kind == "number"})


@dataclass(frozen=True)
class _Texts:
    """What alignment reads off each whole text (routed, question): its nouns and its pronouns' referents."""

    nouns: tuple[frozenset[str], frozenset[str]]
    referents: tuple[tuple[dict[int, str], dict[int, str]], tuple[dict[int, str], dict[int, str]]]
    index: tuple[dict[int, int], dict[int, int]]  # id(token) -> position in its text
    persons: tuple[dict[str, str], dict[str, str]]  # name lemma -> gender
    names: tuple[frozenset[str], frozenset[str]]  # the lemmas each text uses as people's names
    pound_symbol: tuple[frozenset[str], frozenset[str]]  # the symbols of _AMBIGUOUS_CURRENCY each text writes (£, ₩)
    tokens: tuple[Sequence[Token], Sequence[Token]]

    @classmethod
    def of(cls, theirs: Sequence[Token], mine: Sequence[Token]) -> _Texts:
        return cls((_nouns(theirs), _nouns(mine)), (_referents(theirs), _referents(mine)),
                   ({id(t): k for k, t in enumerate(theirs)}, {id(t): k for k, t in enumerate(mine)}),
                   (_persons(theirs), _persons(mine)), (_person_names(theirs), _person_names(mine)),
                   (_symbols(theirs), _symbols(mine)), (theirs, mine))

    def clause_subject(self, tok: Token, side: int) -> frozenset[str]:
        """For an object pronoun ("him", "her" before no content word), the person its own clause's subject names,
        where that subject is one kinship noun after "his"/"her" or one name ("his son-in-law rolls the fleeces for
        him": son-in-law): an object pronoun never stands for its own clause's subject ("himself" would). Only the
        subject's head, never its owner ("Sara's uncle gives her": her may be Sara), and none where another verb or
        "to" stands between the clause's verb and the pronoun ("Tom says Bob owes him", "asks Jim to give him";
        NOTE-review8b). Else none."""
        tokens, k = self.tokens[side], self.index[side][id(tok)]
        nxt = tokens[k + 1] if k + 1 < len(tokens) else None
        if tok.key not in ("him", "her") or (tok.key == "her" and nxt is not None and nxt.kind == "word"
                                              and nxt.key not in FUNCTION):
            return frozenset()
        start = k
        while start > 0 and not (tokens[start - 1].kind == "punct" and tokens[start - 1].text in ".?!,;") \
                and tokens[start - 1].key not in _CLAUSE_OPENERS:
            start -= 1
        verbs = [j for j in range(start, k) if tokens[j].kind == "word" and tokens[j].text[:1].islower()
                 and (tokens[j].key in VERBS or tokens[j].key in _AUXILIARIES or _verb_by_place(tokens, j))]
        if not verbs or any(tokens[j].key == "to" for j in range(verbs[0], k)) or any(
                j != verbs[0] and tokens[j].key not in _AUXILIARIES for j in verbs):
            return frozenset()
        subject = [t for t in tokens[start:verbs[0]] if t.kind == "word" or t.text == "-"]
        if len(subject) >= 2 and subject[0].key in ("his", "her") and self._one_kin(subject[1:]):
            return frozenset({lemma(_kin_head(subject[1:]).key), _span_key(subject[1:])})
        if 1 <= len(subject) <= 3 and all(_is_name(t) for t in subject):
            return frozenset({lemma(t.key) for t in subject})
        return frozenset()

    @staticmethod
    def _one_kin(span: Sequence[Token]) -> bool:
        """Whether the words are one kinship noun ("uncle", "son - in - law", "piano teacher")."""
        head = _kin_head(span)
        return lemma(head.key) in KIN and all(t.kind == "word" and t.text[:1].islower() and t.key not in PRONOUNS
                                              or t.text == "-" for t in span)

    def possessed(self, tok: Token, side: int) -> frozenset[str]:
        """The kinship or gendered noun right after a possessive pronoun ("her uncle" -> uncle), as its word and as
        the span of words it ends ("her great-aunt" -> aunt, "great - aunt"), else none."""
        tokens, k = self.tokens[side], self.index[side][id(tok)]
        if tok.key not in ("his", "her"):
            return frozenset()
        for end in range(k + 1, min(k + 5, len(tokens))):
            nxt = tokens[end]
            if nxt.kind != "word" and nxt.text != "-":
                break
            word = lemma(nxt.key)
            if word in KIN or word in GENDERED_NOUNS:
                if [t.key for t in tokens[end + 1:end + 5]] in (["-", "in", "-", "law"], ["-", "in", "-", "laws"]):
                    end += 4  # "her mother-in-law": the whole noun
                return frozenset({word, _span_key(tokens[k + 1:end + 1])})
            if nxt.kind == "word" and (_fixed(nxt.key) or not nxt.text[:1].islower()) \
                    and not _kin_part(tokens[k + 1:end + 2], end - k - 1):
                break
        return frozenset()

    def currency(self, tok: Token, side: int) -> str | None:
        return _currency(tok, self.pound_symbol[side])

    @property
    def currencies(self) -> tuple[frozenset[str], frozenset[str]]:
        """The currencies (codes) each text names."""
        return (frozenset(c for t in self.tokens[0] if (c := self.currency(t, 0)) is not None),
                frozenset(c for t in self.tokens[1] if (c := self.currency(t, 1)) is not None))

    def subject_referent(self, tok: Token, side: int) -> str:
        """The name before the pronoun in its sentence; for a subject pronoun that opens its sentence, or a
        possessive one that does, the previous sentence's first name where it is of the pronoun's gender ("Ana
        earns $5. She saves $2": Ana, as in "Ana earns $5, and she saves $2"; "Ana reads 8 pages. Her book has
        120": Ana, as in "Ana reads 8 pages, and her book has 120")."""
        inside = self.referent(tok, side)
        tokens, k = self.tokens[side], self.index[side][id(tok)]
        # a possessive (before its noun) that opens its sentence, or follows only a phrase opening it
        opens = k in self.referents[side][1] and k + 1 < len(tokens) and tokens[k + 1].kind == "word" \
            and tokens[k + 1].key not in FUNCTION
        if inside or not (tok.key in ("he", "she") or (tok.key in ("his", "her") and opens)):
            return inside
        before = self.referent(tok, side, opening=True)
        return before if before and self.persons[side].get(before) == PRONOUNS[tok.key][0] else ""

    def referent(self, tok: Token, side: int, opening: bool = False) -> str:
        """The name before the pronoun in its sentence; with `opening`, else the previous sentence's first name
        for a pronoun that opens its sentence."""
        inside, before = self.referents[side]
        k = self.index[side][id(tok)]
        return inside.get(k, "") or (before.get(k, "") if opening else "")


@dataclass(frozen=True)
class NumberBinding:
    param: int  # the routed problem's number index (the program's kvp_<param>)
    routed: str
    question: str
    context: str  # the routed problem's words around its number

    def as_dict(self) -> dict[str, Any]:
        return {"param": self.param, "routed": self.routed, "question": self.question, "context": self.context}


@dataclass(frozen=True)
class Alignment:
    aligned: bool
    reason: str
    failed_at: str | None = None  # count | body | asked | kept (None when aligned)
    bindings: tuple[NumberBinding, ...] = ()
    renames: tuple[tuple[str, str], ...] = ()  # (routed word, question word), first occurrence order
    sentence_order: tuple[int, ...] = ()  # for each sentence of the question, the routed sentence it aligns with
    kept: float = 0.0  # share of the routed problem's words kept as they are
    objects: tuple[str, ...] = ()  # the routed problem's words renamed as objects (not people), singular

    @property
    def values(self) -> list[str]:
        """The question's numbers in parameter order."""
        return [b.question for b in sorted(self.bindings, key=lambda b: b.param)]

    def as_dict(self) -> dict[str, Any]:
        return {"aligned": self.aligned, "reason": self.reason, "failed_at": self.failed_at,
                "bindings": [b.as_dict() for b in self.bindings], "renames": [list(r) for r in self.renames],
                "sentence_order": list(self.sentence_order), "kept": round(self.kept, 3),
                "objects_renamed": list(self.objects)}


class _Refused(Exception):
    pass


@dataclass
class _Mapping:
    """The renames so far: routed lemma <-> question lemma, and routed gender <-> question gender, each a
    bijection; where each rename was seen (asked sentence or not)."""

    forward: dict[str, str] = field(default_factory=dict)
    backward: dict[str, str] = field(default_factory=dict)
    genders: dict[str, str] = field(default_factory=dict)
    genders_back: dict[str, str] = field(default_factory=dict)
    shown: dict[tuple[str, str], str] = field(default_factory=dict)  # lemma pair -> the words as first written
    in_body: set[tuple[str, str]] = field(default_factory=set)
    in_asked: set[tuple[str, str]] = field(default_factory=set)
    pronouns: list[tuple[Token, Token, tuple[str, str]]] = field(default_factory=list)
    objects: set[str] = field(default_factory=set)  # routed lemmas renamed as objects (not as people)

    def copy(self) -> _Mapping:
        return _Mapping(dict(self.forward), dict(self.backward), dict(self.genders), dict(self.genders_back),
                        dict(self.shown), set(self.in_body), set(self.in_asked), list(self.pronouns),
                        set(self.objects))

    def link(self, routed: Token, mine: Token, asked: bool) -> None:
        a, b = lemma(routed.key), lemma(mine.key)
        if self.forward.setdefault(a, b) != b:
            raise _Refused(f"{routed.text!r} of the routed problem would stand for both "
                           f"{self._word(a, self.forward[a])!r} and {mine.text!r}")
        if self.backward.setdefault(b, a) != a:
            raise _Refused(f"{mine.text!r} would stand for both {self._word(self.backward[b], b, False)!r} and "
                           f"{routed.text!r} of the routed problem")
        self._seen((a, b), f"{routed.text}\0{mine.text}", asked)

    def update(self, other: _Mapping) -> None:
        self.__dict__.update(other.__dict__)

    def link_key(self, a: str, b: str, shown: str, asked: bool, currency: bool = False) -> None:
        """A rename by keys (an object of several words, a currency), a bijection like `link`."""
        what = "currency" if currency else "object"
        if self.forward.setdefault(a, b) != b or self.backward.setdefault(b, a) != a:
            first = self.shown.get((a, self.forward[a])) or self.shown.get((self.backward[b], b)) or ""
            raise _Refused(f"{shown.replace(chr(0), ' -> ')!r} renames a {what} unlike "
                           f"{first.replace(chr(0), ' -> ')!r} elsewhere" + (" (a question mixing currencies)"
                                                                             if currency else ""))
        self._seen((a, b), shown, asked)

    def link_gender(self, routed: Token, mine: Token, referents: tuple[str, str]) -> None:
        """A pronoun for a pronoun: the same grammatical role, and the gender of each referent (the name before it
        in its sentence, else none) renamed alike everywhere. Whom it may stand for is checked once every name's
        rename is known (_people_agree)."""
        (ga, ra), (gb, rb) = PRONOUNS[routed.key], PRONOUNS[mine.key]
        if not set(ra.split("|")) & set(rb.split("|")):
            raise _Refused(f"the pronoun {routed.text!r} is {mine.text!r} here, another grammatical role")
        a, b = f"{referents[0]}<{ga}>", f"{referents[1]}<{gb}>"
        if self.genders.setdefault(a, b) != b or self.genders_back.setdefault(b, a) != a:
            raise _Refused(f"the pronoun {routed.text!r} -> {mine.text!r} renames a gender unlike the rest")
        self.pronouns.append((routed, mine, referents))
        self._seen((f"<{ga}>", f"<{gb}>"), f"{routed.text}\0{mine.text}", None)

    def _seen(self, pair: tuple[str, str], shown: str, asked: bool | None) -> None:
        self.shown.setdefault(pair, shown)
        if pair[0] != pair[1] and asked is not None:
            (self.in_asked if asked else self.in_body).add(pair)

    @property
    def renames(self) -> list[tuple[str, str]]:
        return [p for p in self.shown if p[0] != p[1]]

    def _word(self, a: str, b: str, second: bool = True) -> str:
        shown = self.shown.get((a, b))
        return shown.split("\0")[1 if second else 0] if shown else (b if second else a)


def _fixed(key: str) -> bool:
    """A word no rename may touch: function words, MUST_AGREE (as written or in the singular), verbs."""
    return any(w in FUNCTION or w in MUST_AGREE or w in VERBS or w in CURRENCY_WORDS for w in (key, lemma(key)))


def shape_word(word: str) -> bool:
    """Whether a (case-folded) word is part of a problem's shape: a word no slot renames (verbs, units, time,
    comparatives, quantifiers), currencies excepted (a currency is a slot)."""
    return word not in CURRENCY_WORDS and lemma(word) not in KIN and _fixed(word)


def rename_kind(routed: Token, mine: Token, texts: _Texts) -> str | None:
    """`person` (two words each text uses as a person's name: a known first name, or a capitalized word by its role
    in the sentence), `kin` (two kinship or role nouns: uncle -> brother), `object` (two words used as nouns in
    their texts, capitalized or not, neither fixed), or None: not a rename."""
    a, b = routed.key, mine.key
    if lemma(a) in KIN and lemma(b) in KIN:
        # one person for several ("his uncle" -> "his uncles", "his parents"): another count of people
        return "kin" if (a == lemma(a)) == (b == lemma(b)) else None
    if _fixed(a) or _fixed(b) or any((w.endswith(("est", "ly")) and len(w) > 4) or w in _GRADABLE for w in (a, b)):
        return None  # superlatives, adverbs, degrees ("the cheapest", "weekly", "the heavy load") are never slots
    if routed.text[:1].isupper() and mine.text[:1].isupper() and (
            (lemma(a) in texts.names[0] and lemma(b) in texts.names[1])
            or (lemma(a) in texts.names[0] and _name_like(mine, 1, texts))
            or (lemma(b) in texts.names[1] and _name_like(routed, 0, texts))
            or (_name_like(routed, 0, texts) and _name_like(mine, 1, texts))):
        return "person"
    if lemma(a) in KIN or lemma(b) in KIN:
        return None  # a person's kin for an object: another quantity
    if routed.text[:1].isupper() != mine.text[:1].isupper():
        return None
    nouns = [texts.nouns[side] | _subject_nouns(tuple(texts.tokens[side])) for side in (0, 1)]
    return "object" if lemma(a) in nouns[0] and lemma(b) in nouns[1] else None


def _name_like(tok: Token, side: int, texts: _Texts) -> bool:
    """Whether a capitalized word may be a person's name its text does not show by a name list or by its role
    ("Zuberi stitches 12 quilts": "stitches" is in no verb list): capitalized, no rule fixes it, not a kinship or
    currency word, not a plural, never after a number ("20 TikTok friends"). It is a person only where it aligns
    with a word the other text uses as a person's name (rename_kind); a word the text also uses as a common noun
    ("Market ... the market") breaks the rename's bijection, the lemma being one."""
    if not _is_name(tok) or tok.key in KIN or tok.key in CURRENCY_WORDS or _fixed(tok.key) \
            or lemma(tok.key) != tok.key or _gerund(tok.key):
        return False
    tokens = texts.tokens[side]
    if any(t.kind == "word" and t.key == tok.key and k and tokens[k - 1].kind == "number"
           for k, t in enumerate(tokens)):
        return False
    return _capitalized_inside_a_sentence(tok, side, texts)


def _capitalized_inside_a_sentence(tok: Token, side: int, texts: _Texts) -> bool:
    """Whether its text writes the word capitalized somewhere other than at a sentence's start: a proper noun is
    ("... does Zuberi sew?"); a common noun or pronoun opening its sentences ("Children buy 5 apples", "Nothing
    ...") is not."""
    tokens = texts.tokens[side]
    return any(t.kind == "word" and t.text == tok.text and k and not (tokens[k - 1].kind == "punct"
                                                                       and tokens[k - 1].text in ".?!")
               for k, t in enumerate(tokens))


def _modifies(tokens: Sequence[Token], i: int, nouns: frozenset[str]) -> bool:
    """Whether the word at i qualifies the counted noun after it ("5 wrong answers", "6 ripe apples")."""
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    return nxt is not None and nxt.kind == "word" and lemma(nxt.key) in nouns


# words a rule fixes that may stand inside an object's name, before its noun ("a rusty old station wagon")
_NAME_ADJECTIVES = frozenset("old new".split())
# words that may head an object's name before "of" though a rule fixes them ("a pair of socks" is one object)
_OF_HEADS = frozenset("pair pairs".split())


def _span_key(span: Sequence[Token]) -> str:
    return " ".join(lemma(t.key) if t.kind == "word" else t.text for t in span)


def _object_span(tokens: Sequence[Token], i1: int, i2: int, nouns: frozenset[str],
                 whole: Sequence[Token] = ()) -> bool:
    """Whether tokens[i1:i2] is one object's name of one to six words ("marbles", "toy trucks", "yo-yos"): a
    noun of its text (counted or headed by a determiner) or a plural as its last word, after a number, a
    function word that is no subject ("on stickers", "of the toy trucks") or a possessive; before it only words no
    rule fixes (hyphens allowed, and the first part of a hyphenated word is no word of its own: "double-decker
    bus"; the transfer's constants check does not let a renamed object's words explain a constant); and the whole
    phrase: no content word right after it."""
    span = tokens[i1:i2]
    if span and span[-1].kind == "word" and (at := _qualified_at(tokens, i1, i2)) is not None:
        # a name with a phrase that places or qualifies it ("rabbits in the back shed", "the factory that makes
        # frozen pizza"): its head part is an object's name, and nothing but the phrase follows it
        return _object_span(tokens, i1, at, nouns, whole) and not _noun_may_follow(tokens, i2, participle=False)
    if not 1 <= len(span) <= 6 or span[-1].kind != "word":
        return False
    # a word of the name's age before it stands outside the span as the diff keeps it ("to pay for new sets of
    # drums" -> "new footballs"): what comes before it decides
    before = i1 - 1
    while before > 0 and tokens[before].kind == "word" and tokens[before].key in _NAME_ADJECTIVES:
        before -= 1
    prev = tokens[before] if i1 else None
    # after a number, a possessive, "many", a function word that is no subject, or a verb's object ("sells
    # coconuts from a stall" -> "sells cans of soda from a stall"; "are baking flapjacks", an -ing form after an
    # auxiliary)
    progressive = before >= 1 and tokens[before - 1].key in _AUXILIARIES
    if prev is None or not (prev.kind in ("number", "poss") or (prev.kind == "word" and (
            prev.key in ("many", "much", "dozen", "dozens") or (prev.key in FUNCTION and prev.key not in _SUBJECTS)
            or (prev.key in VERBS and prev.text[:1].islower() and (progressive or not prev.key.endswith("ing")))
            or _verb_by_place(tokens, before, whole)))):
        return False
    # its noun: the last word, or the word before "of" ("cans of soda": cans)
    heads = [span[-1].key] + [span[k - 1].key for k in range(1, len(span) - 1) if span[k].key == "of"]
    # "one shirt", "a coffee shop", "her aunt's kitchen"
    counted = (prev.kind == "word" and prev.key in (*_DETERMINERS, "one")) or prev.kind == "poss"
    if not any(lemma(h) in nouns or lemma(h) != h or isinstance(_inflect().singular_noun(h), str) for h in heads) \
            and not counted and not _headed_elsewhere(whole or tokens, [t.key for t in span]):
        return False  # a singular noun must be counted or headed by a determiner ("a coffee shop")
    if span[0].text[:1].isupper():
        return False
    # after an article and before no object, a noun phrase, verbs or not ("a bean plant"; not "her buy 3 apples")
    after = tokens[i2] if i2 < len(tokens) else None
    headed = prev.kind == "word" and prev.key in ("a", "an", "the") and not (
        after is not None and (after.kind == "number" or after.key in _DETERMINERS))
    if any(t.kind == "word" and _selecting(t.key) for t in span):
        return False  # "the cheapest item" -> "the priciest thing": a word that picks one of several is no name
    if any(t.kind == "word" and t.key in _GRADABLE for t in span) and (
            span[-1].key in _GRADABLE or (prev.key in _DEFINITE
                                          and not _introduced(whole or tokens, [t.key for t in span]))):
        # "the fast vehicle", "5 [hot] drinks": a degree that picks one; not "a small tub", nor "the tiny rubber
        # ducks" after "12 tiny rubber ducks" (the name of a kind the text brought in)
        return False
    after_of = False  # a noun phrase follows "of" inside the name ("bottles of sparkling water"): verbs or not
    for k, tok in enumerate(span):
        if tok.kind == "punct" and tok.text == "-":
            continue
        if tok.kind != "word" or tok.key in PRONOUNS or lemma(tok.key) in KIN or lemma(tok.key) in GENDERED_NOUNS:
            return False
        if k + 2 < len(span) and span[k + 2].kind == "word" and _hyphen_joined(tok, span[k + 1], span[k + 2]):
            continue  # the first part of a hyphenated word is no word of its own ("double-decker bus": no double)
        if 2 <= k < len(span) - 1 and span[k - 2].kind == "word" and _hyphen_joined(span[k - 2], span[k - 1], tok) \
                and not any(w in FUNCTION or w in MUST_AGREE or w in CURRENCY_WORDS
                            for x in (tok, span[k - 2]) for w in (x.key, lemma(x.key))):
            continue  # nor its second part, before the name's noun ("flat-pack desks": pack, a verb alone; not
            # "half-price tickets", whose words must agree)
        inner = 0 < k < len(span) - 1
        if after_of and not any(w in FUNCTION or w in MUST_AGREE or w in CURRENCY_WORDS
                                for w in (tok.key, lemma(tok.key))):
            continue
        if k < len(span) - 1 and span[k + 1].key == "of" and lemma(tok.key) != tok.key \
                and lemma(tok.key) in FUNCTION and tok.key not in FUNCTION \
                and not any(w in MUST_AGREE or w in VERBS or w in CURRENCY_WORDS for w in (tok.key, lemma(tok.key))):
            continue  # a plural of a function word is a noun ("cans of soda": the modal "can" has no plural)
        if inner and tok.key == "of" and span[k - 1].kind == "word" and span[k + 1].kind == "word" \
                and not any(w in FUNCTION or w in MUST_AGREE or w in CURRENCY_WORDS
                            for w in (span[k + 1].key, lemma(span[k + 1].key))):
            after_of = True
            continue  # "pair of socks": "of" between two words of the name
        if k + 2 < len(span) and tok.key in _OF_HEADS and span[k + 1].key == "of":
            continue  # a container counted as the object ("4 pairs of socks" -> "4 hats"; not "4 kilograms of")
        if k < len(span) - 1 and tok.key.endswith(("ing", "ed")) and tok.key in VERBS \
                and not any(w in FUNCTION or w in MUST_AGREE or w in CURRENCY_WORDS for w in (tok.key, lemma(tok.key))):
            continue  # a verb form that qualifies the name's last word ("trading cards", "baked beans")
        if tok.key in _NAME_ADJECTIVES and inner:
            continue  # "a rusty old station wagon": a word of the name, renamed with it ("the old vehicle" is not)
        if k == len(span) - 1 and len(span) > 1 and _plural_noun_not_verb(tok.key):
            continue  # "chopped fresh spinach leaves": a plural noun that is also a verb's form
        if _fixed(tok.key) and not (headed and not any(w in FUNCTION or w in MUST_AGREE or w in CURRENCY_WORDS
                                                        for w in (tok.key, lemma(tok.key)))):
            return False
    return not _noun_may_follow(tokens, i2)


def _headed_elsewhere(tokens: Sequence[Token], keys: list[str]) -> bool:
    """Whether the text writes this whole name after a determiner somewhere, before no content word a rule leaves
    free ("lays grey twist pile carpet ... The grey twist pile carpet costs"): a mass noun's name, though nothing
    counts it. Never a name with "of" inside ("pairs of socks": the pairs count, NOTE-review9c)."""
    if "of" in keys:
        return False
    n = len(keys)
    for k in range(1, len(tokens) - n + 1):
        if [t.key for t in tokens[k:k + n]] == keys and tokens[k - 1].kind == "word" \
                and tokens[k - 1].key in _DETERMINERS:
            nxt = tokens[k + n] if k + n < len(tokens) else None
            if nxt is None or nxt.kind != "word" or _fixed(nxt.key):
                return True
    return False


def _noun_may_follow(tokens: Sequence[Token], i2: int, participle: bool = True) -> bool:
    """Whether the word after a name may be the noun it qualifies ("5 toy truck wheels"): a content word no rule
    fixes, other than (where `participle`) a participle that qualifies the whole name ("4 rain jackets priced
    at") or a colour that ends the clause, saying what the thing is made ("painting her aunt's bedroom green.")."""
    nxt = tokens[i2] if i2 < len(tokens) else None
    if nxt is None or nxt.kind != "word" or _fixed(nxt.key):
        return False
    after = tokens[i2 + 1] if i2 + 1 < len(tokens) else None
    if nxt.key in _COLOURS and (after is None or after.kind == "punct" or after.key in FUNCTION):
        return False
    return not (participle and len(nxt.key) > 4 and nxt.key.endswith("ed") and not nxt.key.endswith("eed"))


# words that open a clause of its own inside a sentence (clause_subject)
_CLAUSE_OPENERS = frozenset("and but while who which that then so when if because after before until since as "
                            "once although though unless whereas where or".split())
_COLOURS = frozenset("white black red green blue yellow orange purple pink brown grey gray silver gold".split())


def _verb_by_place(tokens: Sequence[Token], k: int, whole: Sequence[Token] = ()) -> bool:
    """Whether the word at k is a verb no table knows by its place: a lowercase -s form right after "he", "she", a
    kinship noun or a person's name ("she hems skirts", "Duc Anh shears merino sheep"), no word a rule fixes. The
    name is one by a name list, by a name before it, or by being capitalized inside a sentence of the text
    (`whole`): a word capitalized only at a sentence's start may qualify a noun ("Car tires cost $50": review 3)."""
    tok, name = tokens[k], tokens[k - 1] if k >= 1 else None
    if name is None or tok.kind != "word" or not tok.text[:1].islower() or not tok.key.endswith("s") \
            or len(tok.key) <= 3 or _fixed(tok.key):
        return False
    text = whole or tokens
    name = _kin_head(tokens[max(0, k - 5):k])  # "his son-in-law rolls": son
    if name.kind == "word" and name.key == lemma(name.key) and (name.key in KIN or name.key in GENDERED_NOUNS):
        return True  # "his uncle rolls the fleeces": one person's kinship noun
    return name.key in ("he", "she") or (_is_name(name) and (
        name_gender(name.key) is not None or (k >= 2 and _is_name(tokens[k - 2]))
        or any(t.key == name.key and i and not (text[i - 1].kind == "punct" and text[i - 1].text in _SENTENCE_END)
               for i, t in enumerate(text))))


# words of price that pick one of several things ("the cheap one"); superlatives pick one too (_selecting)
_SELECTING = frozenset("cheap expensive pricey pricy costly dear inexpensive affordable".split())
_DEFINITE = frozenset("the this that these those".split())
# adjectives of degree that pick one of several things by comparing them ("the fast vehicle", "the big container",
# "the heavy load", "hot drinks"): never renamed alone, changed in a compound name, or inside a name after "the"
# that the text did not bring in without it (review 7)
_GRADABLE = frozenset("""big large huge giant tiny small fast quick slow long short tall heavy light hot cold warm cool
    young full empty thick thin wide narrow high low deep shallow strong weak good bad early late hard soft loud quiet
    rich poor dark bright wet dry clean dirty fresh stale ripe rotten raw cooked far near close distant""".split())
# nouns that end in -est like a superlative
_EST_NOUNS = frozenset("forest forests chest chests vest vests nest nests pest pests test tests guest guests "
                       "interest interests harvest harvests contest contests request requests protest protests quest "
                       "quests crest crests conquest digest west east".split())


def _introduced(tokens: Sequence[Token], keys: list[str]) -> bool:
    """Whether the text writes these words somewhere after no definite determiner ("12 tiny rubber ducks")."""
    n = len(keys)
    return any([t.key for t in tokens[k:k + n]] == keys and (k == 0 or tokens[k - 1].key not in _DEFINITE)
               for k in range(len(tokens) - n + 1))


def _selecting(key: str) -> bool:
    """Whether a word picks one thing of several by comparing them: a superlative ("cheapest", "priciest",
    "biggest"; not a noun such as "forest" or "guest") or a word of price ("cheap", "expensive")."""
    return key in _SELECTING or (len(key) > 4 and key.endswith("est") and key not in _EST_NOUNS)


# words that open a phrase placing or qualifying an object's name inside it ("rabbits in the back shed", "a quiz for
# charity", "the factory that makes frozen pizza")
_QUALIFYING = frozenset("in on under at near behind beside by for from".split())
_RELATIVE = frozenset("that which".split())
_PLACE_ADJECTIVES = frozenset("back front side top bottom upper lower old new".split())  # "in the back shed"


def _head(tokens: Sequence[Token], i1: int, i2: int) -> Token:
    """The word a name of tokens[i1:i2] ends on before any phrase that places or qualifies it."""
    at = _qualified_at(tokens, i1, i2)
    return tokens[(at if at is not None else i2) - 1]


def _qualified_at(tokens: Sequence[Token], i1: int, i2: int) -> int | None:
    """Where a phrase that places or qualifies the name tokens[i1:i2] starts, or None: a preposition of place or
    purpose (_QUALIFYING), an optional article and one to three words, or "that"/"which", a verb in -s and one to
    three words; every word of the phrase lowercase and no word a rule fixes (no number, unit, time, money, person,
    pronoun or possessive: "apples for 5 dollars", "pens for each child", "cakes in the morning" stay as they
    are), at least one word of the name before it."""
    for k in range(i1 + 1, i2 - 1):
        tok = tokens[k]
        if tok.kind != "word" or (tok.key not in _QUALIFYING and tok.key not in _RELATIVE):
            continue
        rest = list(tokens[k + 1:i2])
        if tok.key in _RELATIVE:
            if not rest or rest[0].key not in VERBS or not rest[0].key.endswith("s"):
                return None
            rest = rest[1:]
        elif rest and rest[0].key in ("the", "a", "an"):
            rest = rest[1:]
        if not 1 <= len(rest) <= 3 or any(
                t.kind != "word" or not t.text[:1].islower() or (_fixed(t.key) and not (
                    t.key in _PLACE_ADJECTIVES and n < len(rest) - 1)) or t.key in PRONOUNS
                or lemma(t.key) in KIN or lemma(t.key) in GENDERED_NOUNS or lemma(t.key) in _PEOPLE
                for n, t in enumerate(rest)):
            return None
        return k
    return None


def _pair(theirs: Sequence[Token], mine: Sequence[Token], asked: bool, mapping: _Mapping,
          texts: _Texts) -> list[tuple[Token, Token]]:
    """Align one statement (clause) or the asked sentence of the question with one of the routed problem, adding
    to `mapping`; the (routed, question) number pairs, or _Refused with the first difference that is not a
    slot. Where the word diff refuses and both sides write a hyphen, the diff is tried once more with no hyphen
    of one side matching one of the other: the hyphens of two names renamed ("Min-jun and his grandson" ->
    "Saoirse and her great-grandfather") are no common word, and the same rules judge every pair again."""
    if not any(t.text == "-" for t in theirs) or not any(t.text == "-" for t in mine):
        return _pair_by(theirs, mine, asked, mapping, texts, hyphens=True)  # no second diff to try: no copy
    first = mapping.copy()
    try:
        found = _pair_by(theirs, mine, asked, first, texts, hyphens=True)
    except _Refused as why:
        second = mapping.copy()
        try:
            found = _pair_by(theirs, mine, asked, second, texts, hyphens=False)
        except _Refused:
            raise why from None
        mapping.update(second)
        return found
    mapping.update(first)
    return found


def _pair_by(theirs: Sequence[Token], mine: Sequence[Token], asked: bool, mapping: _Mapping, texts: _Texts,
             hyphens: bool) -> list[tuple[Token, Token]]:
    """_pair with one word diff: `hyphens` False keys each hyphen apart, so that none of one side matches one of
    the other."""
    numbers: list[tuple[Token, Token]] = []

    def gender(into: _Mapping, r: Token, m: Token) -> None:
        into.link_gender(r, m, (texts.subject_referent(r, 0), texts.subject_referent(m, 1)))

    def one(into: _Mapping, r: Token, m: Token, found: list[tuple[Token, Token]]) -> None:
        """One routed token against one question token."""
        if "money" in (r.kind, m.kind):  # "How much money" for "How many pounds" (_asked_frame)
            if r.kind == m.kind:
                return
            other, side = (m, 1) if r.kind == "money" else (r, 0)
            if other.kind != "word" or texts.currency(other, side) is None:
                raise _Refused(f"{r.text!r} -> {m.text!r} changes a word that must agree")
            return
        cr, cm = texts.currency(r, 0), texts.currency(m, 1)
        if cr is not None or cm is not None:
            if cr is None or cm is None or (r.kind == "punct") != (m.kind == "punct"):
                raise _Refused(f"{r.text!r} -> {m.text!r} changes a word that must agree")
            into.link_key(f"<cur:{cr}>", f"<cur:{cm}>", f"{r.text}\0{m.text}", asked, currency=True)
        elif r.key != m.key and r.kind == m.kind == "word" and lemma(r.key) == lemma(m.key) \
                and (lemma(r.key) in KIN or lemma(r.key) in _PEOPLE):
            # "his uncle" -> "his uncles", "his friend" -> "his friends": another count of people
            raise _Refused(f"{r.text!r} -> {m.text!r} changes how many people a kinship noun names")
        elif r.kind == m.kind == "word" and r.key != m.key and r.key in VERBS and m.key in VERBS \
                and (_third_person(r.key, m.key) or _third_person(m.key, r.key)):
            # "Sara shares" -> "Tom-Mia share": another number of people does it (NOTE-review10c)
            raise _Refused(f"{r.text!r} -> {m.text!r} changes a verb's number")
        elif r.key == m.key or (r.kind == m.kind == "word" and lemma(r.key) == lemma(m.key)):
            if r.kind == "number":
                found.append((r, m))
            elif r.kind == "word" and r.key in PRONOUNS:
                gender(into, r, m)
            elif r.kind == "word":
                into.link(r, m, asked)
        elif r.kind == m.kind == "word" and r.key in PRONOUNS and m.key in PRONOUNS:
            gender(into, r, m)
        elif r.kind == m.kind == "word" and (kind := rename_kind(r, m, texts)) is not None:
            _same_count(r, m)
            if kind == "object" and not r.text[:1].isupper() and (
                    _modifies(theirs, theirs.index(r), texts.nouns[0])
                    or _modifies(mine, mine.index(m), texts.nouns[1])):
                raise _Refused(f"{r.text!r} -> {m.text!r} renames a word that qualifies a noun "
                               f"(ripe/rotten, wrong/correct): it must agree")
            into.link(r, m, asked)
            if kind == "object":
                into.objects.add(lemma(r.key))
        else:
            raise _Refused(f"{r.text!r} -> {m.text!r} changes a word that must agree")

    def routed_key(t: Token) -> str:  # the routed word as the renames so far write it in the question
        if texts.currency(t, 0) is not None:
            return "<cur>" if t.kind == "punct" else "<curw>"
        if not hyphens and t.text == "-":
            return "\0-routed"
        return mapping.forward.get(lemma(t.key), lemma(t.key)) if t.kind == "word" else t.key

    def key(t: Token) -> str:
        if texts.currency(t, 1) is not None:
            return "<cur>" if t.kind == "punct" else "<curw>"
        if not hyphens and t.text == "-":
            return "\0-question"
        return lemma(t.key) if t.kind == "word" else t.key

    matcher = difflib.SequenceMatcher(None, [routed_key(t) for t in theirs], [key(t) for t in mine],
                                      autojunk=False)
    ops = matcher.get_opcodes()

    def span_rename(i1: int, i2: int, j1: int, j2: int, lead: int = 0) -> _Mapping:
        """A copy of the mapping with theirs[i1 + lead:i2] -> mine[j1 + lead:j2] renamed as one slot (a name, kinship
        noun or object of any word count), a possessive pronoun before it (`lead`) paired as a pronoun; _Refused
        where the two name another count of people or the rename breaks the bijection."""
        trial = mapping.copy()
        _same_count(_head(theirs, i1, i2), _head(mine, j1, j2))
        if lead:
            one(trial, theirs[i1], mine[j1], [])
        span_r, span_m = theirs[i1 + lead:i2], mine[j1 + lead:j2]
        trial.link_key(_span_key(span_r), _span_key(span_m), " ".join(t.text for t in span_r) + "\0"
                       + " ".join(t.text for t in span_m), asked)
        return trial

    def merged(n: int, i1: int, j1: int) -> int | None:
        """A name, kinship noun or object split by the diff into several pieces ("great - aunt" -> "mother - in -
        law": great -> mother, aunt -> in - law; "honey sticks" -> "jars of honey"), renamed as a whole: the
        shortest run of ops from n on, ending with a changed op, whose spans are one rename, linked; the last op
        of the run, else None. Never ending inside a kept word's op: a changed word before a kept noun qualifies
        it ("daily allowance" -> "weekly allowance" is no rename)."""
        for last in range(n + 1, min(n + 4, len(ops))):
            if ops[last][0] == "equal":
                continue
            I2, J2 = ops[last][2], ops[last][4]
            if any(t.kind != "word" and t.text != "-" for t in (*theirs[i1:I2], *mine[j1:J2])):
                return None
            lead = 1 if theirs[i1].kind == mine[j1].kind == "word" and theirs[i1].key in PRONOUNS \
                and mine[j1].key in PRONOUNS else 0
            kind = _span_kind(theirs, i1 + lead, I2, mine, j1 + lead, J2, texts)
            objects = not lead and _object_span(theirs, i1, I2, texts.nouns[0], texts.tokens[0]) \
                and _object_span(mine, j1, J2, texts.nouns[1], texts.tokens[1])
            if kind is None and not objects:
                continue
            try:
                trial = span_rename(i1, I2, j1, J2, lead)
            except _Refused:
                continue
            mapping.update(trial)
            if kind is None:
                mapping.objects.add(_span_key(theirs[i1:I2]))
            return last
        return None

    skip = 0  # tokens of an equal op already aligned as the end of a kinship noun's span (below)
    done = -1  # ops up to this one already aligned as part of one rename (merged)
    for n, (op, i1, i2, j1, j2) in enumerate(ops):
        if n <= done:
            continue
        i1, j1, skip = i1 + skip, j1 + skip, 0
        if i1 >= i2 and j1 >= j2:
            continue
        dropped = " ".join(t.text for t in theirs[i1:i2])
        added = " ".join(t.text for t in mine[j1:j2])
        # two pieces of one name around a word or two the diff kept ("box [of] candy" -> "small tub [of] ice
        # cream", "onion [sacks]" -> "[sacks] of flour"): the whole names first, as one rename
        if op != "equal" and n + 2 < len(ops) and ops[n + 1][0] == "equal" and ops[n + 1][2] - ops[n + 1][1] <= 2 \
                and (end := merged(n, i1, j1)) is not None:
            done = end
            continue
        if op in ("delete", "insert"):
            # a kinship noun of another word count whose last word stays ("great-aunt" -> "aunt", "aunt" ->
            # "great aunt"): the words dropped or added and the kept noun are one rename
            nxt = ops[n + 1] if n + 1 < len(ops) else None
            widened = next((w for w in (1, 2) if nxt is not None and nxt[0] == "equal" and w <= nxt[2] - nxt[1]
                            and _span_kind(theirs, i1, i2 + w, mine, j1, j2 + w, texts) == "kin"), None)
            if widened is not None:
                mapping.update(span_rename(i1, i2 + widened, j1, j2 + widened))
                skip = widened
                continue
            # an object's name of another word count that keeps its last words ("each double-decker bus" -> "each
            # bus", "stone-ground organic spelt flour" -> "spelt flour"), renamed as a whole like any object: the
            # words dropped or added and the kept words up to the name's noun are one rename
            kept = next((w for w in (1, 2, 3) if nxt is not None and nxt[0] == "equal" and w <= nxt[2] - nxt[1]
                         and _object_span(theirs, i1, i2 + w, texts.nouns[0], texts.tokens[0])
                         and _object_span(mine, j1, j2 + w, texts.nouns[1], texts.tokens[1])), None)
            if kept is not None:
                mapping.update(span_rename(i1, i2 + kept, j1, j2 + kept))
                mapping.objects.add(_span_key(theirs[i1:i2 + kept]))
                skip = kept
                continue
            if (end := merged(n, i1, j1)) is not None:
                done = end
                continue
            raise _Refused(f"the question drops {dropped!r}" if op == "delete" else f"the question adds {added!r}")
        refusal = _Refused(f"{dropped!r} -> {added!r} is not a rename of the same length")
        if i2 - i1 == j2 - j1:
            trial, found = mapping.copy(), []
            try:
                for r, m in zip(theirs[i1:i2], mine[j1:j2], strict=True):
                    one(trial, r, m, found)
            except _Refused as why:
                refusal = why
            else:
                mapping.update(trial)
                numbers.extend(found)
                continue
        # an object of one or more words renamed as a whole ("marbles" -> "toy trucks")
        if op == "replace" and _object_span(theirs, i1, i2, texts.nouns[0], texts.tokens[0]) \
                and _object_span(mine, j1, j2, texts.nouns[1], texts.tokens[1]):
            try:
                trial = span_rename(i1, i2, j1, j2)
            except _Refused as why:
                raise (refusal if i2 - i1 == j2 - j1 else why) from None
            mapping.update(trial)
            mapping.objects.add(_span_key(theirs[i1:i2]))
            continue
        # a possessive pronoun and an object's name after it, each renamed ("drives his minibus" -> "drives her
        # pickup truck"): the pronouns paired as pronouns, the names one rename
        if op == "replace" and min(i2 - i1, j2 - j1) > 1 and theirs[i1].kind == mine[j1].kind == "word" \
                and theirs[i1].key in _POSSESSIVES and mine[j1].key in _POSSESSIVES \
                and _object_span(theirs, i1 + 1, i2, texts.nouns[0], texts.tokens[0]) \
                and _object_span(mine, j1 + 1, j2, texts.nouns[1], texts.tokens[1]):
            try:
                trial = span_rename(i1, i2, j1, j2, 1)
            except _Refused as why:
                raise (refusal if i2 - i1 == j2 - j1 else why) from None
            mapping.update(trial)
            mapping.objects.add(_span_key(theirs[i1 + 1:i2]))
            continue
        # a person's name, or a kinship or role noun, of another word count ("Lucy" -> "Mary Ann", "uncle" ->
        # "great aunt"), renamed as a whole like an object; a possessive pronoun before a kinship noun is its own
        # slot ("her teacher" -> "his great-aunt": her -> his, teacher -> great-aunt)
        lead = 1 if op == "replace" and min(i2 - i1, j2 - j1) > 1 and theirs[i1].kind == mine[j1].kind == "word" \
            and theirs[i1].key in PRONOUNS and mine[j1].key in PRONOUNS else 0
        for start in dict.fromkeys((0, lead)):
            kind = _span_kind(theirs, i1 + start, i2, mine, j1 + start, j2, texts) if op == "replace" else None
            if kind is None or (start and kind != "kin"):
                continue
            try:
                trial = span_rename(i1, i2, j1, j2, start)
            except _Refused as why:
                raise (refusal if i2 - i1 == j2 - j1 else why) from None
            mapping.update(trial)
            break
        else:
            # a possessive pronoun renamed and a kinship noun widened into the kept word after it ("his [aunt]" ->
            # "her great-[aunt]"): the pronouns paired, the kinship nouns one rename, as "her teacher" -> "his
            # great-aunt" is
            nxt = ops[n + 1] if n + 1 < len(ops) else None
            widened = next((w for w in (1, 2) if op == "replace" and nxt is not None and nxt[0] == "equal"
                            and w <= nxt[2] - nxt[1] and theirs[i1].kind == mine[j1].kind == "word"
                            and theirs[i1].key in PRONOUNS and mine[j1].key in PRONOUNS
                            and _span_kind(theirs, i1 + 1, i2 + w, mine, j1 + 1, j2 + w, texts) == "kin"), None)
            if widened is not None:
                mapping.update(span_rename(i1, i2 + widened, j1, j2 + widened, 1))
                skip = widened
                continue
            # a compound name whose first words change and whose noun stays ("a rowing boat" -> "a pedal boat", "a
            # science museum" -> "a natural history museum"): one rename where it names a kind of its own in each
            # text (_a_kind_of_its_own), the noun is named no other way (not "a 5 kg box ... the heavy box"), and no
            # word of it is one of degree or picks one thing of several (_selecting, in _object_span)
            if op == "replace" and nxt is not None and nxt[0] == "equal" \
                    and not any(t.key in _GRADABLE for t in (*theirs[i1:i2], *mine[j1:j2])) \
                    and _a_kind_of_its_own(texts.tokens[0], theirs[i1:i2 + 1]) \
                    and _a_kind_of_its_own(texts.tokens[1], mine[j1:j2 + 1]) \
                    and _object_span(theirs, i1, i2 + 1, texts.nouns[0], texts.tokens[0]) \
                    and _object_span(mine, j1, j2 + 1, texts.nouns[1], texts.tokens[1]) \
                    and _named_one_way(texts.tokens[0], theirs[i2], theirs[i2 - 1]) \
                    and _named_one_way(texts.tokens[1], mine[j2], mine[j2 - 1]):
                mapping.update(span_rename(i1, i2 + 1, j1, j2 + 1))
                mapping.objects.add(_span_key(theirs[i1:i2 + 1]))
                skip = 1
                continue
            # a place or thing named as a whole after "the", "a" or a possessive in a clause of no number ("to the
            # hospital on the hill" -> "to the night market"), a name that picks nothing (_a_whole_name)
            if op == "replace" and _a_whole_name(theirs, i1, i2, texts.tokens[0]) \
                    and _a_whole_name(mine, j1, j2, texts.tokens[1]) \
                    and lemma(theirs[i2 - 1].key) != lemma(mine[j2 - 1].key):
                try:
                    mapping.update(span_rename(i1, i2, j1, j2))
                except _Refused:
                    raise refusal from None
                mapping.objects.add(_span_key(theirs[i1:i2]))
                continue
            if (end := merged(n, i1, j1)) is None:
                raise refusal
            done = end
    return numbers


def _a_whole_name(clause: Sequence[Token], i1: int, i2: int, whole: Sequence[Token]) -> bool:
    """Whether clause[i1:i2] names one place or thing as a whole, so that another whole name for it is a rename
    ("the hospital on the hill" -> "the night market", "the ski lodge" -> "the lighthouse"): after "the", "a"/"an"
    or a possessive, in a clause with no number (a name tied to no quantity); one to six lowercase words (a
    phrase that places it allowed, _qualified_at), none a pronoun, kinship or person noun, currency, word of degree
    or of picking one of several ("the fast vehicle", "the cheapest one"), nor any word a rule fixes ("the old
    vehicle" picks the car bought first: NOTE-review8c); each of its words written nowhere else in its text but
    inside the same name (it picks no one thing of several named alike: "the red box" beside "the blue box"), and
    no content word after it that it might qualify."""
    span = clause[i1:i2]
    if not 1 <= len(span) <= 6 or i1 == 0 or any(t.kind == "number" for t in clause):
        return False
    prev = clause[i1 - 1]
    if not (prev.kind == "poss" or (prev.kind == "word" and prev.key in ("the", "a", "an"))):
        return False
    at = _qualified_at(clause, i1, i2)
    name = span[:at - i1] if at is not None else span
    for k, tok in enumerate(name):
        if tok.kind == "punct" and tok.text == "-" and 0 < k < len(name) - 1:
            continue
        if tok.kind != "word" or not tok.text[:1].islower() or tok.key in PRONOUNS or lemma(tok.key) in KIN \
                or lemma(tok.key) in GENDERED_NOUNS or lemma(tok.key) in _PEOPLE or tok.key in _GRADABLE \
                or _selecting(tok.key) or _fixed(tok.key):
            return False
    words = {lemma(t.key) for t in span if t.kind == "word" and t.key not in FUNCTION}
    return _written_only_inside(whole, span, words) and not _noun_may_follow(clause, i2)


def _a_kind_of_its_own(tokens: Sequence[Token], name: Sequence[Token]) -> bool:
    """Whether a compound name (changed words and the kept noun) names a kind of its own in its text: brought in
    without "the" somewhere ("a rowing boat", not only "the scenic route", which may pick one of the things named
    before), and none of its changed words written elsewhere in the text ("3 dogs ... the dog bowl": the bowl is
    the dogs'; review 7b)."""
    return _introduced(tokens, [t.key for t in name]) \
        and _written_only_inside(tokens, name, {lemma(t.key) for t in name[:-1] if t.kind == "word"})


def _written_only_inside(tokens: Sequence[Token], name: Sequence[Token], words: set[str]) -> bool:
    """Whether the text writes each of `words` (lemmas) only inside the whole name, wherever it writes the name."""
    keys = [t.key for t in name]
    inside = {k for k in range(len(tokens) - len(keys) + 1) if [t.key for t in tokens[k:k + len(keys)]] == keys}
    covered = {k + n for k in inside for n in range(len(keys))}
    return not any(t.kind == "word" and lemma(t.key) in words and k not in covered for k, t in enumerate(tokens))


def _named_one_way(tokens: Sequence[Token], noun: Token, before: Token) -> bool:
    """Whether every time the text names `noun` it is after `before`, a function word, a possessive or, as a
    plural, a verb ("the rowing boat ... the boat"; "fits carpets for a living ... lays wool carpet": the trade's
    things in general): no other kind of it, and no count or measure of it ("a 5 kg box ... the heavy box")."""
    for k, tok in enumerate(tokens):
        if tok.kind == "word" and lemma(tok.key) == lemma(noun.key) and k:
            prev = tokens[k - 1]
            generic = prev.kind == "word" and prev.key in VERBS and prev.text[:1].islower() \
                and lemma(tok.key) != tok.key
            if not (generic or prev.kind == "poss"
                    or (prev.kind == "word" and (prev.key == before.key or prev.key in FUNCTION))):
                return False
    return True


# nouns that name a group of things or people: one of them for a noun of one thing is another count ("his minibus"
# -> "her bus fleet", "$20 per vehicle": NOTE-review10)
_COLLECTIVES = frozenset("""fleet convoy motorcade cavalcade collection herd flock pack team crew squad swarm litter
    brood troupe gang group bunch batch stack bundle cluster trio quartet quintet lineup procession caravan
    train""".split())


def _third_person(base: str, key: str) -> bool:
    """Whether `key` is the -s form of the verb `base` ("share", "shares"; "watch", "watches"; "carry", "carries")."""
    return key in (base + "s", base + "es") or (base.endswith("y") and key == base[:-1] + "ies")


def _same_count(r: Token, m: Token) -> None:
    """Refuse a rename of a noun for people whose count changes: one of a singular and a plural noun (the last
    words of two renamed spans) names people ("his friend" -> "his kids", "his best friends"): another number of
    people shares, pays or eats (review 38b). And one of them a group's noun, the other not ("his minibus" -> "her
    truck convoy": NOTE-review10)."""
    if r.kind == m.kind == "word" and {lemma(r.key), lemma(m.key)} & (KIN | _PEOPLE) \
            and (r.key == lemma(r.key)) != (m.key == lemma(m.key)):
        raise _Refused(f"{r.text!r} -> {m.text!r} changes how many people a noun names")
    if r.kind == m.kind == "word" and (lemma(r.key) in _COLLECTIVES) != (lemma(m.key) in _COLLECTIVES):
        raise _Refused(f"{r.text!r} -> {m.text!r} changes how many things a noun names (one of them a group's)")


def _name_span(tokens: Sequence[Token], i1: int, i2: int, side: int, texts: _Texts) -> bool:
    """Whether tokens[i1:i2] is one person's name of one to three capitalized words ("Mary Ann", "Tendai"), none a
    word no rule fixes, and each word of a name of two or more words written nowhere in its text but inside that
    same name (so "Mary Ann" is never also "Ann", another person)."""
    span = tokens[i1:i2]
    if not 1 <= len(span) <= 5 or not all((_is_name(t) and t.key not in KIN and t.key not in CURRENCY_WORDS
                                           and not _fixed(t.key)) or (0 < k < len(span) - 1 and t.text == "-")
                                          or _hyphen_tail(span, k) or _hyphen_head(span, k)
                                          for k, t in enumerate(span)):
        return False
    if len(span) == 1:
        return True
    whole = [t.key for t in span]
    text = texts.tokens[side]
    # two parts joined by a hyphen, with a gendered pronoun after them: one person ("Marie-Ange ... her pastor"),
    # not "Tom-Mia and 3 friends share" (NOTE-review10c)
    after = text[texts.index[side].get(id(span[-1]), len(text)):]
    hyphenated = len(span) == 3 and _hyphen_joined(*span) and any(x.kind == "word" and x.key in PRONOUNS for x in after)
    if len({name_gender(t.key) for t in span if t.kind == "word"} - {None}) > 1 and not hyphenated and sum(
            [x.key for x in text[k:k + len(whole)]] == whole for k in range(len(text))) < 2:
        # "Tom Mia and 3 friends": two people, a comma left out ("Maria José" written twice: one)
        return False
    for k, t in enumerate(text):
        if t.kind == "word" and t.key in whole:
            start = k - whole.index(t.key)
            if [x.key for x in text[max(start, 0):start + len(whole)]] != whole:
                return False
    return True


def _hyphen_tail(span: Sequence[Token], k: int) -> bool:
    """Whether span[k] is the lowercase end of a hyphenated name, written against its hyphen ("Eun-ji")."""
    t = span[k]
    return k >= 2 and t.kind == "word" and t.text[:1].islower() and span[k - 2].kind == "word" \
        and span[k - 2].text[:1].isupper() and _hyphen_joined(span[k - 2], span[k - 1], t) and not _fixed(t.key)


def _hyphen_joined(first: Token, hyphen: Token, second: Token) -> bool:
    """Whether `hyphen` is a hyphen written against the words on both sides of it ("Seung-woo", "double-decker")."""
    return hyphen.text == "-" and hyphen.start == first.start + len(first.text) and second.start == hyphen.start + 1


def _hyphen_head(span: Sequence[Token], k: int) -> bool:
    """Whether span[k] is the capitalized first part of a hyphenated name with a lowercase end ("Min-jun",
    "Dong-hyun"): a name's part, though alone it would be a unit or a currency (min, dong)."""
    return k + 2 < len(span) and span[k].kind == "word" and span[k].text[:1].isupper() \
        and span[k].key not in FUNCTION and _hyphen_tail(span, k + 2)


def _plural_noun_not_verb(key: str) -> bool:
    """Whether a verb's -s form is also a noun's plural whose singular is no verb ("leaves": leaf; not "buys")."""
    if key not in VERBS or key in FUNCTION or key in MUST_AGREE:
        return False
    one = _inflect().singular_noun(key)
    return isinstance(one, str) and one != key and one not in VERBS


def _kin_head_at(keys: Sequence[str]) -> int:
    """Where a kinship noun's own word stands among its words: the last, or the one before "-in-law" ("mother - in
    - law": mother)."""
    if len(keys) >= 5 and list(keys[-4:-1]) == ["-", "in", "-"] and keys[-1] in ("law", "laws"):
        return len(keys) - 5
    return len(keys) - 1


def _kin_head(span: Sequence[Token]) -> Token:
    """A kinship noun's own word (_kin_head_at)."""
    return span[_kin_head_at([t.key for t in span])]


def _kin_part(span: Sequence[Token], k: int) -> bool:
    """Whether span[k] is a word that makes a kinship noun of several words with one the table knows (its head,
    _kin_head), though a rule fixes it: "half", "step", "great", "grand" and "next-door" before a hyphen
    ("half-brother", "next-door neighbor"), "in - law" after one, "twin" and "best" before the noun, a word of
    age or rank right before a kinship noun (_KIN_ADJECTIVES: "younger sister", "big brother"), and a cousin's
    degree ("second cousin")."""
    key, nxt = span[k].key, span[k + 1].text if k + 1 < len(span) else ""
    if key in ("half", "step", "great", "grand", "next"):
        return nxt == "-"
    if key == "door":
        return 0 < k < len(span) - 1 and span[k - 1].text == "-" and span[k - 2].key == "next"
    if key == "in":
        return 0 < k < len(span) - 2 and span[k - 1].text == "-" and span[k + 1].text == "-"
    if key in ("law", "laws"):
        return k == len(span) - 1 and k >= 3 and span[k - 1].text == "-" and span[k - 2].key == "in"
    if key in _KIN_ADJECTIVES:
        return k + 1 < len(span) and (lemma(span[k + 1].key) in KIN or _kin_part(span, k + 1))
    if key in ("first", "second", "third"):  # "her second cousin": a degree of kinship, before "cousin" only
        return k + 1 < len(span) and lemma(span[k + 1].key) == "cousin"
    return key in ("twin", "best") and k + 1 < len(span)


# words of age or rank in a family that make a kinship noun of two words with the one after them ("his younger
# sister", "her big brother"); elsewhere "younger" and "older" compare and must agree
_KIN_ADJECTIVES = frozenset("younger older elder eldest youngest oldest little big baby".split())


def _role_verb(span: Sequence[Token], k: int) -> bool:
    """Whether span[k] is a verb that names the work of the role noun right after it ("his swim coach", "her
    driving instructor"): a verb only (no function word, none that must agree, no currency), before a role noun
    the table knows."""
    key = span[k].key
    return k + 1 < len(span) and lemma(span[k + 1].key) in KIN and span[k + 1].kind == "word" \
        and (key in VERBS or lemma(key) in VERBS) \
        and not any(w in FUNCTION or w in MUST_AGREE or w in CURRENCY_WORDS for w in (key, lemma(key)))


def _kin_noun(span: Sequence[Token], head: Token) -> bool:
    """Whether a span ends in a kinship or role noun: its head in the table, or "best friend" (a friend alone may
    be counted as a thing is: "20 TikTok friends")."""
    return lemma(head.key) in KIN or (len(span) >= 2 and head.key == "friend" and span[-2].key == "best")


def _kin_span(tokens: Sequence[Token], i1: int, i2: int, side: int, texts: _Texts) -> bool:
    """Whether tokens[i1:i2] is a kinship or role noun of one to five lowercase words ("uncle", "great aunt",
    "best friend", "half-brother", "mother-in-law") after a possessive: words no rule fixes (or _kin_part's where
    they make such a noun), its own word never counted in its text (never after a number: not an object)."""
    span = tokens[i1:i2]
    prev = tokens[i1 - 1] if i1 else None
    if not 1 <= len(span) <= 6 or prev is None or not (prev.kind == "poss" or prev.key in _DETERMINERS):
        return False
    if not all((t.kind == "word" and t.text[:1].islower() and t.key not in PRONOUNS and (
            lemma(t.key) in KIN or not _fixed(t.key) or _kin_part(span, k) or _role_verb(span, k)))
            or (0 < k < len(span) - 1 and t.text == "-") for k, t in enumerate(span)):
        return False
    last, text = lemma(_kin_head(span).key), texts.tokens[side]
    return last in KIN or not any(text[k - 1].kind == "number" for k in range(1, len(text))
                                  if text[k].kind == "word" and lemma(text[k].key) == last)


def _span_kind(theirs: Sequence[Token], i1: int, i2: int, mine: Sequence[Token], j1: int, j2: int,
               texts: _Texts) -> str | None:
    """`person` or `kin` where two spans of the routed problem and the question are one rename of another word
    count: two names (one of them a person's name by its text), or two kinship or role nouns (one of them ending in
    a kinship or role noun the table knows), else None."""
    def named(span: Sequence[Token], side: int) -> bool:
        """A name by its text: capitalized inside a sentence, a first name, owning something ("Kwame's family"),
        or with a gender its pronouns give it ("Bongani ... His")."""
        text = texts.tokens[side]
        return any(lemma(t.key) in texts.names[side] for t in span) and (
            len(span) > 1 or _capitalized_inside_a_sentence(span[0], side, texts)
            or name_gender(span[0].key) is not None or lemma(span[0].key) in texts.persons[side]
            or any(t.key == span[0].key and k + 1 < len(text) and text[k + 1].kind == "poss"
                   for k, t in enumerate(text)))

    def known(span: Sequence[Token], side: int) -> bool:
        """A name by a name list or its text for a word of it: a first name, a person of the text (a pronoun's
        gender), owning something, or its first word written after a lowercase word or a number ("... does Li
        pay", not "Staff Room" at a sentence's start)."""
        text = texts.tokens[side]
        inside = any(x.kind == "word" and x.text == span[0].text and k and text[k - 1].kind in ("word", "number")
                     and not text[k - 1].text[:1].isupper() for k, x in enumerate(text))
        return inside or any(name_gender(t.key) is not None or lemma(t.key) in texts.persons[side]
                             or any(x.key == t.key and k + 1 < len(text) and text[k + 1].kind == "poss"
                                    for k, x in enumerate(text)) for t in span if t.kind == "word")

    def by_role(span: Sequence[Token], side: int) -> bool:
        """A name by its role in the sentence ("Li and 4 colleagues share ..."), as one-word renames take it."""
        return any(lemma(t.key) in texts.names[side] for t in span)

    theirs_span, mine_span = theirs[i1:i2], mine[j1:j2]
    if _name_span(theirs, i1, i2, 0, texts) and _name_span(mine, j1, j2, 1, texts) and (
            (named(theirs_span, 0) and named(mine_span, 1))
            or (known(theirs_span, 0) and by_role(theirs_span, 0) and by_role(mine_span, 1))
            or (by_role(theirs_span, 0) and known(mine_span, 1) and by_role(mine_span, 1))):
        return "person"  # one of them a name by a name list or its text, the other a name by its role at least
    head_r, head_m = _kin_head(theirs_span), _kin_head(mine_span)
    if _kin_span(theirs, i1, i2, 0, texts) and _kin_span(mine, j1, j2, 1, texts) and (
            _kin_noun(theirs_span, head_r) and _kin_noun(mine_span, head_m)) and (
            (head_r.key == lemma(head_r.key)) == (head_m.key == lemma(head_m.key))):
        return "kin"  # both kinship nouns, as many people ("great aunt" -> "uncle"; never "toy car" or "parents")
    return None


_SMALL_MONEY = frozenset("cent cents penny pennies nickel nickels dime dimes".split())
_LEFT = {"are": "remain", "is": "remain", "were": "remained", "was": "remained"}


def _asked_frame(asked: Sequence[Token], money: bool) -> tuple[Token, ...]:
    """The asked sentence with its equivalent frames written one way: "how many of the slices" as "how many
    slices", "are left" / "is left" / "remains" as "remain" ("were left" as "remained"), and, where `money` (each
    text names exactly one currency, no cents and no "pound(s)" but "how many pounds"), "how much money" as "how
    many" and a money slot that aligns
    with the other text's currency word ("How many pounds ..."). Every other word still must agree."""
    out: list[Token] = []
    k = 0
    while k < len(asked):
        tok = asked[k]
        nxt = asked[k + 1] if k + 1 < len(asked) else None
        prev = out[-1] if out else None
        after_many = prev is not None and prev.key in ("many", "much") and len(out) >= 2 and out[-2].key == "how"
        if after_many and tok.key == "of" and nxt is not None and nxt.key == "the":
            k += 2
            continue
        if tok.kind == "word" and tok.key in _LEFT and nxt is not None and nxt.key == "left":
            out.append(Token(_LEFT[tok.key], "word", tok.start))
            k += 2
            continue
        if tok.kind == "word" and tok.key == "remains":
            out.append(Token("remain", "word", tok.start))
        elif money and tok.key == "much" and prev is not None and prev.key == "how" and nxt is not None \
                and nxt.key == "money":
            out += [Token("many", "word", tok.start), Token("money", "money", nxt.start)]
            k += 2
            continue
        else:
            out.append(tok)
        k += 1
    return tuple(out)


def _context(tokens: Sequence[Token], tok: Token) -> str:
    i = next(k for k, t in enumerate(tokens) if t is tok)
    before = [t.text for t in tokens[max(0, i - 3):i] if t.kind != "punct"]
    after = [t.text for t in tokens[i + 1:i + 3] if t.kind != "punct"]
    return " ".join([*before, "_", *after])


@dataclass(frozen=True)
class _Failure:
    depth: int  # sentences paired before it
    reason: str
    failed_at: str


def _search(pending: list[int], mine: Sequence[Sequence[Token]], theirs: Sequence[Sequence[Token]],
            free: set[int], mapping: _Mapping, texts: _Texts, order: dict[int, int],
            numbers: list[tuple[Token, Token]], budget: list[int], asked: tuple[int, int],
            accept: Callable[[_Mapping, dict[int, int]], tuple[str, str] | None],
            forms: Callable[[int, int], tuple[Sequence[Token], Sequence[Token]]] | None = None
            ) -> tuple[_Mapping, _Failure | None]:
    """Pair the question's sentences `pending` (the asked one last, with the routed asked sentence only) with the
    routed sentences `free` (backtracking; the same position first), and `accept` the whole; the mapping reached,
    or the failure of the attempt that paired the most sentences."""
    if not pending:
        verdict = accept(mapping, order)
        return mapping, None if verdict is None else _Failure(len(order), verdict[1], verdict[0])
    i, rest = pending[0], pending[1:]
    is_asked = i == asked[0]
    deepest = _Failure(0, f"sentence {i + 1} of the question aligns with no sentence of the routed problem", "body")
    tried = False
    for j in ([asked[1]] if is_asked else sorted(free - {asked[1]}, key=lambda j: (j != i, j))):
        budget[0] -= 1
        if budget[0] < 0:
            return mapping, _Failure(len(order), f"more than {MAX_PAIRINGS} ways of pairing the sentences tried",
                                     "body")
        trial = mapping.copy()
        first, tried = not tried, True
        try:
            theirs_j, mine_i = forms(i, j) if forms is not None else (theirs[j], mine[i])
            found = _pair(theirs_j, mine_i, is_asked, trial, texts)
        except _Refused as refusal:
            if first and deepest.depth == 0:  # the first pairing tried is the same position's, where there is one
                deepest = _Failure(0, f"the asked sentence: {refusal}" if is_asked else
                                   f"sentence {i + 1}: {refusal}", "asked" if is_asked else "body")
            continue
        order[i] = j
        done, failure = _search(rest, mine, theirs, free - {j}, trial, texts, order, numbers, budget, asked, accept,
                                forms)
        del order[i]
        if failure is None:
            order[i] = j
            numbers.extend(found)
            return done, None
        if failure.depth + 1 > deepest.depth:
            deepest = _Failure(failure.depth + 1, failure.reason, failure.failed_at)
    return mapping, deepest


def _as_subject(tokens: Sequence[Token], k: int) -> bool:
    """Whether the word at k, singular and never counted in its text, is a subject after an article or a
    possessive, right before a verb or auxiliary ("On Monday the waitress has 40 pens", "Her aide has")."""
    tok = tokens[k]
    if k < 1 or k + 1 >= len(tokens) or tokens[k - 1].key not in _SUBJECT_DETERMINERS or lemma(tok.key) != tok.key:
        return False
    if any(t.kind == "word" and lemma(t.key) == tok.key and i and tokens[i - 1].kind == "number"
           for i, t in enumerate(tokens)):
        return False
    nxt = tokens[k + 1]
    return nxt.kind == "word" and (nxt.key in VERBS or nxt.key in _AUXILIARIES)


_SUBJECT_DETERMINERS = frozenset("a an the his her their my our your".split())


def _named_near(texts: _Texts, tok: Token, side: int, people: dict[str, str], gender: str) -> set[str]:
    """The names of a gender in the pronoun's sentence before it, and in the sentence before that where none is:
    whom the first-name convention chooses among ("Sara meets Lina. She walks 5 dogs": Sara or Lina)."""
    tokens, at = texts.tokens[side], texts.index[side][id(tok)]
    ends = [k for k in range(at) if tokens[k].kind == "punct" and tokens[k].text in _SENTENCE_END]
    back = 1 if texts.referent(tok, side) else 2  # a name before it in its sentence: that sentence only
    start = ends[-back] + 1 if len(ends) >= back else 0
    found = {_joined_name(lemma(t.key), people) for t in tokens[start:at] if _is_name(t)}
    return {p for p in found if people.get(p) == gender}


def _joined_name(word: str, people: dict[str, str]) -> str:
    """The person a word of a name stands for: itself, or the one name of several words it is part of ("duc" and
    "anh" of "duc anh")."""
    if word in people:
        return word
    whole = [p for p in people if word in p.split(" ")]
    return whole[0] if len(whole) == 1 else word


def _people_agree(mapping: _Mapping, texts: _Texts) -> str | None:
    """Why a pronoun of the question stands for another person than the routed problem's pronoun it aligns with,
    or None. A pronoun may stand for any person of its gender (names gender-guesser knows); it agrees when the
    routed problem's people of its gender are, renamed, exactly the question's people of the question pronoun's
    gender, or else when both have a referent (in their sentence, or the previous sentence's first name for a
    pronoun that opens its sentence) of the pronoun's gender, and one is the other renamed, or, where neither
    text has a person of its gender, when its gender is kept (it stands for a noun: "a farmer ... he").
    Otherwise (people it could mean that the renames do not keep apart) it is refused: "Mia gave
    Tom 5 pens. He has 3" is not "Sara gave Omar 5 pens. She has 3"."""
    theirs = _joined(texts.persons[0], mapping.forward.keys())
    mine = _joined(texts.persons[1], mapping.forward.values())
    # a subject noun renamed as an object may name a person where the routed one named a thing ("The box has 40
    # pens. She takes 5" -> "The waitress has 40 pens. She takes 5"): the question's pronouns may stand for it
    renamed = {m for r, m in mapping.forward.items() if r in mapping.objects and m != r and r not in _PEOPLE
               and m.split(" ")[-1] != r.split(" ")[-1]}  # "school uniform skirt" -> "skirt": the same thing
    tokens = texts.tokens[1]
    suspects = [(k, lemma(t.key)) for k, t in enumerate(tokens) if lemma(t.key) in renamed
                and (lemma(t.key) in _PEOPLE or _as_subject(tokens, k))]
    for _, m, _ in mapping.pronouns:  # one with no name before it in its sentence looks back past it
        at = texts.index[1][id(m)]
        suspect = next((w for k, w in suspects if k < at), None)
        if suspect is not None and not texts.referent(m, 1):
            return (f"the pronoun {m.text!r} may stand for {suspect!r}, a person's noun or a subject renamed from "
                    f"the routed problem's thing {mapping.backward.get(suspect, '')!r}")
    for r, m, _ in mapping.pronouns:
        ga, gb = PRONOUNS[r.key][0], PRONOUNS[m.key][0]
        ref_r, ref_m = texts.referent(r, 0, opening=True), texts.referent(m, 1, opening=True)
        # whom the routed pronoun stands for, renamed: a person of the other gender in the question, or the same
        # name kept while the pronoun's gender changes, is someone the question's pronoun cannot stand for, so it
        # stands for another person ("Mia gives Tom 5 apples. She had 20" -> "Mia gives Vusi 5 apples. He had 20":
        # he is Vusi; NOTE-review8)
        whole_r = _whole_name(ref_r, theirs)
        image = mapping.forward.get(whole_r, whole_r)
        if whole_r and theirs.get(whole_r) == ga and (mine.get(image) not in (None, gb) or (ga != gb
                                                                                          and image == whole_r)):
            return (f"the pronoun {m.text!r} cannot stand for {image!r}, whom the routed problem's {r.text!r} "
                    "stands for: it stands for another person")
        # a possessive's own noun is not whom it stands for ("her uncle": her is not the uncle)
        owned_r, owned_m = texts.possessed(r, 0), texts.possessed(m, 1)
        # nor is an object pronoun's own clause's subject ("his son-in-law rolls the fleeces for him")
        owned_r, owned_m = owned_r | texts.clause_subject(r, 0), owned_m | texts.clause_subject(m, 1)
        # a person the text first names after the pronoun is not whom it stands for ("He saves $5 while his uncle
        # adds $3": not the uncle)
        before_r, before_m = _named_before(theirs, texts, r, 0), _named_before(mine, texts, m, 1)
        could = {mapping.forward.get(p, p) for p, g in theirs.items() if g == ga and p not in owned_r
                 and p in before_r}
        could -= {mapping.forward.get(p, p) for p in owned_r}
        might = {p for p, g in mine.items() if g == gb and p not in owned_m and p in before_m}
        # a name of no known gender renamed to one of the pronoun's ("Yaa ... she" -> "Anh Thu ... she", "Tahmina
        # ... her" -> "Vusi ... his"): it may be whom the pronoun stands for, on both sides alike
        named_r = _named_before(texts.names[0], texts, r, 0)
        named_m = _named_before(texts.names[1], texts, m, 1)
        # only where it is the one name before the pronoun ("Yaa works ... she is paid"; not "Emeka sold 30
        # pies to Mia, and she sold ...": Mia is the routed problem's she; review 7)
        nouns_r = _person_nouns_before(texts, r, 0)
        could |= {q for p, q in mapping.forward.items()
                  if named_r == {p} and not nouns_r and p not in theirs and mine.get(q) == gb}
        might |= {q for p, q in mapping.forward.items()
                  if named_m and named_m <= set(q.split()) and not _person_nouns_before(texts, m, 1)
                  and q not in mine and theirs.get(p) == ga}
        # where the routed pronoun's referent by the conventions (whole_r) is no person of its gender, a kinship or
        # role noun of no gender named before it may be whom it stands for ("Tom's teacher had 40 pencils. She gave
        # Tom 10"): renamed to one of the other gender than the question's pronoun ("Tom's brother ... She"), the
        # question's pronoun stands for no one (NOTE-review9b)
        for p, q in mapping.forward.items():
            if not (whole_r and theirs.get(whole_r) == ga) and _kin_key(p) and theirs.get(p) is None \
                    and mine.get(q) not in (None, gb) \
                    and p not in owned_r and _named_before([p], texts, r, 0):
                return (f"the pronoun {m.text!r} may stand for the routed problem's {p!r}, renamed {q!r}, whom it "
                        "cannot stand for")
        if could == might and (could or ga == gb):  # no person of the gender: a pronoun for a noun ("a farmer")
            continue
        ref_r, ref_m = _whole_name(ref_r, theirs), _whole_name(ref_m, mine)
        if ref_r and ref_m and theirs.get(ref_r) == ga and mine.get(ref_m) == gb \
                and mapping.forward.get(ref_r) == ref_m \
                and len(_named_near(texts, m, 1, mine, gb)) <= len(_named_near(texts, r, 0, theirs, ga)):
            continue
        return (f"the pronoun {m.text!r} may stand for another person than the routed problem's {r.text!r} "
                f"(people of its gender: {sorted(could)} renamed, {sorted(might)} here)")
    return None


def _person_nouns_before(texts: _Texts, tok: Token, side: int) -> bool:
    """Whether a singular kinship, role or gendered noun stands before the token ("for the teacher. Then she":
    review 7b; "the 30 students" are no "she")."""
    tokens, at = texts.tokens[side], texts.index[side][id(tok)]
    return any(t.kind == "word" and t.key == lemma(t.key)  # one person: "the students" are no "she"
               and (lemma(t.key) in KIN or lemma(t.key) in _PEOPLE or lemma(t.key) in GENDERED_NOUNS)
               for t in tokens[:at])


def _kin_key(key: str) -> bool:
    """Whether a rename's key (its words joined by spaces) is a kinship or role noun the table knows ("teacher",
    "son - in - law", "younger sister")."""
    words = key.split(" ")
    return lemma(words[_kin_head_at(words)]) in KIN


def _named_before(people: Iterable[str], texts: _Texts, tok: Token, side: int) -> set[str]:
    """The people (names of one or more words) a text names before the token `tok`."""
    tokens, at = texts.tokens[side], texts.index[side][id(tok)]
    seen = {lemma(t.key) for t in tokens[:at] if t.kind == "word"}
    return {p for p in people if p.split()[0] in seen}


def _whole_name(referent: str, people: dict[str, str]) -> str:
    """A pronoun's referent as the people of its text name it: a name of several words renamed as a whole stands
    for its last word ("trang" -> "thu - trang", "josé" -> "maria josé")."""
    if not referent or referent in people:
        return referent
    whole = [p for p in people if " " in p and p.split(" ")[-1] == referent]
    return whole[0] if len(whole) == 1 else referent


def _span_words_renamed(mapping: _Mapping) -> str | None:
    """Why a name renamed as a whole also has a word renamed on its own elsewhere, or None: "great-aunt" -> "aunt"
    in one place and "great-aunt" -> "great-uncle" (aunt -> uncle) in another are two people for one; and "toy
    trucks" -> "marbles" in one place with "toy trucks" (its last word) kept in another is another object asked
    about."""
    for key, other in mapping.forward.items():
        for words, table in ((key, mapping.forward), (other, mapping.backward)):
            if " " not in words or key.startswith("<"):
                continue
            for word in words.split(" "):
                if table.get(word, word) != word:
                    return (f"{mapping._word(key, other)!r} is renamed as a whole, and its word {word!r} alone as "
                            f"{table[word]!r} elsewhere")
        words = key.split(" ")
        # the name's own noun, before a phrase that places or qualifies it ("goldfish in the big tank": goldfish)
        at = next((k for k in range(1, len(words)) if words[k] in _QUALIFYING or words[k] in _RELATIVE), len(words))
        head = next((w for w in (words[at - 1], words[-1]) if mapping.forward.get(w) == w), words[at - 1])
        if " " in key and not key.startswith("<") and other != key and mapping.forward.get(head) == head \
                and (other.split(" ")[-1] != head or any(mapping.forward.get(w) == w for w in words if w != head)):
            # "toy trucks" -> "marbles" in one place and "toy trucks" kept in another: another object asked about;
            # not where the new name keeps that word as its own noun and no other word of the name is kept
            # elsewhere ("grey twist pile carpet" -> "wool carpet", "fits carpets" kept): the short name still
            # names the renamed thing ("organic spelt flour" -> "spelt flour" once and kept once is two things)
            return (f"{key!r} is renamed as a whole ({other!r}), and its word {head!r} kept as it is "
                    "elsewhere")
    return None


def _joined(persons: dict[str, str], renamed: Iterable[str]) -> dict[str, str]:
    """The people of a text with each name of several words renamed as a whole ("mary ann") one person in place of
    its words, of their gender where the words that have one agree, else of its first word's (a compound given
    name takes its first name's gender: "Maria José", which _name_span takes for one name only where the text
    writes it whole twice)."""
    out = dict(persons)
    for name in renamed:
        words = name.split(" ")
        if len(words) < 2:
            continue
        genders = {out[w] for w in words if w in out}
        if not genders:
            continue
        first = out.get(words[0])
        for w in words:
            out.pop(w, None)
        if len(genders) == 1 or first is not None:
            out[name] = next(iter(genders)) if len(genders) == 1 else first
    return out


def _order_sensitive(theirs: Sequence[Sequence[Token]], order: list[int], asked: int, texts: _Texts) -> str | None:
    """Why the routed problem's statements may not come in the question's order (`order`: the routed sentence of
    each question statement), or None: two statements that change their relative order and share a word (a
    person, an object: one may act on what the other set up), a word of a running total, of time or of order in
    any sentence, or a pronoun or demonstrative that refers back to an earlier sentence."""
    words = [{lemma(t.key) for t in theirs[j] if t.kind == "word" and t.key not in FUNCTION and t.key not in PRONOUNS}
             for j in range(len(theirs))]
    for x in range(len(order)):
        for y in range(x + 1, len(order)):
            a, b = order[x], order[y]
            if a > b and words[a] & words[b] and not (_standing(theirs[a], texts) or _standing(theirs[b], texts)):
                shared = sorted(words[a] & words[b])[0]
                return f"two statements it swaps both speak of {shared!r}"
    for sentence in theirs:
        own = {lemma(t.key) for t in sentence if _is_name(t)} - {""}  # a pronoun's referent in its own clause
        for k, tok in enumerate(sentence):
            if tok.kind != "word":
                continue
            if tok.key in ORDER_SENSITIVE and not _frequency(sentence, k):
                return f"the routed problem says {tok.text!r}"
            if sentence is not theirs[asked] and (tok.key in _BACK_REFERENCES or (
                    tok.key in PRONOUNS and texts.referent(tok, 0) not in own)):
                return f"the routed problem's {tok.text!r} refers back to an earlier sentence"
    return None


def _frequency(tokens: Sequence[Token], k: int) -> bool:
    """Whether "twice" at k says how often ("twice a week", "twice every day"), not a multiple of a quantity."""
    return tokens[k].key == "twice" and k + 2 < len(tokens) and tokens[k + 1].key in ("a", "an", "every", "per") \
        and tokens[k + 2].key in _RATE_TIME


# verbs of a fact that holds throughout (a price, a size, a content), and the time words of a rate ("a day")
_STATIVE = frozenset("cost costs hold holds held weigh weighs weighed contain contains contained".split())
_BE = frozenset("is are was were".split())
_DURATION = frozenset("take takes took last lasts lasted".split())
_SIZE = frozenset("long tall wide high deep heavy old worth price priced".split())
_RATE_TIME = frozenset("day days week weeks hour hours minute minutes month months year years".split())


def _standing(clause: Sequence[Token], texts: _Texts) -> bool:
    """Whether a statement is a standing fact that holds wherever it is told: about every one of something ("each",
    "every", "per"), naming no person (no name, pronoun, kinship or gendered noun), with a verb of price or content
    from a closed list ("Each bucket held 11 crabs", "Pears cost 60 cents each"), "is" with a size word ("Each lap
    is 500 meters long"), or a rate in time without "is" ("Each horse eats 8 pounds of feed a day"). Any other verb
    is an event: "4 apples are put (tossed, placed) in each bag" is not one."""
    keys = [t.key for t in clause if t.kind == "word"]
    if not any(k in ("each", "every", "per") for k in keys):
        return False
    if any(_is_name(t) or t.key in PRONOUNS or t.key in _BACK_REFERENCES or lemma(t.key) in KIN
           or lemma(t.key) in GENDERED_NOUNS or lemma(t.key) in texts.names[0] for t in clause if t.kind == "word"):
        return False
    rate = any(k in ("a", "an", "each", "every", "per") and n in _RATE_TIME
               for k, n in zip(keys, keys[1:], strict=False))
    stative = any(k in _STATIVE for k in keys) or (any(k in _BE for k in keys) and any(k in _SIZE for k in keys))
    # a duration ("Each lesson lasts 40 minutes", "The drive takes 15 minutes each way")
    lasting = any(a.key in _DURATION and b.kind == "number" and c.key in _RATE_TIME
                  for a, b, c in zip(clause, clause[1:], clause[2:], strict=False))
    return stative or lasting or (rate and not any(k in _BE for k in keys))


_COUNTS_OWNER = frozenset("host hosts hostess besides except excluding including include includes birthday".split())
_GROUPS = frozenset("family families sibling siblings child children kid kids class team group household".split())


def _host_only(name: str, tokens: Sequence[Token]) -> bool:
    """Whether a person is named only as the owner of a place or an event ("at Santiago's party"; not "besides
    Santiago", not "Santiago invites"), never as the owner of people (family, kin), and the text has no gendered
    pronoun and no word that may count the owner ("besides the host"): not one of the people a question by gender
    counts."""
    if any(t.kind == "word" and t.key in PRONOUNS for t in tokens):
        return False
    keys = [t.key for t in tokens if t.kind == "word"]
    if any(k in _COUNTS_OWNER for k in keys) or any(a == "other" and b == "than"
                                                    for a, b in zip(keys, keys[1:], strict=False)):
        return False  # "besides the host", "including the birthday girl": the owner may be among those counted
    for k, tok in enumerate(tokens):
        if tok.kind != "word" or lemma(tok.key) != name:
            continue
        poss = tokens[k + 1] if k + 1 < len(tokens) else None
        owned = tokens[k + 2] if k + 2 < len(tokens) else None
        if poss is None or poss.kind != "poss" or owned is None or owned.kind != "word" or owned.key in _GROUPS \
                or lemma(owned.key) in KIN or lemma(owned.key) in GENDERED_NOUNS:
            return False
    return True


def _asked_only_nouns(theirs: Sequence[Sequence[Token]], asked: int, texts: _Texts) -> list[str]:
    """The counted nouns of the routed asked sentence that no statement has ("How many fruits?" after apples and
    pears); not a noun heading a phrase of time or place before the asking words ("By the end of the challenge,
    how many ..."; after them "the mammals of the zoo" is a category as "the mammals" is: review 38)."""
    stated = {lemma(t.key) for j, sentence in enumerate(theirs) if j != asked for t in sentence if t.kind == "word"}
    sentence = theirs[asked]
    asks = next((k for k, t in enumerate(sentence) if t.key in ("how", "what")), 0)
    return [t.text for k, t in enumerate(sentence) if t.kind == "word" and lemma(t.key) in texts.nouns[0]
            and lemma(t.key) not in stated and not _fixed(t.key) and not _gerund_of(sentence, k, theirs, asked)
            and not (0 < k < asks and sentence[k - 1].key == "the" and sentence[k + 1].key == "of")]


def _gerund_of(sentence: Sequence[Token], k: int, theirs: Sequence[Sequence[Token]], asked: int) -> bool:
    """Whether the asked word at k is the -ing form of a verb a statement uses as a verb, after "of" and a time
    noun ("3 days of shearing" after "he shears"): the activity over a time, no category of things. The verb must be
    one by the table or by its place ("he shears", "Duc Anh shears"), and the phrase a time's ("bedding",
    "clothing", "seating", "lighting" name categories: NOTE-review8 3)."""
    key = sentence[k].key
    if not key.endswith("ing") or len(key) <= 5 or k < 2 or sentence[k - 1].key != "of" \
            or lemma(sentence[k - 2].key) not in _TIME_NOUNS:
        return False
    stems = {key[:-3], key[:-3] + "e", key[:-4]}  # shear-ing, bak-ing (bake), shopp-ing (shop)
    forms = {f for stem in stems for f in (stem + "s", stem + "es", stem + "ed", stem + "d")}
    return any(t.key in forms and t.text[:1].islower() and (t.key in VERBS or _verb_by_place(clause, j))
               for i, clause in enumerate(theirs) if i != asked for j, t in enumerate(clause))


_TIME_NOUNS = frozenset("minute hour day week month year weekend morning afternoon evening night".split())


def align(question: str, routed: str) -> Alignment:
    """The slot alignment of `question` with the routed problem's question (see the module doc)."""
    mine_t, theirs_t = tokens_of(question), tokens_of(routed)
    mine_s, theirs_s = sentences_of(mine_t), sentences_of(theirs_t)
    if not mine_s or not theirs_s:
        return Alignment(False, "an empty question", "count")
    mine_c, theirs_c = _clauses(mine_s, asked_index(mine_s)), _clauses(theirs_s, asked_index(theirs_s))
    (mine, asked_mine), (theirs, asked_theirs) = (mine_c.clauses, mine_c.asked), (theirs_c.clauses, theirs_c.asked)
    if len(mine) != len(theirs):
        return Alignment(False, f"{len(mine) - 1} statements in the question, {len(theirs) - 1} in the routed "
                         "problem", "count")
    if len(mine) > MAX_SENTENCES:
        return Alignment(False, f"more than {MAX_SENTENCES} sentences", "count")
    counts = (sum(t.kind == "number" for t in mine_t), sum(t.kind == "number" for t in theirs_t))
    if counts[0] != counts[1]:
        return Alignment(False, f"{counts[0]} numbers in the question, {counts[1]} in the routed problem", "count")
    texts = _Texts.of(theirs_t, mine_t)
    money = all(len(codes) == 1 for codes in texts.currencies) and not any(
        t.kind == "word" and t.key in _SMALL_MONEY for t in (*theirs_t, *mine_t)) and not any(
        t.key in _AMBIGUOUS_CURRENCY and not (k >= 2 and text[k - 1].key == "many" and text[k - 2].key == "how")
        and not (t.key in _MONEY_AFTER_AMOUNT and _AMBIGUOUS_CURRENCY[t.key] in symbols)
        for text, symbols in zip(texts.tokens, texts.pound_symbol, strict=True)
        for k, t in enumerate(text))  # "pounds" other than asked may be a weight
    mine, theirs = list(mine), list(theirs)
    mine[asked_mine], theirs[asked_theirs] = _asked_frame(mine[asked_mine], money), \
        _asked_frame(theirs[asked_theirs], money)
    body = [i for i in range(len(mine)) if i != asked_mine]
    order: dict[int, int] = {}
    numbers: list[tuple[Token, Token]] = []

    def accept(mapping: _Mapping, order: dict[int, int]) -> tuple[str, str] | None:
        """(failed_at, reason) for a complete pairing that is still not the same problem, else None."""
        for i in body:  # a clause whose subject is left out keeps its place after the clause before, both sides
            if (i in mine_c.elided or order[i] in theirs_c.elided) and (i == 0 or order.get(i - 1) != order[i] - 1):
                return "body", ("a statement whose subject is left out (the statement before's) comes after another "
                                "statement")
        if any(order[i] != i for i in body):
            sensitive = _order_sensitive(theirs, [order[i] for i in body], asked_theirs, texts)
            if sensitive is not None:
                return "body", f"the statements come in another order, and {sensitive}"
        split = _span_words_renamed(mapping)
        if split is not None:
            return "body", split
        only_asked = [p for p in mapping.in_asked if p not in mapping.in_body]
        if only_asked:
            r, m = mapping.shown[only_asked[0]].split("\0")
            return "asked", (f"the asked sentence renames {r!r} -> {m!r}, which the rest of the question never does: "
                             "it asks about something else")
        if any(lemma(t.key) in GENDERED_NOUNS for t in (*theirs[asked_theirs], *mine[asked_mine])
               if t.kind == "word"):
            flipped = next(((a, b) for a, b in mapping.forward.items()
                            if a != b and _span_gender(a) and _span_gender(b) and _span_gender(a) != _span_gender(b)
                            and not (_host_only(a, theirs_t) and _host_only(b, mine_t))),
                           None)
            if flipped is not None:
                return "asked", (f"{flipped[0]!r} -> {flipped[1]!r} changes a person's gender where the question "
                                 "asks about people by gender (the girls, the boy, ...)")
        if mapping.objects:
            unseen = _asked_only_nouns(theirs, asked_theirs, texts)
            if unseen:
                return "asked", (f"the question renames objects and the routed problem asks about "
                                 f"{unseen[0]!r}, which no statement names (a category: its members may differ)")
        person = _people_agree(mapping, texts)
        if person is not None:
            asked_pronoun = any(t is r for r, _, _ in mapping.pronouns for t in theirs[asked_theirs])
            return ("asked" if asked_pronoun else "body"), person
        return None

    def forms(i: int, j: int) -> tuple[Sequence[Token], Sequence[Token]]:
        """A clause whose subject is left out pairs with one whose pronoun stands for the clause before's subject,
        that pronoun left out."""
        if i in mine_c.elided and j in theirs_c.continuing:
            return theirs_c.without_subject(j), mine[i]
        if j in theirs_c.elided and i in mine_c.continuing:
            return theirs[j], mine_c.without_subject(i)
        return theirs[j], mine[i]

    mapping, failure = _search(body + [asked_mine], mine, theirs, set(range(len(theirs))), _Mapping(), texts,
                               order, numbers, [MAX_PAIRINGS], (asked_mine, asked_theirs), accept, forms)
    if failure is not None:
        return Alignment(False, failure.reason, failure.failed_at)
    routed_numbers = [t for t in theirs_t if t.kind == "number"]
    index = {id(t): k for k, t in enumerate(routed_numbers)}
    bindings = tuple(sorted((NumberBinding(index[id(r)], r.text.replace(",", ""), m.text.replace(",", ""),
                                           _context(theirs_t, r)) for r, m in numbers), key=lambda b: b.param))
    renames = tuple(tuple(mapping.shown[p].split("\0")) for p in mapping.renames)
    words = [t for t in theirs_t if t.kind == "word"]
    renamed = {p[0] for p in mapping.renames}
    kept = sum(lemma(t.key) not in renamed and f"<{PRONOUNS.get(t.key, ('',))[0]}>" not in renamed
               for t in words) / (len(words) or 1)
    result = Alignment(True, "aligned", None, bindings, renames,  # type: ignore[arg-type]
                       tuple(order[i] for i in range(len(mine))), kept, tuple(sorted(mapping.objects)))
    if kept < MIN_KEPT:
        return Alignment(False, f"only {kept:.2f} of the routed problem's words kept (< {MIN_KEPT})", "kept",
                         bindings, result.renames, result.sentence_order, kept)
    return result
