"""The slots people change (issue 38): people by their role in the sentence, kinship and role nouns, currencies,
objects of one or more words, statements as clauses; and for each slot kind the near misses that must still be
refused (another person, another kin, another currency or a mix of them, another object, a qualifier)."""

from __future__ import annotations

import pytest

from workers.flywheel.alignment import align, clauses_of, sentences_of, tokens_of

pytestmark = pytest.mark.unit

CLAMS = "Mia picks 12 clams at the beach. She gives 5 clams to her brother. How many clams does Mia have left?"


def test_a_name_no_name_list_knows_is_a_person_by_its_role() -> None:
    # Tendai and Oluwaseun are not in gender-guesser: persons because they act ("picks") and own ("'s")
    routed = "Mia picks 12 clams. Tom picks 5 clams. How many clams does Mia have more than Tom?"
    got = align("Tendai picks 20 clams. Oluwaseun picks 7 clams. How many clams does Tendai have more than "
                "Oluwaseun?", routed)
    assert got.aligned and got.values == ["20", "7"], got.reason
    near = align("Tendai picks 20 clams. Oluwaseun picks 7 clams. How many clams does Oluwaseun have more than "
                 "Tendai?", routed)
    assert not near.aligned


def test_an_unknown_names_gender_comes_from_its_pronouns() -> None:
    got = align("Thandiwe picks 20 shells at the beach. She gives 7 shells to her brother. How many shells does "
                "Thandiwe have left?", CLAMS)
    assert got.aligned and got.values == ["20", "7"], got.reason


def test_an_object_pronoun_is_not_its_clauses_subject() -> None:
    routed = ("Mia has 23 snails in her aquarium. Sara gives her 5 more snails. Then 7 of the snails are moved. "
              "How many snails are left in the aquarium?")
    got = align("Thandiwe has 20 guppies in her aquarium. Tariq gives her 4 more guppies. Then 6 of the guppies "
                "are moved. How many guppies are left in the aquarium?", routed)
    assert got.aligned and got.values == ["20", "4", "6"], got.reason
    # "him" would now stand for another person than the routed "her": refused
    assert not align("Thandiwe has 20 guppies in her aquarium. Tariq gives him 4 more guppies. Then 6 of the "
                     "guppies are moved. How many guppies are left in the aquarium?", routed).aligned


def test_kinship_nouns_are_slots_and_another_kin_asked_is_refused() -> None:
    routed = "Tom is 12 years old. His uncle is 20 years older than him. How old will his uncle be in 5 years?"
    got = align("Omar is 9 years old. His brother is 6 years older than him. How old will his brother be in 3 "
                "years?", routed)
    assert got.aligned and got.values == ["9", "6", "3"], got.reason
    assert ("uncle", "brother") in got.renames
    near = align("Omar is 9 years old. His brother is 6 years older than him. How old will his sister be in 3 "
                 "years?", routed)
    assert not near.aligned and near.failed_at == "asked"
    # a possessive's own kin noun is not whom the pronoun stands for: "Her uncle" after a woman renamed
    reading = ("Amara reads for 45 minutes every evening. Her aunt reads for 5 minutes less than Amara every "
               "evening. How many minutes does her aunt read in 9 days?")
    assert align(reading.replace("Her aunt", "Her uncle").replace("her aunt", "her uncle"), reading).aligned


def test_a_currency_renamed_consistently_aligns_and_a_mix_refuses() -> None:
    routed = "Ana buys 4 pens for $3 each. She pays $2 for a bag. How many dollars does Ana spend?"
    got = align("Yuki buys 5 pens for €2 each. She pays €6 for a bag. How many euros does Yuki spend?", routed)
    assert got.aligned and got.values == ["5", "2", "6"], got.reason
    for near in ("Yuki buys 5 pens for €2 each. She pays ¥6 for a bag. How many euros does Yuki spend?",
                 "Yuki buys 5 pens for €2 each. She pays €6 for a bag. How many dollars does Yuki spend?",
                 "Yuki buys 5 pens for €2 each. She pays €6 for a bag. How many cents does Yuki spend?"):
        assert not align(near, routed).aligned, near
    # "pounds" is a weight unless the text writes £: not a currency to rename then
    weight = "Ana buys 4 pounds of rice. She eats 1 pound of rice. How many pounds of rice are left?"
    assert not align(weight.replace("pounds", "euros").replace("pound ", "euro "), weight).aligned


def test_objects_of_several_words_rename_as_a_whole() -> None:
    routed = "Ana has 12 marbles. She gives 5 marbles to Tom. How many marbles does Ana have left?"
    got = align("Yuki has 20 toy trucks. She gives 7 toy trucks to Omar. How many toy trucks does Yuki have "
                "left?", routed)
    assert got.aligned and got.values == ["20", "7"], got.reason
    assert "marble" in got.objects
    # renamed unlike elsewhere, or another object asked about
    assert not align("Yuki has 20 toy trucks. She gives 7 board games to Omar. How many toy trucks does Yuki have "
                     "left?", routed).aligned
    two = "Ana has 12 marbles and 4 kites. She gives 5 marbles to Tom. How many marbles does Ana have left?"
    assert not align("Yuki has 20 toy trucks and 4 kites. She gives 7 toy trucks to Omar. How many kites does "
                     "Yuki have left?", two).aligned
    # a qualifier is not a name: "red apples" -> "green apples" changes which apples
    apples = "Ana has 6 red apples and 4 green apples. How many red apples does Ana have?"
    assert not align("Ana has 6 red apples and 4 green apples. How many green apples does Ana have?", apples).aligned


def test_sentence_boundaries_do_not_decide() -> None:
    joined = "Ana earns $25 a week, and she saves $5 a week. Tom earns $3 a week. How many dollars does Ana spend?"
    split = "Ana earns $20 a week. She saves $4 a week. Tom earns $2 a week. How many dollars does Ana spend?"
    got = align(split, joined)
    assert got.aligned and got.values == ["20", "4", "2"], got.reason
    assert align(joined.replace("25", "30"), split).aligned
    clauses, asked = clauses_of(sentences_of(tokens_of(joined)), 2)
    assert len(clauses) == 4 and asked == 3
    # "Ana and Bo" is one subject, not two statements
    assert len(clauses_of(sentences_of(tokens_of("Ana and Bo have 5 pens. How many?")), 1)[0]) == 2
    # a clause whose pronoun refers to the clause before it keeps its place
    routed = "Tom has 5 pens, and he buys 3 cups. Mia has 2 hats. How many things do they have?"
    assert not align("He buys 1 cups, and Tom has 6 pens. Mia has 4 hats. How many things do they have?",
                     routed).aligned


def test_an_appositive_name_is_a_person_and_a_noun_phrase_after_an_article_may_hold_a_verb() -> None:
    routed = "The library had 400 books. Kofi, the librarian, bought 13 new books. How many books are there now?"
    got = align("The library had 300 comics. Bongani, the librarian, bought 9 new comics. How many comics are "
                "there now?", routed)
    assert got.aligned and got.values == ["300", "9"], got.reason
    plant = "A bamboo shoot is 17 centimeters tall. It grows 3 centimeters every week. How tall is it after 5 weeks?"
    got = align(plant.replace("bamboo shoot", "bean plant").replace("17", "12"), plant)
    assert got.aligned and got.values == ["12", "3", "5"], got.reason


def test_a_fixed_word_asked_is_no_category_when_objects_are_renamed() -> None:
    routed = "Ana wants 4 kites that cost $9 each. She has $20. How many more dollars does Ana need?"
    got = align("Yuki wants 3 toy trucks that cost €8 each. She has €10. How many more euros does Yuki need?", routed)
    assert got.aligned and got.values == ["3", "8", "10"], got.reason


SHOES = ("A pair of shoes costs $59. A pair of socks costs $8 less than the shoes. Sipho buys the shoes and 4 pairs "
         "of socks. How many dollars does Sipho spend?")


def test_an_object_counted_in_pairs_renames_as_a_whole() -> None:
    got = align("A pair of shoes costs €41. A hat costs €8 less than the shoes. Olga buys the shoes and 3 hats. How "
                "many euros does Olga spend?", SHOES)
    assert got.aligned and got.values == ["41", "8", "3"], got.reason
    assert "pair of sock" in got.objects


def test_a_pair_renamed_only_where_asked_or_a_unit_before_of_is_refused() -> None:
    routed = "Ana buys 4 pairs of socks for $3 each. She has $20. How many pairs of socks does Ana buy?"
    # the asked quantity counts socks, not pairs: the body keeps "pairs of socks"
    assert not align("Ana buys 4 pairs of socks for $3 each. She has $20. How many socks does Ana buy?",
                     routed).aligned
    # a unit before "of" must agree: 4 kilograms of rice are no object counted 4 times
    rice = "Ana buys 4 melons for $3 each. She has $20. How many dollars does Ana have left?"
    assert align("Ana buys 4 boxes of tea for $3 each. She has $20. How many dollars does Ana have left?",
                 rice).aligned
    assert not align("Ana buys 4 kilograms of rice for $3 each. She has $20. How many dollars does Ana have left?",
                     rice).aligned
    # another object asked about: the pairs renamed in the body, the shoes' rename seen only in the question
    assert not align("A pair of shoes costs €41. A hat costs €8 less than the shoes. Olga buys the shoes and 3 hats. "
                     "How many euros does one pair of boots cost?", SHOES).aligned


def test_a_verb_form_may_qualify_an_objects_name() -> None:
    routed = "Ahmed wants to buy 8 marbles that cost $18 each. He has saved $27 so far. How many more dollars does " \
             "Ahmed need?"
    got = align("Esperanza wants to buy 4 trading cards that cost ₱17 each. She has saved ₱20 so far. How many more "
                "pesos does Esperanza need?", routed)
    assert got.aligned and got.values == ["4", "17", "20"], got.reason
    # a qualifier renamed alone still changes which objects: "used books" -> "new books" is another quantity
    books = "Ana has 12 used books and 5 new books. She sells 3 used books. How many used books does Ana have left?"
    assert not align("Ana has 12 used books and 5 new books. She sells 3 used books. How many new books does Ana "
                     "have left?", books).aligned


def test_a_names_gender_is_the_texts_where_its_pronouns_say_so() -> None:
    from workers.flywheel.alignment import _persons

    # gender-guesser lists Jin as a woman's name; this text makes Jin a man
    routed = ("Hiroshi has 19 coins of 2 dollars in his piggy bank. His cousin adds 31 dollars. How many dollars are "
              "in the piggy bank?")
    got = align("Jin has 5 coins of 2 yen in his piggy bank. His coach adds 16 yen. How many yen are in the piggy "
                "bank?", routed)
    assert got.aligned and got.values == ["5", "2", "16"], got.reason
    # "Her" then stands for someone else than Jin: refused
    assert not align("Jin has 5 coins of 2 yen in his piggy bank. Her coach adds 16 yen. How many yen are in the "
                     "piggy bank?", routed).aligned
    # only a pronoun whose sentence has no other person before it decides: "his" after Jin and Tom may be Tom's
    assert _persons(tokens_of("Jin gives Tom his 5 coins. How many coins does Tom have?"))["jin"] == "f"
    assert _persons(tokens_of("Jin keeps 5 coins in his bag. How many coins?"))["jin"] == "m"


def test_a_statement_whose_subject_is_left_out_aligns_with_a_pronoun_for_it() -> None:
    routed = ("Zainab earns £25 a week walking her grandmother's dog. She saves the money for 9 weeks and then spends "
              "£37 on stickers. How many pounds does Zainab have left?")
    got = align("Arjun earns $25 a week walking his uncle's dog, and he saves the money for 7 weeks. Then he spends "
                "$21 on puzzles. How many dollars does Arjun have left?", routed)
    assert got.aligned and got.values == ["25", "7", "21"], got.reason
    boxes = ("Nadia baked 84 cinnamon rolls for the school fair. She put them into boxes of 12. She sold each box for "
             "€4. How many euros did Nadia make?")
    got = align("Fatima baked 108 banana bread loaves for the school fair and put them into boxes of 3. She sold each "
                "box for ¥9. How many yen did Fatima make?", boxes)
    assert got.aligned and got.values == ["108", "3", "9"], got.reason


def test_a_left_out_subject_is_the_statement_befores_and_no_other_persons() -> None:
    routed = "Mia has 5 pens and then buys 3 cups. Tom has 4 hats. How many things does Mia have?"
    # the pronoun stands for another person than the clause before's subject
    assert not align("Mia gave Tom 5 pens. Then he buys 3 cups. Tom has 4 hats. How many things does Mia have?",
                     "Mia gave Tom 5 pens and then buys 3 cups. Tom has 4 hats. How many things does Mia have?"
                     ).aligned
    assert not align("Omar gave Tom 5 pens. Then he buys 3 cups. Tom has 4 hats. How many things does Omar have?",
                     "Omar gave Tom 5 pens and then buys 3 cups. Tom has 4 hats. How many things does Omar have?"
                     ).aligned
    # the statement moved after another: someone else buys
    assert not align("Mia has 5 pens. Tom has 4 hats and buys 3 cups. How many things does Mia have?",
                     "Mia has 5 pens and buys 3 cups. Tom has 4 hats. How many things does Mia have?").aligned
    assert align("Sara has 6 pens. Then she buys 2 cups. Omar has 3 hats. How many things does Sara have?",
                 routed).values == ["6", "2", "3"]


def test_equivalent_question_frames_align_and_the_asked_quantity_still_agrees() -> None:
    routed = ("Zainab earns £25 a week walking her dog. She saves the money for 9 weeks and then spends £37 on "
              "stickers. How many pounds does Zainab have left?")
    got = align("Fatima earns ₱12 a week walking her dog. She saves the money for 8 weeks and then spends ₱14 on "
                "puzzles. How much money does Fatima have left?", routed)
    assert got.aligned and got.values == ["12", "8", "14"], got.reason
    # money is the text's one currency: not with two currencies, not for another quantity, not for cents
    assert not align("Fatima earns ₱12 a week walking her dog. She saves the money for 8 weeks and then spends $14 "
                     "on puzzles. How much money does Fatima have left?", routed).aligned
    pens = "Ana buys 12 pens for $3 each. She gives away 5 pens. How many pens does Ana have left?"
    assert not align("Ana buys 12 pens for $3 each. She gives away 5 pens. How much money does Ana have left?",
                     pens).aligned
    cents = "Ana has $12 and 5 cents. She spends $3. How many dollars does Ana have left?"
    assert not align("Ana has $12 and 5 cents. She spends $3. How much money does Ana have left?", cents).aligned
    jar = "A jar holds 95 gumdrops. Siobhan eats 3 of them. How many gumdrops are left in the jar?"
    got = align("A jar holds 97 jelly beans. Olga eats 9 of them. How many jelly beans remain in the jar?", jar)
    assert got.aligned and got.values == ["97", "9"], got.reason
    assert not align("A jar holds 97 jelly beans. Olga eats 9 of them. How many jelly beans does Olga eat?",
                     jar).aligned
    slices = "Mei cut 5 pizzas into 12 slices each. The guests ate 20 slices. How many slices were left?"
    assert align("Mei cut 4 pizzas into 8 slices each. The guests ate 9 slices. How many of the slices were left?",
                 slices).values == ["4", "8", "9"]
    assert not align("Mei cut 4 pizzas into 8 slices each. The guests ate 9 slices. How many slices of the pizzas "
                     "were left?", slices).aligned


def test_a_standing_fact_may_move_and_an_event_about_every_one_may_not() -> None:
    routed = ("Ravi collected 6 buckets of crabs at the beach, and Nora collected 9 buckets. Each bucket held 11 "
              "crabs. Ravi gave 5 of his buckets to his teacher. How many crabs did they keep?")
    got = align("Each bucket held 12 stones. Jamal collected 8 buckets of stones at the beach, and Liam collected 6 "
                "buckets. Jamal gave 1 of his buckets to his teacher. How many stones did they keep?", routed)
    assert got.aligned and got.values == ["8", "6", "12", "1"], got.reason
    farm = ("Tom has 10 horses and 9 yaks on his farm. Each horse eats 8 pounds of feed a day, and each yak eats 14 "
            "pounds of feed a day. How many pounds of feed do the animals eat each day?")
    assert align("Each horse eats 7 pounds of feed a day, and each yak eats 3 pounds of feed a day. Tom has 5 horses "
                 "and 4 yaks on his farm. How many pounds of feed do the animals eat each day?", farm).aligned
    # an event about every bag happens at its place: 4 apples put in each of 3 bags, or of 5
    bags = "There are 3 bags. 4 apples are put in each bag. 2 bags are bought. How many apples are in the bags?"
    assert not align("There are 3 bags. 2 bags are bought. 4 apples are put in each bag. How many apples are in the "
                     "bags?", bags).aligned
    # a fact about a person's things is no standing fact: moved, "her" is another person's
    pens = "Ana buys 3 boxes. Each of her boxes holds 4 pens. Mia buys 2 boxes. How many pens are in the boxes?"
    assert not align("Ana buys 3 boxes. Mia buys 2 boxes. Each of her boxes holds 4 pens. How many pens are in the "
                     "boxes?", pens).aligned


def test_a_host_may_change_gender_where_the_question_counts_people_by_gender() -> None:
    routed = "There are 60 children at Santiago's party. 80% of them are girls. How many boys are at the party?"
    got = align("There are 30 children at Siobhan's party. 20% of them are girls. How many boys are at the party?",
                routed)
    assert got.aligned and got.values == ["30", "20"], got.reason
    # the person among those counted (a family's, named where asked, or a subject) keeps the gender
    family = "Santiago's family has 6 children. 4 of them are girls. How many boys are in the family?"
    assert not align("Siobhan's family has 6 children. 4 of them are girls. How many boys are in the family?",
                     family).aligned
    asked = "There are 60 children at Santiago's party. 80% of them are girls. How many boys besides Santiago are " \
            "at the party?"
    assert not align("There are 60 children at Siobhan's party. 80% of them are girls. How many boys besides "
                     "Siobhan are at the party?", asked).aligned
    subject = "Santiago invites 60 children. 80% of them are girls. How many boys are at the party?"
    assert not align("Siobhan invites 60 children. 80% of them are girls. How many boys are at the party?",
                     subject).aligned


def test_how_much_money_is_no_frame_where_pounds_may_be_a_weight() -> None:
    # review F3: in a text that writes £, "pounds" of apples are still a weight; the routed asks pounds of apples
    routed = ("Tom picks 3 pounds of apples each day for 4 days and sells them for £2 a pound. How many pounds does "
              "Tom get?")
    assert not align("Tom picks 5 pounds of apples each day for 6 days and sells them for £3 a pound. How much money "
                     "does Tom get?", routed).aligned
    assert not align("Tom has 5 pounds of rice. He pays £3 for each pound. How much money does Tom have?",
                     "Tom has 6 pounds of rice. He pays £2 for each pound. How many pounds does Tom have?").aligned
    assert not align("A bag of flour weighs 6 pounds and costs £2. Tom buys 3 bags. How much money does Tom buy?",
                     "A bag of flour weighs 5 pounds and costs £3. Tom buys 4 bags. How many pounds does Tom buy?"
                     ).aligned


def test_an_event_about_every_one_keeps_its_place_whatever_its_verb() -> None:
    # review F4: only a price, size or content verb makes a standing fact; "tossed", "placed" are events
    for verb in ("tossed", "placed"):
        bags = f"There are 3 bags. 4 apples are {verb} in each bag. 2 bags are bought. How many apples are in the bags?"
        assert not align(f"There are 3 bags. 2 bags are bought. 4 apples are {verb} in each bag. How many apples are "
                         "in the bags?", bags).aligned, verb


def test_a_left_out_subject_after_a_possessive_is_not_the_owner() -> None:
    # review F5: "Ana's brother has 6 pens. Then she buys" -- she is Ana, the routed buyer is the brother
    routed = ("Mia's brother has 5 pens and then buys 3 cups. Tom has 4 hats. How many things does Mia's brother "
              "have?")
    assert not align("Ana's brother has 6 pens. Then she buys 2 cups. Tom has 3 hats. How many things does Ana's "
                     "brother have?", routed).aligned
    assert align("Ana's brother has 6 pens and then buys 2 cups. Tom has 3 hats. How many things does Ana's brother "
                 "have?", routed).values == ["6", "2", "3"]


def test_a_role_nouns_pronoun_does_not_give_a_name_its_gender() -> None:
    from workers.flywheel.alignment import _persons

    # review F6: "his" is the waiter's; Mia stays a woman, and "He" is not Mia
    assert not align("Mia asked the waiter for his 6 pens. He gives 2 pens to Ana. How many pens does Mia have?",
                     "Tom asked the waiter for his 5 pens. He gives 3 pens to Ana. How many pens does Tom have?"
                     ).aligned
    assert not align("Mia borrowed 6 pens from the waiter and his friend. He gives 2 pens to Ana. How many pens does "
                     "Mia have?", "Tom borrowed 5 pens from the waiter and his friend. He gives 3 pens to Ana. How "
                     "many pens does Tom have?").aligned
    assert _persons(tokens_of("Mia asked the waiter for his 6 pens. How many pens?"))["mia"] == "f"


def test_a_host_who_may_be_counted_keeps_the_gender() -> None:
    # review F7: "besides the host" -- the host is among those the question counts by gender
    assert not align("There are 30 kids at Siobhan's party besides the host. 10 of them are girls. How many boys are "
                     "at the party?", "There are 20 kids at Santiago's party besides the host. 12 of them are girls. "
                     "How many boys are at the party?").aligned
    assert not align("There are 30 kids at Siobhan's party including the birthday child. 10 of them are girls. How "
                     "many boys are at the party?", "There are 20 kids at Santiago's party including the birthday "
                     "child. 12 of them are girls. How many boys are at the party?").aligned


def test_how_many_of_the_drops_only_the_article() -> None:
    # "how many of his pens" asks about one person's pens: not "how many pens"
    routed = "Ana has 12 pens and Tom has 5 pens. They give away 3 pens. How many pens are left?"
    assert align("Ana has 10 pens and Tom has 4 pens. They give away 2 pens. How many of the pens are left?",
                 routed).values == ["10", "4", "2"]
    assert not align("Ana has 10 pens and Tom has 4 pens. They give away 2 pens. How many of his pens are left?",
                     routed).aligned


PEN = "A pen costs {c}4. Ana buys 3 pens. How much does Ana spend?"
PEN_WORD = "A pen costs 4 {c}. Ana buys 3 pens. How many {c} does Ana spend?"


def test_a_currency_symbol_is_a_currency_by_its_unicode_category() -> None:
    # hryvnia and shekel signs are in no table: currency symbols (Unicode Sc) all the same
    for sign in "₴₪":
        got = align(PEN.format(c=sign).replace("4", "7"), PEN.format(c="$"))
        assert got.aligned and got.values == ["7", "3"], got.reason
    # the cent sign is a fraction of a currency, a unit: never a currency slot
    assert not align(PEN.format(c="¢"), PEN.format(c="$")).aligned


def test_a_currency_word_no_table_knows_is_no_currency_slot() -> None:
    # a word guessed to be money by its use let "centavos", "grand" and "apples" stand for dollars (the second
    # review): only the table's currency words are slots
    for word in ("bucks", "grand", "centavos"):
        assert not align(PEN_WORD.format(c=word), PEN_WORD.format(c="dollars")).aligned, word
    # a unit, cents, or two currencies where the routed problem has one: refused
    assert not align(PEN_WORD.format(c="cents"), PEN_WORD.format(c="dollars")).aligned
    assert not align("A pen costs 4 shillings. A cap costs 3 dollars. How many shillings does Ana spend on both?",
                     "A pen costs 4 dollars. A cap costs 3 dollars. How many dollars does Ana spend on both?").aligned


def test_the_worlds_currencies_by_name_sign_and_letter_sign_are_one_consistent_slot() -> None:
    """Issue 38: hryvnias, lari, kip, shillings, ringgit ... are currency words, their signs (₴, ₾, ₭) name the same
    currency as their words, "KSh12" is a sign and an amount, and "won" right after an amount is money; a question
    mixing two currencies where the routed problem has one is still refused."""
    routed = "A baker sells 6 loaves at £4 each. How many pounds does she take in?"
    for sign, word in (("₴", "hryvnias"), ("₾", "lari"), ("₭", "kip"), ("KSh", "shillings"), ("RM", "ringgit")):
        got = align(f"A baker sells 5 loaves at {sign}9 each. How many {word} does she take in?", routed)
        assert got.aligned and got.values == ["5", "9"], (sign, got.reason)
    for word in ("shillings", "dirhams", "won"):
        got = align(PEN_WORD.format(c=word).replace("4", "7"), PEN_WORD.format(c="dollars"))
        assert got.aligned and got.values == ["7", "3"], (word, got.reason)
    # one currency's sign with another's word, or two currencies: refused
    assert not align("A baker sells 5 loaves at ₴9 each. How many lari does she take in?", routed).aligned
    assert not align("A pen costs 4 shillings. A cap costs 3 dirhams. How many shillings does Ana spend on both?",
                     "A pen costs 4 dollars. A cap costs 3 dollars. How many dollars does Ana spend on both?").aligned
    # "won" not after an amount, in a text without ₩, is a verb: no currency
    assert not align("Ana won 4 games and 3 prizes. How many won does Ana have?",
                     "Ana won 4 games and 3 prizes. How many dollars does Ana have?").aligned


QUILTS = "Anna stitches 12 quilts. Tom stitches 5 quilts. How many quilts does Anna stitch more than Tom?"


def test_a_capitalized_word_aligned_with_a_persons_name_is_a_person() -> None:
    # "stitches" is in no verb list and Zuberi in no name list: a person where it aligns with Anna
    got = align("Zuberi stitches 20 quilts. Tom stitches 7 quilts. How many quilts does Zuberi stitch more than "
                "Tom?", QUILTS)
    assert got.aligned and got.values == ["20", "7"], got.reason
    # another person asked about, or a word the text also writes in lowercase (a common noun): refused
    assert not align("Zuberi stitches 20 quilts. Tom stitches 7 quilts. How many quilts does Tom stitch more than "
                     "Zuberi?", QUILTS).aligned
    assert not align("Market stitches 20 quilts. Tom stitches 7 quilts for the market. How many quilts does Market "
                     "stitch more than Tom?", "Anna stitches 12 quilts. Tom stitches 5 quilts for the market. How "
                     "many quilts does Anna stitch more than Tom?").aligned


LUCY = "Lucy has 12 apples. She gives 5 apples to Tom. How many apples does Lucy have now?"


def test_a_name_of_another_word_count_is_one_rename() -> None:
    got = align("Mary Ann has 20 apples. She gives 7 apples to Tom. How many apples does Mary Ann have now?", LUCY)
    assert got.aligned and got.values == ["20", "7"], got.reason
    # a word of the name also another person's name, another person asked about, a man for a woman: refused
    assert not align("Mary Ann has 20 apples. She gives 7 apples to Ann. How many apples does Mary Ann have now?",
                     LUCY).aligned
    assert not align("Mary Ann has 20 apples. She gives 7 apples to Tom. How many apples does Tom have now?",
                     LUCY).aligned
    assert not align("John Paul has 20 apples. She gives 7 apples to Tom. How many apples does John Paul have now?",
                     LUCY).aligned


UNCLE = "Tom has 12 apples. He gives 5 apples to his uncle. How many apples does Tom have now?"


def test_a_kinship_or_role_noun_no_table_knows_aligns_with_one_it_knows() -> None:
    got = align(UNCLE.replace("uncle", "great aunt").replace("12", "20"), UNCLE)
    assert got.aligned and got.values == ["20", "5"], got.reason
    # a noun the table does not know is no kin slot (a role noun guessed by its use let "his dog" and "his
    # parents" stand for "his uncle": the second review)
    for kin in ("plumber", "hamster", "best pal", "friend"):
        assert not align(UNCLE.replace("uncle", kin).replace("12", "20"), UNCLE).aligned, kin
    # "best friend" is one (a friend alone may be counted as a thing is: "20 TikTok friends"), and so are the
    # accented and newer nouns of the table
    for kin in ("best friend", "fiancée", "headteacher", "grandniece"):
        got = align(UNCLE.replace("uncle", kin).replace("12", "20"), UNCLE)
        assert got.aligned and got.values == ["20", "5"], (kin, got.reason)
    # another kin asked about than the one renamed; an object counted in the text: refused
    routed = "Tom has 12 apples. His uncle has 5 apples. How many apples does his uncle have?"
    assert not align("Tom has 12 apples. His godmother has 5 apples. How many apples does his aunt have?",
                     routed).aligned
    assert not align("Tom has 12 apples. He gives 5 apples to his basket. How many baskets does Tom have now?",
                     UNCLE).aligned


def test_names_and_kin_with_a_hyphen_or_letters_beyond_ascii_are_one_rename() -> None:
    for name in ("Jean-Luc", "José"):
        got = align(UNCLE.replace("Tom", name).replace("12", "20"), UNCLE)
        assert got.aligned and got.values == ["20", "5"], (name, got.reason)
    got = align(UNCLE.replace("uncle", "great-aunt"), UNCLE)
    assert got.aligned, got.reason
    # a woman's name for Tom where "He" stands for him: refused
    assert not align("Zoë has 12 apples. He gives 5 apples to his uncle. How many apples does Zoë have now?",
                     "Tom has 12 apples. He gives 5 apples to his uncle. How many apples does Tom have now?").aligned


LAPS = "Emeka cycles 9 laps. His godmother cycles 4 laps. How many laps do they cycle?"


def test_two_proper_nouns_in_the_same_slot_are_one_person_and_gender_still_agrees() -> None:
    # neither name is in a name list and "cycles" is in no verb list: a person by being capitalized inside a
    # sentence too ("... does Bongani cycle"), or by a gendered pronoun that stands for it ("His godmother" after
    # it); only at a sentence's start and with no pronoun for it, it may be a common noun ("Children")
    got = align("Bongani cycles 12 laps. His godmother cycles 5 laps. How many laps do they cycle?", LAPS)
    assert got.aligned and got.values == ["12", "5"], got.reason
    plain = "Emeka cycles 9 laps. The godmother cycles 4 laps. How many laps do they cycle?"
    assert not align(plain.replace("Emeka", "Bongani"), plain).aligned
    got = align("Bongani cycles 12 laps. His godmother cycles 5 laps. How many laps does Bongani cycle more?",
                "Emeka cycles 9 laps. His godmother cycles 4 laps. How many laps does Emeka cycle more?")
    assert got.aligned and got.values == ["12", "5"], got.reason
    # "Her" for "His" where the name is a man's: refused ("Bongani ... Her godmother" makes Bongani a woman by the
    # pronoun that stands for her, a consistent rename); the other person asked about: refused
    assert not align("Pedro cycles 12 laps. Her godmother cycles 5 laps. How many laps do they cycle?",
                     LAPS).aligned
    assert align("Bongani cycles 12 laps. Her godmother cycles 5 laps. How many laps do they cycle?", LAPS).aligned
    assert not align("Bongani cycles 12 laps. Tamati cycles 5 laps. How many laps does Tamati cycle more?",
                     "Emeka cycles 9 laps. Tamati cycles 4 laps. How many laps does Emeka cycle more?").aligned


def test_a_capitalized_word_qualifying_the_subjects_noun_is_no_person_a_pronoun_stands_for() -> None:
    """Review 3 of issue 38: "She" made "Car" of "Car tires cost" a person, so "Car" -> "Bike" aligned as a name with
    no object renamed, and the stored program's 4 tires a set bound a bike's full set to $200 ($100)."""
    cars = "Car tires cost $50 each. She buys a full set. How much does she spend?"
    got = align(cars.replace("Car", "Bike"), cars)
    assert not got.aligned and "must agree" in got.reason, got.reason
    # a name before a verb still is one ("Bongani cycles 12 laps. His godmother ..."): the test above


def test_a_noun_after_a_possessive_is_no_kinship_noun() -> None:
    # "her uncle" -> "his plumber": refused, as "his dog" and "his parents" are (the second review)
    routed = "Ana and her uncle have 12 apples. Ana eats 5 apples. How many apples are left?"
    assert not align("Tom and his plumber have 20 apples. Tom eats 7 apples. How many apples are left?",
                     routed).aligned
    # a word the text also counts (an object, not a person): refused
    assert not align("Tom and his crate have 20 apples. Tom eats 7 crates. How many apples are left?",
                     routed).aligned


def test_won_is_a_currency_only_in_a_text_that_writes_its_symbol() -> None:
    routed = "A boat rents for ₩28 an hour. Ahmed keeps one for 2 hours. How many won does Ahmed pay?"
    got = align("A boat rents for ¥30 an hour. Ahmed keeps one for 3 hours. How many yen does Ahmed pay?", routed)
    assert got.aligned and got.values == ["30", "3"], got.reason
    # without the symbol "won" is a verb: it must agree
    assert not align("Ahmed won 28 games. He lost 2 games. How many games did Ahmed play?",
                     "Ahmed lost 28 games. He lost 2 games. How many games did Ahmed play?").aligned
    assert not align("Ahmed lost 28 yen. He won 2 yen. How many yen does Ahmed have?",
                     "Ahmed lost 28 dollars. He lost 2 dollars. How many dollars does Ahmed have?").aligned


def test_the_second_reviews_near_misses_against_the_slots_by_use_are_refused() -> None:
    """Each was aligned (a confident wrong answer) by the slot-by-use rules before this fix."""
    uncle = "Tom and his uncle each buy 4 apples. How many apples do they buy in all?"
    # several people for one, or a thing for a person: another count of people
    for other in ("his parents", "his kids", "his toy car", "his dog"):
        assert not align(uncle.replace("his uncle", other), uncle).aligned, other
    # a word no table knows is no currency: centavos are a hundredth of a peso, "grand" a thousand
    dollars = "Ana has 10 dollars. A pen costs 50 cents. She buys 6 pens. How many dollars does Ana have left?"
    for word in ("centavos", "grand", "pence"):
        assert not align(dollars.replace("dollars", word), dollars).aligned, word
    # one word for the currency and an object
    apples = "Ana has 20 dollars. She buys 6 apples for 2 dollars each. How many dollars does Ana have left?"
    assert not align(apples.replace("dollars", "apples"), apples).aligned
    # fractions of a currency whatever their sign
    pen = "A pen costs $4. Ana buys 3 pens. How much money does Ana spend?"
    for sign in ("￠", "₰", "৻"):
        assert not align(pen.replace("$", sign), pen).aligned, sign
    assert not align("Ana has $5. A pen costs ￠50. How much money does Ana have left?",
                     "Ana has $5. A pen costs €2. How much money does Ana have left?").aligned
    # a common noun or pronoun opening a sentence is no person
    mia = "Tom buys 12 apples. Mia buys 5 apples. How many apples do they buy?"
    for who in ("Children", "Everyone", "Nothing"):
        assert not align(mia.replace("Mia", who), mia).aligned, who


def test_what_the_slots_by_use_still_align() -> None:
    assert align("A pen costs ₴4. Ana buys 3 pens. How much money does Ana spend?",
                 "A pen costs $4. Ana buys 3 pens. How much money does Ana spend?").aligned
    assert align("Zuberi stitches 12 quilts. How many quilts does Zuberi stitch?",
                 "Anna stitches 9 quilts. How many quilts does Anna stitch?").aligned
    assert align("Tom and his great aunt each buy 4 apples. How many apples do they buy in all?",
                 "Tom and his uncle each buy 3 apples. How many apples do they buy in all?").aligned


MUFFIN = "A bakery sells a muffin for {c}90. Nomvula buys 7 muffins. How many {w} does Nomvula pay?"


def test_a_currency_sign_of_letters_before_the_amount_is_a_currency_and_the_amount_a_number() -> None:
    from workers.flywheel.structure import question_numbers

    assert [n.text for n in question_numbers("A muffin costs kr90, a pie R15 and a cake zł17.5.")] == \
        ["90", "15", "17.5"]
    # a word before digits is no sign and its digits no number ("v2", "bkr80"), as before
    assert question_numbers("Use v2 and bkr80 and Rr5.") == ()
    for sign, word in (("kr", "kronor"), ("R", "rand"), ("zł", "złoty"), ("Kč", "korunas"), ("Ft", "forints"),
                       ("֏", "drams")):
        got = align(MUFFIN.format(c=sign, w=word).replace("90", "120"), MUFFIN.format(c="$", w="dollars"))
        assert got.aligned and got.values == ["120", "7"], (sign, got.reason)
        back = align(MUFFIN.format(c="¥", w="yen").replace("90", "45"), MUFFIN.format(c=sign, w=word))
        assert back.aligned and back.values == ["45", "7"], (sign, back.reason)
    # another currency asked, two currencies mixed, a fraction of it asked: refused
    routed = MUFFIN.format(c="kr", w="kronor")
    for near in (MUFFIN.format(c="kr", w="dollars"), MUFFIN.format(c="R", w="kronor"),
                 MUFFIN.format(c="Kč", w="forints"), MUFFIN.format(c="֏", w="korunas"),
                 MUFFIN.format(c="kr", w="cents"),
                 "A bakery sells a muffin for kr90. Nomvula buys 7 muffins for R5 more. How many kronor does "
                 "Nomvula pay?"):
        assert not align(near, routed).aligned, near


def test_a_letter_signs_amount_with_a_full_stop_before_three_digits_is_no_number() -> None:
    """Review 3 of issue 38: "kr1.500" and "Rp15.000" are thousands where those signs are written; read as 1.5 and
    15 they bound a confident answer a thousand times too small."""
    from workers.flywheel.structure import question_numbers

    routed = "Tom buys 3 books for $15 each. How much does he spend?"
    for amount in ("kr1.500", "Rp15.000", "zł2.500", "R1,200.000"):
        near = routed.replace("Tom", "Lars").replace("$15", amount)
        assert not align(near, routed).aligned, amount
        assert "1,200" in amount or [n.text for n in question_numbers(near)] == ["3"], amount
    # decimals of another length and comma thousands still bind
    for amount, value in (("kr15.50", "15.50"), ("kr1,500", "1500"), ("R15", "15")):
        got = align(routed.replace("Tom", "Lars").replace("$15", amount), routed)
        assert got.aligned and got.values == ["3", value], (amount, got.reason)


def test_kinship_and_role_nouns_of_the_table_rename_and_another_one_asked_refuses() -> None:
    routed = ("Yuki teaches 9 classes a week. She pays her tutor ¥40 a week. How many yen does Yuki keep after "
              "paying her tutor, if a class pays ¥50?")
    for kin in ("godmother", "landlord", "flatmate", "stepfather", "landlady", "business partner"):
        got = align(routed.replace("tutor", kin).replace("9", "11"), routed)
        assert got.aligned and got.values[0] == "11", (kin, got.reason)
    # another kin asked about than the one renamed, or several people for one: refused
    assert not align(routed.replace("her tutor ¥40", "her landlord ¥40").replace("paying her tutor",
                                                                                  "paying her landlady"),
                     routed).aligned
    assert not align(routed.replace("tutor", "godparents"), routed).aligned
    # the pronoun checks still hold: "She" where the question names two men refuses
    shop = "Ana and her tutor run a stall. She sells 12 pies. How many pies does Ana sell in 3 days?"
    assert not align(shop.replace("Ana", "Omar").replace("her tutor", "his stepfather"), shop).aligned
    got = align(shop.replace("Ana", "Omar").replace("her tutor", "his stepfather").replace("She", "He"), shop)
    assert got.aligned and ("tutor", "stepfather") in got.renames, got.reason


STALL = ("At a match Ana sells coconuts from a stall. She buys 30 of them for $120 in all and sells every one for $5. "
         "How many dollars of profit does Ana make?")


def test_an_object_after_its_verb_renames_as_a_whole() -> None:
    for other in ("iced teas", "juice boxes", "cans of soda"):
        got = align(STALL.replace("coconuts", other).replace("30", "20"), STALL)
        assert got.aligned and got.values == ["20", "120", "5"], (other, got.reason)
    # a qualifier added where the routed word stays elsewhere, or another object asked about: refused
    apples = "Ana sells apples at a stall. She sells 30 apples for $2 each. How many apples does Ana sell in 3 days?"
    assert not align(apples.replace("sells apples", "sells red apples"), apples).aligned
    assert not align(apples.replace("sells apples", "sells pears").replace("30 apples", "30 pears"), apples).aligned


def test_a_noun_phrase_after_of_may_hold_a_verb_and_a_participle_may_follow_an_object() -> None:
    tables = ("Lea is catering a wedding for 108 guests. Each table seats 9 guests and gets 5 napkin rings. How many "
              "napkin rings does Lea need?")
    got = align(tables.replace("napkin rings", "bottles of sparkling water").replace("108", "44"), tables)
    assert got.aligned and got.values == ["44", "9", "5"], got.reason
    # a unit before "of" is still no object's name
    assert not align(tables.replace("napkin rings", "liters of sparkling water"), tables).aligned
    shop = ("Kwame picks out 4 rain jackets priced at $15 apiece and one shirt priced at $70. The shop takes 10% off "
            "the whole bill. How many dollars does Kwame pay?")
    for jackets, shirt in (("wool coats", "shirt"), ("dresses", "pair of sandals"), ("pairs of sandals", "hat")):
        got = align(shop.replace("rain jackets", jackets).replace("one shirt", f"one {shirt}").replace("4", "2"),
                    shop)
        assert got.aligned and got.values == ["2", "15", "70", "10"], (jackets, shirt, got.reason)
    # a content word that is no participle after the name: it may be the noun the name qualifies
    trucks = "Ana has 5 toy trucks. Each toy truck has 4 wheels. How many wheels are there?"
    assert not align("Ana has 5 toy truck wheels. Each toy truck has 4 wheels. How many wheels are there?",
                     trucks).aligned


ROAD = ("Bongani cycles at 20 kilometers an hour. His godmother drives the same road at 85 kilometers an hour. They "
        "leave together. How many kilometers ahead is the godmother after 5 hours?")


def test_a_capitalized_word_a_gendered_pronoun_stands_for_is_a_person() -> None:
    for name in ("Pedro", "Emeka", "Jo"):
        got = align(ROAD.replace("Bongani", name).replace("20", "12"), ROAD)
        assert got.aligned and got.values == ["12", "85", "5"], (name, got.reason)
    # the pronoun of the other gender, another person asked, or the other slot asked: refused
    assert not align(ROAD.replace("Bongani", "Pedro").replace("His", "Her"), ROAD).aligned
    assert not align(ROAD.replace("Bongani", "Pedro").replace("ahead is the godmother", "ahead is Pedro's aunt"),
                     ROAD).aligned
    assert not align(ROAD.replace("Bongani", "Pedro").replace("is the godmother", "is Pedro"), ROAD).aligned
    # a plural, an indefinite pronoun, or a word after a number is never a person, pronoun or not
    sale = "Tom buys 12 apples. His sister buys 5 apples. How many apples do they buy?"
    for who in ("Children", "Everyone", "Nothing"):
        assert not align(sale.replace("Tom", who), sale).aligned, who


BILL = ("Kwame's family uses 12 kilowatt-hours of electricity a day. Each kilowatt-hour costs $4. How many dollars is "
        "the family's bill for a 28-day month?")


def test_a_name_that_owns_something_renames_to_a_name_of_several_words() -> None:
    # Kwame is in no name list and written only at a sentence's start: a person by owning something
    got = align(BILL.replace("Kwame", "Jean-Baptiste").replace("12", "24"), BILL)
    assert got.aligned and got.values == ["24", "4", "28"], got.reason
    got = align(BILL.replace("Kwame", "Ana Sofia"), BILL)
    assert got.aligned, got.reason
    # a unit changed, or a word of the name written apart as well: refused
    assert not align(BILL.replace("Kwame", "Ana Sofia").replace("dollars", "cents"), BILL).aligned
    assert not align(BILL.replace("Kwame", "Ana Sofia").replace("the family's", "Sofia's"), BILL).aligned


FARES = ("Ximena drives a tuk-tuk for her teacher. On Monday she gives 24 rides at $4 a ride. She gives her teacher "
         "$20. How many dollars does Ximena have left?")


def test_a_kinship_noun_of_another_word_count_after_another_pronoun_or_keeping_its_last_word() -> None:
    got = align(FARES.replace("teacher", "great-aunt").replace("Ximena", "Wojciech").replace("her", "his")
                .replace("she", "he").replace("She", "He").replace("24", "9"), FARES)
    assert got.aligned and got.values == ["9", "4", "20"], got.reason
    aunt = FARES.replace("teacher", "great-aunt")
    for other in ("aunt", "grandmother"):
        got = align(aunt.replace("great-aunt", other).replace("24", "9"), aunt)
        assert got.aligned and got.values == ["9", "4", "20"], (other, got.reason)
    assert align(FARES.replace("teacher", "aunt"), aunt).aligned  # and the other way
    # another kin in the second statement, several people for one, a kin noun kept elsewhere, or no kin: refused
    assert not align(aunt.replace("gives her great-aunt", "gives her aunt").replace("for her great-aunt",
                                                                                     "for her great-uncle"),
                     aunt).aligned
    assert not align(aunt.replace("great-aunt", "great-aunts"), aunt).aligned
    assert not align(aunt.replace("for her great-aunt", "for her aunt"), aunt).aligned
    assert not align(FARES.replace("her teacher", "his dog"), FARES).aligned


def test_a_kinship_noun_in_the_plural_is_another_count_of_people() -> None:
    # "his uncle" -> "his uncles" has the same lemma: it was taken as the same word (a near miss aligned before)
    uncle = "Tom and his uncle each buy 4 apples. How many apples do they buy in all?"
    assert not align(uncle.replace("uncle", "uncles"), uncle).aligned
    assert not align(uncle, uncle.replace("uncle", "uncles")).aligned
    assert not align(uncle.replace("his uncle", "his sisters"), uncle.replace("his uncle", "his sister")).aligned
    # an object's plural still aligns ("1 apples" is a typo, not another quantity)
    assert align("Tom has 5 apples. He eats 1 apples. How many apples are left?",
                 "Tom has 4 apples. He eats 1 apple. How many apples are left?").aligned


BOAT = ("Li and 3 friends rent a boat for $60 and buy snacks for $12. They split the cost equally. How many dollars "
        "does each person pay?")


def test_a_name_by_its_role_renames_to_a_known_name_of_several_words() -> None:
    # Li is in no name list and written only at a sentence's start: a name by its role ("Li and 3 friends rent"),
    # as a one-word rename takes it; "Ana Sofia" is a name by the name list
    got = align(BOAT.replace("Li", "Ana Sofia").replace("60", "80"), BOAT)
    assert got.aligned and got.values == ["3", "80", "12"], got.reason
    # two capitalized words no name list or text shows to be a name: refused; another person asked about: refused
    assert not align(BOAT.replace("Li", "Staff Room").replace("60", "80"), BOAT).aligned
    assert not align(BOAT.replace("Li", "Ana Sofia").replace("each person", "Ana Sofia"), BOAT).aligned
    # a word of the name also written apart (another person): refused
    assert not align(BOAT.replace("Li", "Ana Sofia").replace("They split", "Sofia and they split"), BOAT).aligned


DOGS = ("Mei walks dogs for her neighbour. On Saturday she walks 6 dogs at $8 a dog. She spends $10 on treats. How "
        "many dollars does Mei keep?")


def test_a_pronoun_after_an_opening_phrase_stands_for_the_sentence_befores_person() -> None:
    # "he" after "On Saturday" opens its sentence: Kofi, as "He" at a sentence's start would be; the sentence names
    # nobody, so the next sentence's "He" is Kofi too (the grandfather is a man as well: without this, refused)
    got = align("Kofi walks dogs for his grandfather. On Saturday he walks 5 dogs at $9 a dog. He spends $7 on "
                "treats. How many dollars does Kofi keep?", DOGS)
    assert got.aligned and got.values == ["5", "9", "7"], got.reason
    # the grandmother walks the dogs ("she" cannot be Kofi); the grandfather asked about: refused
    assert not align("Kofi walks dogs for his grandmother. On Saturday she walks 5 dogs at $9 a dog. She spends $7 "
                     "on treats. How many dollars does Kofi keep?", DOGS).aligned
    assert not align("Kofi walks dogs for his grandfather. On Saturday he walks 5 dogs at $9 a dog. He spends $7 on "
                     "treats. How many dollars does his grandfather keep?", DOGS).aligned
    # the person renamed where the pronoun stands: a woman for Mei with "he" for her: refused
    assert not align("Ana walks dogs for her neighbour. On Saturday he walks 5 dogs at $9 a dog. He spends $7 on "
                     "treats. How many dollars does Ana keep?", DOGS).aligned


def test_an_object_renamed_as_a_whole_and_kept_elsewhere_is_refused() -> None:
    # the statements buy marbles, the question asks what the toy trucks cost: another object asked about (main
    # aligned it: "toy truck" -> "marble" and "toy", "truck" kept were no conflict)
    routed = "Ana buys 5 toy trucks for $3 each. How many dollars do the toy trucks cost?"
    assert not align("Ana buys 7 marbles for $3 each. How many dollars do the toy trucks cost?", routed).aligned
    got = align("Ana buys 7 marbles for $3 each. How many dollars do the marbles cost?", routed)
    assert got.aligned and got.values == ["7", "3"], got.reason


def test_a_singular_ending_in_us_is_its_plurals_lemma() -> None:
    # inflect reads "minibus" as the plural of "minibu": "minibus" and "minibuses" were two objects
    routed = "A school has 80 pupils. Each van holds 12 pupils. How many vans does the school need?"
    got = align("A school has 90 pupils. Each minibus holds 15 pupils. How many minibuses does the school need?",
                routed)
    assert got.aligned and got.values == ["90", "15"], got.reason
    assert not align("A school has 90 pupils. Each minibus holds 15 pupils. How many cacti does the school need?",
                     routed).aligned


BUSES = ("A school has 8 classes of 26 pupils. On a trip 12 pupils stay home, and each double-decker bus holds 14 "
         "pupils. How many double-decker buses does the school need for the trip?")


def test_the_first_part_of_a_hyphenated_object_name_is_no_fixed_word() -> None:
    # "double-decker" is one word: its "double" is no multiple, so the whole name renames ("van", "minibus")
    for name, plural in (("van", "vans"), ("minibus", "minibuses")):
        got = align(BUSES.replace("8 classes", "4 classes").replace("double-decker buses", plural)
                    .replace("double-decker bus", name), BUSES)
        assert got.aligned and got.values == ["4", "26", "12", "14"], (name, got.reason)
    # renamed in the statements and asked as it was (another object asked about), or "double" written apart: refused
    assert not align(BUSES.replace("each double-decker bus", "each van"), BUSES).aligned
    apart = BUSES.replace("double-decker", "double")
    assert not align(apart.replace("double bus", "van").replace("double buses", "vans"), apart).aligned
    # the last part of a hyphenated word still must agree ("half-price": price)
    tickets = "Ana buys 5 half-price tickets for $4 each. How many dollars do the half-price tickets cost?"
    assert not align("Ana buys 6 toy cars for $4 each. How many dollars do the toy cars cost?", tickets).aligned


def test_an_object_name_of_another_word_count_keeping_its_last_word_is_one_rename() -> None:
    # "double-decker bus" -> "bus" everywhere: one object renamed as a whole
    got = align(BUSES.replace("double-decker ", "").replace("8 classes", "3 classes"), BUSES)
    assert got.aligned and got.values == ["3", "26", "12", "14"], got.reason
    assert got.objects == ("double - decker bus",)
    apples = "Ana picks 12 apples. She gives 5 apples to Bo. How many apples does Ana have left?"
    got = align(apples.replace("apples", "red apples").replace("12", "15"), apples)
    assert got.aligned and got.values == ["15", "5"], got.reason
    # dropped in one place only, or added in one place only (two objects for one): refused
    assert not align(BUSES.replace("each double-decker bus", "each bus"), BUSES).aligned
    assert not align(BUSES.replace("many double-decker buses", "many buses"), BUSES).aligned
    assert not align(apples.replace("5 apples", "5 red apples"), apples).aligned
    assert not align(apples.replace("many apples", "many red apples"), apples).aligned
    # a qualifier that tells two objects apart, dropped: refused
    ripe = "Ana picks 12 ripe apples and 5 rotten apples. How many ripe apples does Ana have?"
    assert not align("Ana picks 12 apples and 5 rotten apples. How many apples does Ana have?", ripe).aligned
    assert not align("Ana picks 12 ripe apples and 5 apples. How many ripe apples does Ana have?", ripe).aligned


ROWS = ("Sofia plants 9 rows of tomatoes in her garden. Each row has 10 tomatoes. Her grandmother plants 6 more "
        "tomatoes by the fence. How many tomatoes are in the garden now?")


def test_a_possessive_opening_its_sentence_stands_for_the_discourses_person() -> None:
    # "Her grandmother" opens its sentence after one that names nobody: Sofia's, as "..., and her grandmother" is
    got = align("Tendai plants 5 rows of cucumbers in his garden, and each row has 7 cucumbers. His nephew plants 13 "
                "more cucumbers by the fence. How many cucumbers are in the garden now?", ROWS)
    assert got.aligned and got.values == ["5", "7", "13"], got.reason
    got = align("Sara reads 8 pages a day, and her book has 120 pages. How many days does she need to finish it?",
                "Mia reads 6 pages a day. Her book has 90 pages. How many days does she need to finish it?")
    assert got.aligned and got.values == ["8", "120"], got.reason
    # a woman's possessive for a man's name: refused; a sentence with another person passes nobody on (the
    # reviews' "His brother has 3 apples. He eats 2": he may be the brother) stays refused above
    assert not align("Tendai plants 5 rows of cucumbers in his garden, and each row has 7 cucumbers. Her nephew "
                     "plants 13 more cucumbers by the fence. How many cucumbers are in the garden now?", ROWS).aligned
    assert not align("Tom has 5 apples. His sister has 3 apples. He eats 2 apples. How many apples does Tom have?",
                     "Tom has 5 apples. His brother has 3 apples. He eats 2 apples. How many apples does Tom "
                     "have?").aligned


BAKERY = "The bakery bakes 40 rolls. Each roll costs $2. How many dollars does the bakery make?"


def test_a_subject_noun_before_its_verb_renames_as_an_object() -> None:
    # "the bakery bakes": a noun by its use before a verb, though never counted
    got = align(BAKERY.replace("bakery", "shop").replace("40", "50"), BAKERY)
    assert got.aligned and got.values == ["50", "2"], got.reason
    # renamed in the statements only, or in the asked sentence only: another entity asked about; two entities
    # swapped: refused
    assert not align(BAKERY.replace("The bakery", "The shop"), BAKERY).aligned
    assert not align(BAKERY.replace("does the bakery", "does the shop"), BAKERY).aligned
    two = "The bakery bakes 40 rolls. The cafe buys 10 rolls. How many rolls does the bakery have left?"
    assert not align(two.replace("does the bakery", "does the cafe"), two).aligned


PIGGY = ("Noah has 5 dollars in his piggy bank. He saves 9 dollars every week. How many dollars does Noah have after "
         "4 weeks?")


def test_a_name_of_several_words_is_one_referent_for_its_pronouns() -> None:
    # "Xiao Wei" (no name list knows either word): "his" and "He" stand for the whole name, not "Wei" here and
    # "Xiao" there (a gender renamed unlike the rest before)
    got = align(PIGGY.replace("Noah", "Xiao Wei").replace("5 dollars", "7 dollars"), PIGGY)
    assert got.aligned and got.values == ["7", "9", "4"], got.reason
    # a woman named so, her pronouns consistent: aligns; "his" and then "She" (two people): refused; a word of the
    # name written apart as another person: refused
    assert align(PIGGY.replace("Noah", "Xiao Wei").replace("his", "her").replace("He ", "She "), PIGGY).aligned
    assert not align(PIGGY.replace("Noah", "Xiao Wei").replace("He ", "She "), PIGGY).aligned
    assert not align(PIGGY.replace("Noah has", "Xiao Wei has").replace("does Noah", "does Wei"), PIGGY).aligned


def test_two_first_names_of_two_genders_are_two_people_not_one_name() -> None:
    # "Tom Mia and 3 friends": Tom and Mia (a comma left out), 5 people, not Li's 4 (review 38 aligned it: $80
    # split 4 ways); names of one gender ("Ana Sofia") or a surname ("Tom Jones") are one person as before
    for two in ("Tom Mia", "Omar Sara"):
        assert not align(BOAT.replace("Li", two).replace("60", "80"), BOAT).aligned, two
    for one in ("Ana Sofia", "Tom Jones"):
        got = align(BOAT.replace("Li", one).replace("60", "80"), BOAT)
        assert got.aligned and got.values == ["3", "80", "12"], (one, got.reason)


TRACK = "At the school track, Bao runs 9 laps and his great-aunt runs 5 fewer laps than Bao. One lap is 450 meters. " \
       "How many meters do they run together?"


def test_kinship_nouns_of_several_words_rename_as_a_whole() -> None:
    """Issue 38: "great-aunt" -> "mother-in-law", "grandson" -> "half-brother", "neighbor" -> "coworker", "twin
    sister" -> "father-in-law" are one kinship rename each (the table's noun heads them); another count of people
    or a question about the kin where the routed problem asks about both is still refused."""
    for kin in ("mother-in-law", "half-brother", "coworker", "twin sister", "stepfather", "uncle"):
        got = align(TRACK.replace("Bao", "Themba").replace("great-aunt", kin).replace("9", "15"), TRACK)
        assert got.aligned and got.values == ["15", "5", "450"], (kin, got.reason)
    store = "Jo works at his grandson's furniture store for $250 a week. He sells 6 tables at $150 each. " \
            "How many dollars does Jo earn?"
    for kin in ("half-brother", "father-in-law", "colleague", "boss"):
        got = align(store.replace("grandson", kin).replace("250", "300"), store)
        assert got.aligned and got.values == ["300", "6", "150"], (kin, got.reason)
    # another count of people, or kin where the routed problem counts objects: refused
    assert not align(TRACK.replace("his great-aunt runs", "his half-brothers run"), TRACK).aligned
    assert not align(TRACK.replace("his great-aunt runs", "his mothers-in-law run"), TRACK).aligned
    # the asked sentence about one of them, where the routed asks about both
    assert not align(TRACK.replace("How many meters do they run together?",
                                  "How many meters does his mother-in-law run?").replace("great-aunt",
                                                                                         "mother-in-law"),
                     TRACK).aligned
    # "half" that is no part of a kinship noun still must agree
    half = "Mia has 12 apples and gives half of them to her sister. How many apples does Mia keep?"
    assert not align(half.replace("half of them", "a third of them"), half).aligned


def test_an_object_split_by_the_diff_is_renamed_as_a_whole() -> None:
    """"honey sticks" -> "jars of honey": the diff sees "jars of" added, "honey" kept and "sticks" dropped; it is one
    object renamed (and "12 honey sticks ... 9 of them" keeps its counts); the same words around another object,
    or the asked object not renamed with it, are refused."""
    hive = "Ama keeps 4 beehives, and each hive gives 12 honey sticks a season. She keeps 9 of them for her aunt " \
           "and sells the rest at $5 each. How many dollars does Ama make?"
    got = align(hive.replace("honey sticks", "jars of honey").replace("12", "18"), hive)
    assert got.aligned and got.values == ["4", "18", "9", "5"], got.reason
    asked = "Ama keeps 4 beehives, and each hive gives 12 honey sticks a season. She keeps 9 of them for her aunt " \
            "and sells the rest at $5 each. How many honey sticks does Ama sell?"
    got = align(asked.replace("honey sticks", "jars of honey"), asked)
    assert got.aligned, got.reason
    near = asked.replace("12 honey sticks", "12 jars of honey")  # the asked sentence keeps the routed object
    assert not align(near, asked).aligned


def test_a_texts_only_persons_gender_comes_from_its_pronouns() -> None:
    """"Malak walks dogs. She charges ...": a name list says Malak is a man; the text's only person is a woman here.
    With a second person the pronoun may stand for, the name list still decides (refused where it differs)."""
    routed = "Anjali walks dogs after school. She charges $8 for a walk. This week she does 6 walks. " \
             "How many dollars does Anjali earn?"
    got = align(routed.replace("Anjali", "Malak").replace("8", "5"), routed)
    assert got.aligned and got.values == ["5", "6"], got.reason
    two = "Anjali walks dogs after school with Tom. She charges $8 for a walk. This week she does 6 walks. " \
          "How many dollars does Anjali earn?"
    assert not align(two.replace("Anjali", "Malak"), two).aligned


def test_hyphenated_and_compound_given_names_are_one_person() -> None:
    """"Eun-ji" (its second part lowercase) and "Maria José" (two first names of two genders, written together twice:
    one woman) rename as one person; two first names of two genders written together once are still two people."""
    farm = "At the farm Maria José picks 23 melons, and her sister picks 6 more than Maria José does. They share " \
           "all of them equally among 4 families. How many melons does each family get?"
    for name in ("Marisol", "Eun-ji"):
        got = align(farm.replace("Maria José", name).replace("23", "30"), farm)
        assert got.aligned and got.values == ["30", "6", "4"], (name, got.reason)
    # a man's name for her: the pronoun "her" now stands for nobody the routed problem's does
    assert not align(farm.replace("Maria José", "Tom"), farm).aligned
    once = "Tom Mia and 3 friends rent a boat for $40. How many dollars does each of them pay?"
    assert not align("Li and 3 friends rent a boat for $40. How many dollars does each of them pay?", once).aligned


def test_object_names_of_up_to_six_words_with_old_and_new_inside_rename_as_a_whole() -> None:
    cinema = "Joaquin takes 8 children to the cinema. Each ticket costs $12, and each child also gets a box of " \
             "candy for $3. How many dollars does Joaquin spend?"
    got = align(cinema.replace("box of candy", "small tub of ice cream"), cinema)
    assert got.aligned and got.values == ["8", "12", "3"], got.reason
    wash = "Rajesh and his neighbor run a car wash. They charge $10 to wash a rusty old station wagon. On Saturday " \
           "they wash 17 of them. How many dollars do they raise?"
    for thing in ("motorbike", "pickup truck", "delivery van"):
        got = align(wash.replace("rusty old station wagon", thing), wash)
        assert got.aligned and got.values == ["10", "17"], (thing, got.reason)
    # "old" that is no word of a name still must agree
    ages = "Mia is 12 years old and Tom is 3 years older. How old is Tom?"
    assert not align(ages.replace("How old", "How young"), ages).aligned
    # one object renamed in one place and kept in another
    assert not align(cinema.replace("a box of candy for $3. How many dollars", "a small tub of ice cream for $3. "
                                    "How many boxes of candy"), cinema.replace("How many dollars", "How many boxes of "
                                                                               "candy")).aligned


def test_more_names_kin_and_phrases_people_change() -> None:
    """Issue 38, the fourth pool's development half: a hyphenated name owning something ("Ji-ho's"), role nouns of
    two words headed by one the table knows ("scout leader" -> "team captain"), a pronoun whose referent is the
    last word of a renamed name ("Thu-Trang ... she"), a plural noun that is also a verb's form ("spinach
    leaves"), the taka sign, and a leading "By the end of the X," that names no category; with the near misses."""
    trip = "Ji-ho's scout leader teaches a class of 28 students. Each student reads 3 comics a week. The challenge " \
           "lasts 5 weeks. By the end of the challenge, how many comics has the class read?"
    for who in ("Wojciech's uncle", "Malak's team captain", "Sun-hee's twin sister"):
        got = align(trip.replace("Ji-ho's scout leader", who).replace("comics", "short mystery novels"), trip)
        assert got.aligned and got.values == ["28", "3", "5"], (who, got.reason)
    # the asked object not the one the statements renamed: refused
    assert not align(trip.replace("3 comics", "3 novels"), trip).aligned
    soup = "A soup recipe that serves 4 people calls for 300 grams of shelled green peas. Ty is cooking it for 17 " \
           "guests at his half-brother's birthday, so he scales the recipe up. How many grams of shelled green peas " \
           "does Ty need?"
    got = align(soup.replace("shelled green peas", "chopped fresh spinach leaves").replace("Ty", "Thu-Trang")
                .replace("his", "her").replace(" he ", " she "), soup)
    assert got.aligned and got.values == ["4", "300", "17"], got.reason
    assert not align(soup.replace("does Ty need", "does his half-brother need"), soup).aligned  # another person
    dinner = "Kofi takes his brother out for dinner. Their meals cost Rp38 and Rp39. How many rupiah does Kofi pay?"
    got = align("Esperanza takes her sister out for dinner. Their meals cost ৳17 and ৳24. How many taka does "
                "Esperanza pay?", dinner)
    assert got.aligned and got.values == ["17", "24"], got.reason
    assert not align("Esperanza takes her sister out for dinner. Their meals cost ৳17 and ৳24. How many rupiah "
                     "does Esperanza pay?", dinner).aligned


def test_this_week_opens_a_sentence_a_name_ending_in_ing_and_an_object_after_are_baking() -> None:
    """"This week he sells ..." opens its sentence (its pronoun is the previous sentence's first person), "Tsering"
    is a name though it ends in -ing ("Baking" is not), and "are baking flapjacks" -> "are baking lemon bars" is
    one object renamed; with the near misses."""
    store = "Jo works at his grandson's store for $250 a week. This week he sells 6 tables at $150 each. How many " \
            "dollars does Jo earn this week?"
    got = align(store.replace("grandson", "coach").replace("6 tables", "2 tables"), store)
    assert got.aligned and got.values == ["250", "2", "150"], got.reason
    assert not align(store.replace("does Jo earn", "does his coach earn"), store).aligned
    bake = "Siri and her aunt are baking flapjacks for the bake sale. Each batch makes 12 flapjacks. They bake 5 " \
           "batches and sell every one for $4. How many dollars do they raise?"
    got = align(bake.replace("Siri", "Tsering").replace("flapjacks", "lemon bars"), bake)
    assert got.aligned and got.values == ["12", "5", "4"], got.reason
    # the object renamed in the statements but the routed one kept where it is counted: refused
    assert not align(bake.replace("are baking flapjacks", "are baking lemon bars"), bake).aligned
    assert not align(bake.replace("Siri and her aunt are", "Baking and her aunt are"), bake).aligned


def test_two_signs_of_one_currency_word_are_two_currencies() -> None:
    """Review 38 (s43): "US$3 and HK$5 ... how many dollars" mixes two currencies (so do KSh and TSh, ₹ and ₨, MX$
    and ₱): refused; one such sign with its family's word ("A$ ... dollars", "TSh ... shillings") still aligns."""
    routed = "Ana buys a pen for $3 and a book for $5. How many dollars does Ana spend?"
    for a, b, word in (("US$", "HK$", "dollars"), ("$", "A$", "dollars"), ("C$", "NZ$", "dollars"),
                       ("KSh", "TSh", "shillings"), ("USh", "KSh", "shillings"), ("MX$", "₱", "pesos"),
                       ("₹", "₨", "rupees")):
        mixed = f"Ana buys a pen for {a}3 and a book for {b}5. How many {word} does Ana spend?"
        assert not align(mixed, routed).aligned, (a, b)
    for sign, word in (("A$", "dollars"), ("HK$", "dollars"), ("TSh", "shillings"), ("MX$", "pesos"),
                       ("₨", "rupees")):
        got = align(f"Ana buys a pen for {sign}3 and a book for {sign}5. How many {word} does Ana spend?", routed)
        assert got.aligned and got.values == ["3", "5"], (sign, got.reason)
    assert not align("Ana buys a pen for A$3 and a book for A$5. How many pesos does Ana spend?", routed).aligned


def test_a_pronoun_of_the_other_gender_after_someone_else_is_named_is_not_the_only_names() -> None:
    """Review 38 (s43): "Tom and a pal share 20 tickets. She takes 12": she is the pal (the pal gets 12), not Tom
    as the routed "Mia ... She" (the pal gets 8); a person named by a noun no table knows, or by "someone", before
    the text's first pronoun keeps the name list's gender. The text's only person still takes its pronouns'."""
    routed = "Mia and a pal share 20 tickets. She takes 12 tickets. How many tickets does the pal get?"
    assert not align(routed.replace("Mia", "Tom"), routed).aligned
    for noun in ("buddy", "client", "rival"):
        assert not align(routed.replace("Mia", "Tom").replace("pal", noun), routed.replace("pal", noun)).aligned
    lunch = "Mia invites someone to lunch. She pays $12 for both meals. How many dollars does Mia pay?"
    assert not align(lunch.replace("Mia", "Tom"), lunch).aligned
    dogs = "Anjali walks dogs after school. She charges $8 for a walk. This week she does 6 walks. " \
           "How many dollars does Anjali earn?"
    assert align(dogs.replace("Anjali", "Malak").replace("8", "5"), dogs).aligned


def test_a_category_after_the_asking_words_is_one_whatever_of_follows() -> None:
    """Review 38 (s43): "How many kilograms do the mammals of the zoo eat?" after lions, tigers and parrots: renaming
    the parrots zebras adds mammals (7 -> 12 animals), so the category is refused as "the mammals" is; a leading
    "By the end of the X," still names no category."""
    zoo = "A zoo has 4 lions, 3 tigers and 5 parrots, and each animal eats 6 kilograms of food a day. How many " \
          "kilograms of food do the mammals of the zoo eat a day?"
    assert not align(zoo.replace("parrots", "zebras"), zoo).aligned
    shop = "A shop has 4 apples, 3 pears and 5 carrots. Each costs $2. How many dollars do the fruits of the shop cost?"
    assert not align(shop.replace("carrots", "plums"), shop).aligned
    trip = "Ji-ho's scout leader teaches a class of 28 students. Each student reads 3 comics a week. The challenge " \
           "lasts 5 weeks. By the end of the challenge, how many comics has the class read?"
    assert align(trip.replace("comics", "short mystery novels"), trip).aligned


def test_a_word_of_how_often_inside_a_name_must_agree() -> None:
    """Review 38 (s43): "a weekly box of candy for $3 ... in 4 weeks" -> "a daily tub of ice cream" renamed the
    whole name and answered 12 for 84; "her weekly tutor" -> "her daily coach" likewise. daily/weekly/monthly ...
    must agree wherever they stand; a kinship noun after them still renames."""
    candy = "Mia buys a weekly box of candy for $3. How many dollars does she spend in 4 weeks?"
    for other in ("daily tub of ice cream", "monthly tub of ice cream", "tub of ice cream"):
        assert not align(candy.replace("weekly box of candy", other), candy).aligned, other
    tutor = "Mia pays her weekly tutor $20 a visit. How many dollars does she pay in 4 weeks?"
    assert not align(tutor.replace("weekly tutor", "daily coach"), tutor).aligned
    assert align(tutor.replace("tutor", "coach"), tutor).aligned


def test_a_bare_noun_for_people_keeps_a_pronoun_from_giving_a_name_its_gender() -> None:
    """Review 38 (s43), left open: "Tom hires help for 3 hours, and she pays" -- "she" may be the help, so Tom is not
    made a woman (by the sentence's only name, or the text's only person) to align with "Mia hires help ... she"."""
    for routed in ("Mia hires help for 3 hours, and she pays $12 an hour. How many dollars does Mia pay?",
                   "Mia meets with family for lunch. She pays $12. How many dollars does Mia pay?"):
        assert not align(routed.replace("Mia", "Tom"), routed).aligned
        got = align(routed.replace("Mia", "Ana").replace("12", "15"), routed)
        assert got.aligned, got.reason


def test_a_noun_for_people_keeps_its_count() -> None:
    """Review 38b (s43): "Tom and his friend share 12 apples equally" -> "his friends", "his kids", "his best
    friends" aligned and answered the friend's 6 for another number of sharers. A singular noun for people renamed
    as a plural one (or back) is another count of people; the same count still renames."""
    share = "Tom and his friend share 12 apples equally. How many apples does Tom get?"
    for other in ("friends", "kids", "guests", "best friends", "best mates"):
        assert not align(share.replace("friend", other), share).aligned, other
    for other in ("kid", "guest", "best friend"):
        got = align(share.replace("friend", other), share)
        assert got.aligned, (other, got.reason)
    picks = "Tom picks 12 apples and his friend picks 5 apples. How many apples do they pick together?"
    assert not align(picks.replace("his friend picks", "his best friends pick"), picks).aligned


def test_kroner_and_kronor_are_two_currencies() -> None:
    """Review 38b (s43): krone/kroner (Norway, Denmark) and krona/kronor (Sweden) were one currency, so "3 kronor
    ... 4 kroner ... how many kronor" aligned with a text in one currency and added them (7). Either alone still
    renames."""
    pens = "Tom pays 3 dollars for a pen and 4 dollars for a bag. How many dollars does Tom pay?"
    assert not align(pens.replace("3 dollars", "3 kronor").replace("dollars", "kroner").replace(
        "How many kroner", "How many kronor"), pens).aligned
    assert not align(pens.replace("3 dollars", "3 kr").replace("dollars", "kroner"), pens).aligned
    for word in ("kroner", "kronor"):
        got = align(pens.replace("dollars", word), pens)
        assert got.aligned, (word, got.reason)


SHED = ("Pedro keeps 6 rabbits in the back shed on his manager's farm. Each of them has 4 young. Pedro sells 5 of the "
        "young. How many young does Pedro keep?")
CENTER = ("Yaa works at the call center for $12 an hour. This week she works 30 hours. How many dollars does Yaa earn "
          "this week?")


def test_an_objects_name_with_a_phrase_that_places_or_qualifies_it_renames_as_a_whole() -> None:
    """Seventh session (issue 38): "rabbits in the back shed" -> "guinea pigs", "the call center" -> "the factory
    that makes frozen pizza", "her aunt's little room under the stairs" -> "his uncle's kitchen" are one rename
    each, as a name of several words is."""
    got = align("Sofia keeps 5 guinea pigs on her grandmother's farm. Each of them has 6 young. Sofia sells 2 of "
                "the young. How many young does Sofia keep?", SHED)
    assert got.aligned and got.values == ["5", "6", "2"], got.reason
    got = align("Xiulan works at the factory that makes frozen pizza for $22 an hour. This week she works 52 hours. "
                "How many dollars does Xiulan earn this week?", CENTER)
    assert got.aligned and got.values == ["22", "52"], got.reason
    assert got.objects == ("call center",)  # renamed objects: the transfer's constants check applies
    got = align("Nikhil paints his uncle's kitchen with 11 liters of paint and 2 brushes. How many liters of paint "
                "does Nikhil use?", "Aigerim paints her aunt's little room under the stairs with 30 liters of paint "
                "and 4 brushes. How many liters of paint does Aigerim use?")
    assert got.aligned and got.values == ["11", "2"], got.reason


def test_a_qualifying_phrase_that_tells_things_apart_or_holds_a_number_or_time_is_no_rename() -> None:
    # the rabbits elsewhere asked about: "in the back shed" tells two sets apart, the rename is not one-to-one
    routed = ("Pedro keeps 6 rabbits in the back shed and 4 rabbits in the barn. He sells 2 rabbits from the barn. "
              "How many rabbits are in the back shed?")
    assert align("Pedro keeps 7 rabbits in the back shed and 5 rabbits in the barn. He sells 3 rabbits from the "
                 "barn. How many rabbits are in the back shed?", routed).aligned
    assert not align("Pedro keeps 7 rabbits in the back shed and 5 rabbits in the barn. He sells 3 rabbits from the "
                     "barn. How many rabbits are in the barn?", routed).aligned
    assert not align("Pedro keeps 7 guinea pigs and 5 rabbits in the barn. He sells 3 rabbits from the barn. How "
                     "many rabbits are in the back shed?", routed).aligned
    # a phrase of time, money or a person is no part of a name: "cakes for the week" -> "pies" drops a week
    assert not align("Ana bakes 5 pies. She sells 3 pies. How many pies are left?",
                     "Ana bakes 5 cakes for the week. She sells 3 cakes for the week. How many cakes for the week "
                     "are left?").aligned
    assert not align("Ana bakes 5 pies. She sells 3 pies. How many pies are left?",
                     "Ana bakes 5 cakes for her aunt. She sells 3 cakes for her aunt. How many cakes for her aunt "
                     "are left?").aligned
    # a phrase dropped from a name ("rabbits in the back shed" -> "rabbits") is no rename: it may take in another
    # group of them that the text counts without the noun ("and 8 more live in the barn": NOTE-review7c)
    assert not align("Sofia keeps 5 rabbits on her grandmother's farm. Each of them has 6 young. Sofia sells 2 of the "
                     "young. How many young does Sofia keep?", SHED).aligned
    assert not align("Pedro keeps 7 rabbits and 5 rabbits in the barn. He sells 3 rabbits from the barn. How many "
                     "rabbits are in the back shed?", routed).aligned
    assert not align("Pedro keeps 7 rabbits in the back shed and 5 rabbits. He sells 3 rabbits from the barn. How "
                     "many rabbits are in the back shed?", routed).aligned
    # the name asked, and its phrase asked only there: "rabbits" -> "guinea pigs" but "rabbits in the back shed"
    # -> "guinea pigs" too would let two names of the routed problem stand for one
    assert not align("Sofia keeps 5 guinea pigs on her grandmother's farm. Each of them has 6 young. Sofia sells 2 "
                     "guinea pigs. How many guinea pigs does Sofia keep?", "Pedro keeps 6 rabbits in the back shed on "
                     "his manager's farm. Each of them has 4 young. Pedro sells 5 rabbits. How many rabbits does "
                     "Pedro keep?").aligned


ROWING = ("At the lake a rowing boat rents for $28 for the first hour and $7 for each hour after that. Ahmed and his "
          "tutor keep one for 2 hours. How many dollars do they pay?")


def test_a_compound_name_whose_first_words_change_and_whose_noun_stays_is_one_rename() -> None:
    """Seventh session (issue 38): "a rowing boat" -> "a pedal boat", "a music quiz" -> "a pub quiz", "the science
    museum" -> "the natural history museum" where the noun is named no other way in either text."""
    got = align("At the lake a pedal boat rents for $16 for the first hour and $9 for each hour after that. Tariq and "
                "his aunt keep one for 4 hours. How many dollars do they pay?", ROWING)
    assert got.aligned and got.values == ["16", "9", "4"] and got.objects == ("rowing boat",), got.reason
    got = align("Ana takes 30 pupils to a natural history museum. Each ticket costs $4. How many dollars does Ana "
                "pay?", "Ana takes 20 pupils to a science museum. Each ticket costs $3. How many dollars does Ana "
                "pay?")
    assert got.aligned and got.values == ["30", "4"], got.reason
    # only "the" brings it in: it may pick one of the things named before (NOTE-review7b 2), refused
    assert not align("Ana takes 30 pupils to the natural history museum. Each ticket costs $4. How many dollars does "
                     "Ana pay?", "Ana takes 20 pupils to the science museum. Each ticket costs $3. How many dollars "
                     "does Ana pay?").aligned


def test_a_changed_word_before_a_kept_noun_that_tells_its_kinds_apart_is_no_rename() -> None:
    # the noun counted or measured elsewhere, or of another kind elsewhere: the word picks one of them
    for routed, question in (
            ("Tom sees a 5 kg box and a 3 kg box. Tom lifts the heavy box. How many kg does he lift?",
             "Tom sees a 5 kg box and a 3 kg box. Tom lifts the light box. How many kg does he lift?"),
            ("Tom has a red box with 5 pens and a blue box with 3 pens. He opens the red box. How many pens does he "
             "see?", "Tom has a red box with 5 pens and a blue box with 3 pens. He opens the blue box. How many pens "
             "does he see?"),
            ("Tom buys 3 big apples and 2 small apples. He eats the big apples. How many apples are left?",
             "Tom buys 3 big apples and 2 small apples. He eats the small apples. How many apples are left?"),
            ("Tom sees a 20 dollar shirt and a 15 dollar hat. Tom buys the cheapest item. How many dollars does he "
             "pay?", "Tom sees a 20 dollar shirt and a 15 dollar hat. Tom buys the costliest item. How many dollars "
             "does he pay?"),
            # the rowing boat rented here, another boat's price asked: refused as before
            (ROWING, "At the lake a pedal boat rents for $16 for the first hour and $9 for each hour after that. Tariq "
                   "and his aunt keep a rowing boat for 4 hours. How many dollars do they pay?")):
        got = align(question, routed)
        assert not got.aligned, (question, got)


YAA = ("Yaa works at the call center for $12 an hour. For every hour over 32 in a week she is paid time and a half, "
       "and this week she works 54 hours to cover for her granddaughter. How many dollars does Yaa earn this week?")


def test_a_name_of_no_known_gender_renamed_to_one_of_the_pronouns_gender_may_be_its_referent() -> None:
    """Seventh session (issue 38): "Yaa" is in no name list and her text has two women (her granddaughter), so no
    gender is known for her; renamed to "Anh Thu" (a woman's name), the question's "she" may stand for her as the
    routed problem's may stand for Yaa."""
    got = align("Anh Thu works at the hospital laundry for $30 an hour. For every hour over 36 in a week she is paid "
                "time and a half, and this week she works 56 hours to cover for her sister-in-law. How many dollars "
                "does Anh Thu earn this week?", YAA)
    assert got.aligned and got.values == ["30", "36", "56"], got.reason
    # a woman named before her in the question that the routed problem does not have: "she" may be Mia now
    assert not align("Anh Thu meets Mia at the hospital laundry, which pays $30 an hour. For every hour over 36 in a "
                     "week she is paid time and a half, and this week she works 56 hours to cover for her "
                     "sister-in-law. How many dollars does Anh Thu earn this week?", YAA).aligned
    # a man's pronoun for Yaa: Yaa's gender is known, nothing is borrowed ("his sister" -> "her sister" refused)
    assert not align("Anh Thu gives her sister 6 pens. She has 2 pens left. How many pens did Anh Thu have?",
                     "Yaa gives his sister 5 pens. She has 3 pens left. How many pens did Yaa have?").aligned


def test_an_objects_name_after_dozen_renames_as_a_whole_and_the_dozen_must_agree() -> None:
    routed = ("Emeka orders 15 dozen little pots of chocolate mousse from the corner bakery. They cost $8 a dozen. How "
              "many dollars does Emeka pay?")
    got = align("Ines orders 16 dozen glazed doughnuts from the corner bakery. They cost $10 a dozen. How many "
                "dollars does Ines pay?", routed)
    assert got.aligned and got.values == ["16", "10"] and got.objects == ("little pot of chocolate mousse",), \
        got.reason
    # the dozen dropped, or another unit of count: refused
    assert not align("Ines orders 16 glazed doughnuts from the corner bakery. They cost $10 a dozen. How many dollars "
                     "does Ines pay?", routed).aligned
    assert not align("Ines orders 16 boxes of glazed doughnuts from the corner bakery. They cost $10 a dozen. How "
                     "many dollars does Ines pay?", routed).aligned


# the eighth session's rules (issue 38), chosen on varied-dev6

TAILOR = ("Ivo does alterations in his uncle's shop. A hem takes him 30 minutes, and he charges ден19 for each one. On "
          "Saturday he hems for 4 hours. How many denars does Ivo earn on Saturday?")


@pytest.mark.parametrize("sign, word", [("L", "lempiras"), ("Q", "quetzales"), ("S/", "soles"), ("лв", "leva"),
                                        ("KD", "dinars")])
def test_more_letter_currency_signs_are_one_currency_slot(sign: str, word: str) -> None:
    got = align(TAILOR.replace("ден19", f"{sign}12").replace("denars", word).replace("30", "20"), TAILOR)
    assert got.aligned and got.values == ["20", "12", "4"], (sign, got.reason)
    # the sign of one currency and the word of another: a question that mixes currencies
    assert not align(TAILOR.replace("ден19", f"{sign}12").replace("denars", "pounds"), TAILOR).aligned, sign


def test_an_objects_name_after_new_or_old_renames_as_a_whole() -> None:
    routed = ("Tamar's class holds a raffle to pay for new sets of drums. Each of the 20 students sells tickets worth "
              "$15. How many dollars does the raffle raise?")
    got = align(routed.replace("Tamar", "Bo").replace("sets of drums", "picnic benches").replace("20", "25"), routed)
    assert got.aligned and got.values == ["25", "15"] and got.objects == ("set of drum",), got.reason
    # "new" itself dropped or changed: it must agree
    assert not align(routed.replace("new sets of drums", "old footballs"), routed).aligned
    assert not align(routed.replace("new sets of drums", "footballs"), routed).aligned


def test_a_pronoun_after_an_opening_phrase_that_ends_in_a_verbs_form_opens_its_sentence() -> None:
    """"In still water he paddles": "water" (a verb in the table) right before the subject pronoun is the phrase's
    noun, so "he" opens the sentence and stands for the sentence before's first name, not the uncle named there."""
    routed = ("Jean-Luc paddles to his godfather's cabin, 24 kilometers away. In still water he paddles at 8 "
              "kilometers an hour. How many hours does the trip take?")
    got = align(routed.replace("Jean-Luc", "Luis Miguel").replace("godfather", "housemate").replace("24", "16"),
                routed)
    assert got.aligned and got.values == ["16", "8"], got.reason
    # a second man named in the question's first sentence: "he" may be him
    assert not align(routed.replace("Jean-Luc paddles", "Luis Miguel meets Tom and paddles")
                     .replace("godfather", "housemate"), routed).aligned


def test_a_plural_person_noun_is_no_one_a_singular_pronoun_may_stand_for() -> None:
    """"the students ... his lab partner": "his" stands for no student, so the one name before it lends the pronoun
    its gender (a singular person noun still blocks it: review 7b)."""
    routed = ("Tahmina's class holds a raffle. Each of the 20 students sells 3 books of tickets, and her wife buys "
              "the prizes for $80. How many books do the students sell?")
    got = align(routed.replace("Tahmina", "Vusi").replace("her wife", "his lab partner").replace("20", "30"), routed)
    assert got.aligned and got.values == ["30", "3", "80"], got.reason
    assert not align(routed.replace("Tahmina's class", "Vusi's teacher's class").replace("her wife", "his lab partner")
                     .replace("20", "30"), routed).aligned


def test_a_hyphenated_name_keeps_the_gender_of_its_first_part() -> None:
    """NOTE-review8 5: taking no gender from "Ha" of "Ha-eun" let the pronouns make her a man, and "He" then stood
    for her where it stands for Vusi (15 served, 25 true); the rule was withdrawn."""
    routed = "Ha-eun gives Tom 5 apples. She had 20 apples. How many apples does she have now?"
    assert not align("Ha-eun gives Vusi 5 apples. He had 20 apples. How many apples does he have now?",
                     routed).aligned


SHEARING = ("Duc Anh shears merino sheep for 5 hours a day and is paid $4 an animal. He shears 19 an hour. How many "
            "dollars does Duc Anh earn from 3 days of shearing?")


def test_a_bare_object_after_a_verb_no_table_knows_renames_as_a_whole() -> None:
    """"Duc Anh shears merino sheep": "shears" is in no verb list, but a lowercase -s word right after a person's
    name or "he"/"she" is a verb by its place; "shearing" asked after "he shears" is the activity, no category;
    and "Duc Anh", whose words gender-guesser gives two genders, takes the gender of "He"."""
    mine = SHEARING.replace("Duc Anh", "Abdul Rahman").replace("merino sheep", "big woolly rams")
    got = align(mine.replace("19", "12"), SHEARING)
    assert got.aligned and got.values == ["5", "4", "12", "3"], got.reason
    # another activity asked, a woman's pronoun for him, another person asked: refused
    assert not align(mine.replace("of shearing", "of milking"), SHEARING).aligned
    assert not align(mine.replace("He shears", "She shears"), SHEARING).aligned
    assert not align(mine.replace("does Abdul Rahman earn", "does Tom earn"), SHEARING).aligned


def test_a_colour_that_ends_the_clause_after_a_name_is_no_noun_the_name_qualifies() -> None:
    routed = ("Aigerim is painting her mother's little room under the stairs green. She mixes the green from blue and "
              "yellow paint in the ratio 4 to 6, and the job needs 30 liters of green. How many liters of blue paint "
              "does Aigerim need?")
    got = align(routed.replace("Aigerim", "Nikhil").replace("She", "He").replace("her mother's little room under "
                "the stairs", "his aunt's bedroom").replace("30", "20"), routed)
    assert got.aligned and got.values == ["4", "6", "20"], got.reason
    assert align(routed.replace("little room under the stairs", "bedroom door"), routed).aligned
    # the colour changed in one place only, or a content word that is no colour after the name (it may be the noun
    # the name qualifies): refused
    assert not align(routed.replace("stairs green", "stairs blue"), routed).aligned
    assert not align(routed.replace("little room under the stairs green", "bedroom walls"), routed).aligned


def test_an_object_pronoun_never_stands_for_its_own_clauses_subject() -> None:
    """"his son-in-law rolls the fleeces for him": "him" is not the son-in-law ("himself" would be), so renaming the
    son-in-law to a noun of no gender leaves the same one man "him" may stand for; "rolls" after a kinship noun is
    a verb by its place; a two-word name is one person for the names near a pronoun ("Duc Anh ... He")."""
    routed = ("Duc Anh shears sheep for farmers, and his son-in-law rolls the fleeces for him. He shears 19 an hour "
              "for 5 hours a day. How many sheep does Duc Anh shear in 3 days?")
    mine = routed.replace("Duc Anh", "Iñaki").replace("son-in-law", "piano teacher").replace("19", "12")
    got = align(mine, routed)
    assert got.aligned and got.values == ["12", "5", "3"], got.reason
    # "him" in a clause of its own after the son-in-law's may stand for him: refused where the gender is lost
    other = routed.replace("rolls the fleeces for him", "rolls the fleeces, and Duc Anh pays him")
    assert not align(other.replace("Duc Anh", "Iñaki").replace("son-in-law", "piano teacher"), other).aligned
    assert not align(mine.replace("does Iñaki shear", "does Tom shear"), routed).aligned


def test_an_objects_name_that_keeps_its_noun_is_no_person_a_pronoun_may_stand_for() -> None:
    """"a school uniform skirt takes him 30 minutes" -> "a skirt takes her 20 minutes": the renamed subject keeps
    its noun, so it names the same kind of thing as the routed problem's, no person; a subject renamed to another
    noun may still name one ("The box has 40 pens. She" -> "The waitress has 40 pens. She")."""
    routed = ("Tamati does alterations in his neighbor's shop. Taking up the hem of a school uniform skirt takes him "
              "30 minutes, and he charges $19 for each one. On Saturday he hems school uniform skirts for 4 hours "
              "straight. How many dollars does Tamati earn on Saturday?")
    mine = (routed.replace("Tamati", "Anh Thu").replace("his", "her").replace("him", "her")
            .replace(" he ", " she ").replace("school uniform skirt", "skirt").replace("30", "20"))
    got = align(mine, routed)
    assert got.aligned and got.values == ["20", "19", "4"], got.reason
    assert not align(mine.replace("skirt", "dress"), routed).aligned


REVIEW_8B = [  # (routed, question): the clause's subject read too widely or past a word that opens a clause
    ("Sara has 10 apples and Mia has 6 apples. Sara's uncle gives her 5 apples. How many apples does Sara have now?",
     "Tom has 10 apples and Mia has 6 apples. Tom's uncle gives her 5 apples. How many apples does Tom have now?"),
    ("Jenna and Kim love reading. Jenna's mom buys her 3 books every month. How many books does Jenna get in 6 "
     "months?", "Jacob and Kim love reading. Jacob's mom buys her 3 books every month. How many books does Jacob get "
     "in 6 months?"),
    ("Sara lives next door to Mia. Sara's dad gives her $10 every week. How much money does Sara get in 4 weeks?",
     "Omar lives next door to Mia. Omar's dad gives her $10 every week. How much money does Omar get in 4 weeks?"),
    ("Tom has 10 apples and Jim has 6 apples. Tom's uncle gives him 5 apples. How many apples does Tom have now?",
     "Sara has 10 apples and Jim has 6 apples. Sara's uncle gives him 5 apples. How many apples does Sara have now?"),
    ("Tom has 10 apples and Jim has 6 apples. The uncle of Tom gives him 5 apples. How many apples does Tom have "
     "now?", "Sara has 10 apples and Jim has 6 apples. The uncle of Sara gives him 5 apples. How many apples does "
     "Sara have now?"),
    ("Kate has 12 pencils and Anna has 5 pencils. Kate is sad since Tom took 4 pencils from her. How many pencils "
     "does Kate have now?", "Luke has 12 pencils and Anna has 5 pencils. Luke is sad since Tom took 4 pencils from "
     "her. How many pencils does Luke have now?"),
    *[(f"Jim has 6 apples and Bob has 3 apples. Jim {verb} Tom gives him 4 apples. How many apples does Jim have "
       "now?", f"Mia has 6 apples and Bob has 3 apples. Mia {verb} Tom gives him 4 apples. How many apples does Mia "
       "have now?") for verb in ("smiles when", "claps after", "waits until", "is happy because")],
    ("Tom has $10 and Jim has $6. Tom says Bob owes him $5 and pays it. How much money does Tom have now?",
     "Sara has $10 and Jim has $6. Sara says Bob owes him $5 and pays it. How much money does Sara have now?"),
    # older than the rule, found by the same review: "to give him" has Jim for its subject, so him is not Jim
    ("Tom has 10 apples, Jim has 6 apples and Bob has 2 apples. Tom asks Jim to give him 4 apples. How many apples "
     "does Tom have now?", "Sara has 10 apples, Jim has 6 apples and Bob has 2 apples. Sara asks Jim to give him 4 "
     "apples. How many apples does Sara have now?"),
]


@pytest.mark.parametrize("routed, question", REVIEW_8B)
def test_the_eighth_reviews_pronouns_that_change_whom_they_stand_for_are_refused(routed: str, question: str) -> None:
    """NOTE-review8b: the clause-subject rule excluded the subject's owner ("Sara's uncle gives her": her may be
    Sara) or read past "since", "when", "says" ..., so the routed text's own referent was excluded and a person
    renamed to the other gender made the pronoun another person (15 apples served, 10 true)."""
    assert not align(question, routed).aligned


def test_a_name_after_the_with_a_word_of_degree_is_no_rename_even_where_nothing_else_seems_to_be_picked() -> None:
    """NOTE-review8c: a rule that let "the noisy old hot water boiler" -> "the blocked sink" rename where the text
    brought in no other thing with a/an/one or a number was withdrawn: texts bring in the other things by
    possessives, "the X and the Y", names and bare plurals ("Ana's car ... her van. The fast vehicle" -> "The slow
    truck": 180 served, 120 true)."""
    plumber = ("A plumber charges $80 to come out and $15 for every half hour of work. Arash calls one to fix the "
               "noisy old hot water boiler in his flat, and the job takes 4 hours. How many dollars does Arash pay?")
    assert not align(plumber.replace("noisy old hot water boiler", "blocked sink"), plumber).aligned
    cars = ("Ana's car goes 40 miles an hour and her van goes 60 miles an hour. The fast vehicle leaves at noon. How "
            "many miles does the fast vehicle go in 3 hours?")
    assert not align(cars.replace("fast vehicle", "slow truck"), cars).aligned


def test_a_word_of_age_or_rank_before_a_kinship_noun_is_part_of_it() -> None:
    """A kinship noun of two words whose first is one of age or rank ("his younger sister", "her big brother") is
    one rename with a kinship noun of any word count (ninth session, on varied-dev6); "younger" and "older" that
    compare, or that tell two kin of the text apart, still must agree."""
    raffle = ("Tahmina's class holds a raffle. The prizes, which her wife buys for the class, cost $80. The tickets "
              "raise $300. How many dollars does the raffle raise once the prizes are paid for?")
    renamed = raffle.replace("Tahmina", "Bao").replace("her wife", "his younger sister").replace("80", "60")
    assert align(renamed.replace("300", "200"), raffle).renames == (
        ("Tahmina", "Bao"), ("her", "his"), ("wife", "younger sister"))
    roast = ("Abdullahi is roasting a beef joint for his godfather's birthday dinner. It weighs 2 kilograms and needs "
             "40 minutes for every kilogram. How many minutes does it take?")
    assert align(roast.replace("Abdullahi", "Akosua").replace("his godfather", "her big brother")
                 .replace("2 kilograms", "3 kilograms"), roast).aligned
    sisters = ("Ana's older sister has 5 apples. Her younger sister has 3 apples. How many apples does her older "
               "sister have?")
    assert not align(sisters.replace("does her older", "does her younger"), sisters).aligned
    ages = "Ana is 5 years younger than her sister, who is 30. How old is Ana?"
    assert not align(ages.replace("younger", "older"), ages).aligned
    assert align(ages.replace("her sister", "her older sister"), ages).renames == (("sister", "older sister"),)


def test_a_phrase_that_opens_a_clause_moves_alike_before_a_name_of_several_parts() -> None:
    """An opening phrase of time before a hyphenated or two-word name ("On Saturday Seung-woo sharpens ...") is
    moved to the clause's end as it is before a one-word name, and one that ends at a comma before a subject needs
    no verb the tables know ("After a heavy snowfall, Malak and her aunt plow"; "swim" is in the verb table, so
    one side moved and the other did not): ninth session, on varied-dev7."""
    knives = ("On Saturday Seung-woo sharpens knives at the market. He charges $5 for a knife. Last Saturday he "
              "sharpened 40 knives. How many dollars did Seung-woo make?")
    for name in ("Tevita", "Duc Anh", "Ji-woo"):
        assert align(knives.replace("Seung-woo", name).replace("40", "14"), knives).aligned, name
    snow = ("After a heavy snowfall, Malak and her great-grandmother plow the 20 kilometers of streets in their "
            "village. The plow moves at 8 kilometers an hour. How many hours do they plow?")
    assert align(snow.replace("Malak", "Arvid").replace("her great-grandmother", "his swim coach")
                 .replace("20", "44"), snow).renames == (
        ("Malak", "Arvid"), ("her", "his"), ("great - grandmother", "swim coach"))
    # the phrase still must agree, wherever it stands
    assert not align(knives.replace("On Saturday Seung-woo", "On Sunday Tevita"), knives).aligned


def test_a_verb_that_names_a_roles_work_is_part_of_the_role_noun() -> None:
    """"his swim coach", "her driving instructor": a verb right before a role noun the table knows is a word of
    it, renamed with it; two people of the text never become one."""
    apples = "Ana's coach has 5 apples. Her brother has 3 apples. How many apples does her coach have?"
    assert align(apples.replace("coach", "swim coach").replace("5", "6"), apples).renames == (
        ("coach", "swim coach"),)
    two = "Ana's coach has 5 apples. Her swim coach has 3 apples. How many apples does her swim coach have?"
    assert not align(two.replace("Her swim coach", "Her coach").replace("her swim coach", "her coach"),
                     two).aligned


def test_the_second_part_of_a_hyphenated_word_before_a_names_noun_is_no_word_of_its_own() -> None:
    """"flat-pack desks" -> "boxes": "pack" alone is a verb, inside the hyphenated word it is part of the name (as
    the first part already was); a hyphenated word whose parts must agree ("half-price") still is no name."""
    desks = ("Dario is helping his cousin move 24 flat-pack desks up to an office. It fits 2 of them per trip. How "
             "many trips does moving the flat-pack desks take?")
    for name in ("boxes", "filing cabinets", "heavy boxes of printer paper"):
        assert align(desks.replace("flat-pack desks", name).replace("24", "36"), desks).aligned, name
    tickets = "Ana buys 5 half-price tickets at $10 each. How many dollars does Ana pay for the half-price tickets?"
    assert not align(tickets.replace("half-price tickets", "tickets").replace("5", "6"), tickets).aligned


def test_a_place_named_as_a_whole_in_a_clause_of_no_number_is_renamed_as_a_whole() -> None:
    """"up the road to the ski lodge" -> "to the lighthouse", "to the monastery on the hill": a name after "the"
    in a clause with no number, none of its words written elsewhere, renamed as a whole (ninth session, on
    varied-dev5); a word of degree, age or picking ("the fast vehicle", "the old mill", "the cheapest cafe": "the
    old vehicle" picks the car bought first, NOTE-review8c), a word written elsewhere ("the red box" beside "a red
    bag") or a clause with a number still refuse."""
    ride = ("Leilani and her niece ride their bikes up the road to the ski lodge. Going up at 12 kilometers an hour "
            "takes them 55 minutes, and on the way back they coast downhill at 20 kilometers an hour. How many "
            "minutes does the whole ride take them?")
    for place in ("lighthouse", "monastery on the hill", "ski lodge"):
        assert align(ride.replace("ski lodge", place).replace("55", "90"), ride).aligned, place
    for place in ("fast mill", "cheapest cafe", "old mill", "ski lodge 3"):
        assert not align(ride.replace("ski lodge", place).replace("55", "90"), ride).aligned, place
    boxes = ("Ana packs 6 pens in a red bag and 4 pens in a blue bag. She carries the red box home. How many pens "
             "does she carry?")
    assert not align(boxes.replace("the red box", "the green crate").replace("6", "7"), boxes).aligned
    # in a clause with a number the name may be what the number counts or measures
    sale = "Ana sells the old bike for $40 and buys a helmet for $15. How many dollars does she have left?"
    assert not align(sale.replace("old bike", "kayak").replace("40", "60"), sale).aligned


def test_the_seventh_pools_currency_signs_are_slots() -> None:
    """﷼ writes the riyal and the rial; K (kwacha), MT (meticais) and JD (dinars) are letter signs where the text
    writes their currency's word, labels elsewhere ("K220 ... how many dong" is no amount of kwacha)."""
    chair = "Nadia rents a chair for ₫120 a week. She does 15 cuts a day at ₫24 each. How many dong does Nadia keep?"
    for sign, word in (("﷼", "riyals"), ("﷼", "rials"), ("K", "kwacha"), ("MT", "meticais"), ("JD", "dinars")):
        question = chair.replace("₫120", f"{sign}220").replace("₫24", f"{sign}10").replace("dong", word)
        assert align(question, chair).renames == (("₫", sign),), sign
    assert not align(chair.replace("₫120", "K220").replace("₫24", "K10"), chair).aligned


def test_a_names_kept_words_up_to_its_noun_and_a_mass_noun_headed_elsewhere_rename_with_it() -> None:
    """"500 grams of stone-ground organic spelt flour" -> "400 grams of spelt flour": the words dropped and the kept
    words up to the name's noun are one rename, and a noun no number counts is a noun where the text writes the whole
    name after a determiner ("The stone-ground organic spelt flour comes in sacks"); two kinds of the text made one,
    or a changed word that tells them apart, still refuse."""
    flour = ("Pilar feeds the starter twice a day, and every feeding takes 500 grams of stone-ground organic spelt "
             "flour. The stone-ground organic spelt flour comes in sacks of 2 kilograms that cost $14 each. How many "
             "dollars does the starter's stone-ground organic spelt flour cost over 8 weeks?")
    for name in ("spelt flour", "rye flour", "flour"):
        question = flour.replace("stone-ground organic spelt flour", name).replace("500", "400")
        assert align(question, flour).renames == (("stone - ground organic spelt flour", name),), name
    apples = "Ana buys 5 red apples and 3 green apples. How many red apples does she buy?"
    assert not align("Ana buys 7 apples and 3 green apples. How many apples does she buy?", apples).aligned
    mixed = ("Ana mixes 500 grams of organic spelt flour with 200 grams of rye flour. How many grams of organic spelt "
             "flour does she use in 3 loaves?")
    assert not align(mixed.replace("organic spelt flour", "flour").replace("500", "400"), mixed).aligned


def test_a_counted_name_of_several_words_ends_in_its_noun() -> None:
    """"8 smallmouth bass a day": the name's last word is its noun though no number counts it alone, so "perch" ->
    "smallmouth bass" is one rename; the asked fish changed alone, or a verb after the count, still refuse."""
    fish = ("Tendai goes fishing with his uncle, and each person may keep 3 perch a day. On the second day they keep "
            "2 fewer than the limit in all. How many perch do they keep over the two days?")
    for name in ("smallmouth bass", "sea bass"):
        assert align(fish.replace("perch", name).replace("3 ", "8 "), fish).renames == (("perch", name),), name
    asked_other = fish.replace("perch", "sea bass").replace("How many sea bass", "How many perch")
    assert not align(asked_other, fish).aligned
    apples = "Ana buys 3 red apples. The apples cost $2 each. How many dollars does Ana pay?"
    assert not align(apples.replace("3 red apples", "3 apples cost"), apples).aligned


def test_a_compound_name_may_change_its_first_words_where_the_trade_names_its_noun_in_general() -> None:
    """"Folake fits carpets for a living ... lays grey twist pile carpet": the plural after a verb names carpets in
    general, no other kind, so "grey twist pile carpet" -> "wool carpet" is one rename; a kind of the text made
    another, or the name kept in one place and renamed in another, still refuse."""
    carpet = ("Folake fits carpets for a living. In her godfather's new house she lays grey twist pile carpet in a "
              "hallway of 11 square meters. The grey twist pile carpet costs $30 a square meter. How many dollars "
              "does the grey twist pile carpet cost?")
    question = carpet.replace("grey twist pile", "wool").replace("11", "8")
    assert align(question, carpet).renames == (("grey twist pile carpet", "wool carpet"),)
    once = carpet.replace("lays grey twist pile carpet", "lays wool carpet").replace("11", "8")
    assert not align(once, carpet).aligned
    two = ("Folake fits carpets for a living. She lays 11 square meters of grey carpet and 5 of wool carpet. The grey "
           "carpet costs $30 a square meter. How many dollars does the grey carpet cost?")
    assert not align(two.replace("grey", "wool", 1).replace("11", "8"), two).aligned


def test_the_hyphens_of_two_names_are_no_common_word() -> None:
    """"Dong-hyun and his grandson" -> "Saoirse and her great-grandfather": the word diff pairs the two hyphens
    and splits both names; tried again with no hyphen matching, the names and the kin nouns are each one rename,
    and "Dong" before a hyphen is a name's part, not the currency. Another kin noun of another count still refuses."""
    rink = ("An ice rink charges adults $10 to get in, and children half that. Dong-hyun and his grandson take 14 "
            "children skating. How many dollars does the outing cost?")
    question = rink.replace("Dong-hyun and his grandson", "Saoirse and her great-grandfather").replace("14", "7")
    assert align(question, rink).aligned
    assert not align(question.replace("great-grandfather", "great-grandparents"), rink).aligned


def test_a_possessive_pronoun_and_the_object_after_it_rename_together() -> None:
    """"drives his minibus" -> "drives her pickup truck": the pronouns pair as pronouns and the names are one
    rename; a pronoun of a gender unlike the rest's still refuses."""
    toll = ("Rashid drives his minibus to visit his neighbor, and the toll road has 7 toll booths. Each booth charges "
            "$20. How many dollars does Rashid pay in tolls?")
    question = toll.replace("Rashid", "Parisa").replace("his", "her").replace("minibus", "pickup truck")
    assert align(question.replace("7", "5"), toll).renames == (("Rashid", "Parisa"), ("his", "her"),
                                                               ("minibus", "pickup truck"))
    mixed = toll.replace("Rashid", "Parisa").replace("his minibus", "her pickup truck").replace("7", "5")
    assert not align(mixed, toll).aligned
    # one thing renamed to a group, or back, is another count (NOTE-review10: "$20 per vehicle")
    for group in ("truck convoy", "bus fleet", "vintage car collection", "convoy"):
        assert not align(question.replace("pickup truck", group).replace("7", "5"), toll).aligned, group
        assert not align(toll.replace("minibus", group).replace("7", "5"), toll).aligned, group


def test_the_worlds_letter_signs_are_slots_where_the_text_writes_their_word() -> None:
    """Ar (ariary), UM (ouguiyas), VT (vatu), G (gourdes), D (dalasis), FCFA (francs), J$ (dollars), QR (riyals), MK
    (kwacha) are letter signs; those of one or two letters are signs only where the text writes their currency's
    word ("G220 ... how many dong" is no amount of gourdes), and one of a family's word is that family's ("J$ ... how
    many dollars")."""
    chair = "Nadia rents a chair for ₫120 a week. She does 15 cuts a day at ₫24 each. How many dong does Nadia keep?"
    for sign, word in (("Ar", "ariary"), ("UM", "ouguiyas"), ("VT", "vatu"), ("G", "gourdes"), ("D", "dalasis"),
                       ("FCFA", "francs"), ("J$", "dollars"), ("QR", "riyals"), ("MK", "kwacha")):
        question = chair.replace("₫120", f"{sign}220").replace("₫24", f"{sign}10").replace("dong", word)
        assert align(question, chair).renames == (("₫", sign),), sign
    assert not align(chair.replace("₫120", "G220").replace("₫24", "G10"), chair).aligned
    mixed = chair.replace("₫120", "J$220").replace("₫24", "$10").replace("dong", "dollars")
    assert not align(mixed, chair).aligned


def test_a_hyphenated_name_a_role_noun_and_a_cousins_degree_are_slots() -> None:
    """"Marie-Ange" is one person though its parts have two genders (its parts joined by a hyphen); "Dong-hyun" at a
    sentence's start is a person its pronoun stands for, not the dong; pastor, apprentice, tenant, ... are role nouns;
    "second cousin" is one kinship noun. Two names written apart ("Tom Mia") and "the second day" still refuse."""
    sushi = ("A green plate costs $5. Kaito eats from 11 green plates while his mentor eats from 9 plates, and they "
             "split the bill evenly. How many dollars does each of them pay?")
    question = sushi.replace("Kaito", "Marie-Ange").replace("his", "her").replace("mentor", "pastor")
    assert align(question.replace("11", "8"), sushi).aligned
    assert not align(sushi.replace("Kaito", "Tom Mia").replace("11", "8"), sushi).aligned
    milk = ("Kalinda milks the 39 cows on her sister's farm twice a day. How many liters does Kalinda's sister "
            "get?")
    assert align(milk.replace("Kalinda", "Dong-hyun").replace("her", "his").replace("39", "38"), milk).aligned
    diesel = ("Tendai runs a generator at his grandson's restaurant for 7 hours a day. On the second day it burns 4 "
              "liters an hour. How many liters does it burn?")
    assert align(diesel.replace("his grandson", "her second cousin").replace("Tendai", "Pania")
                 .replace("7", "6"), diesel).aligned
    assert not align(diesel.replace("second day", "third day").replace("7", "6"), diesel).aligned
