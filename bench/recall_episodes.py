"""The recall corpus's people, the facts they talk about (episodes) and the questions asked about them.

Invariants: data only (bench.corpus_recall places it into sessions); every question's gold names episodes
defined here; the wording was written for this corpus, not taken from a public benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Pair:
    key: str
    a: str
    b: str
    language: str = "en"


@dataclass(frozen=True, slots=True)
class Episode:
    """Turns that carry a fact, placed inside one session of a pair (``session``: its index)."""

    key: str
    pair: str
    session: int
    turns: tuple[tuple[int, str], ...]  # (0: a speaks, 1: b speaks, text)


@dataclass(frozen=True, slots=True)
class Question:
    kind: str
    text: str
    gold: tuple[str, ...]  # episode keys; their sessions are the gold conversations


PAIRS: Final = (
    Pair("pt", "Priya", "Tom"),
    Pair("sa", "Sam", "Alex"),
    Pair("ml", "Maria", "Luis"),
    Pair("jd", "Jonas", "Dana"),
    Pair("ek", "Emma", "Kofi"),
    Pair("mk", "美伊", "小林", "zh"),
    Pair("hy", "陽菜", "結衣", "ja"),
)
SESSIONS_PER_PAIR: Final = 6

EPISODES: Final = (
    # -- name flood: Priya and Tom greet each other by name in every session -----------------------
    Episode(
        "pt-work",
        "pt",
        3,
        (
            (0, "Ugh, the reorg at the office hit my team and my project got cancelled in October."),
            (1, "That is awful. Did they at least move you somewhere good?"),
            (0, "No, I am on the support rotation now. Worst autumn at work in years."),
        ),
    ),
    Episode(
        "pt-trip",
        "pt",
        1,
        (
            (1, "So for the trip, are we still doing the coast road?"),
            (0, "I think we agreed on the train to Edinburgh instead, cheaper and no driving."),
            (1, "Right, train it is. I will book the sleeper."),
        ),
    ),
    Episode(
        "pt-cat",
        "pt",
        4,
        (
            (0, "The vet says Biscuit needs to lose weight, no more treats."),
            (1, "Poor Biscuit, he loves those salmon snacks."),
        ),
    ),
    Episode(
        "sa-move",
        "sa",
        2,
        (
            (1, "When are you actually moving?"),
            (0, "Next month. I signed the lease for a flat in Lisbon near the river."),
        ),
    ),
    Episode(
        "sa-dog",
        "sa",
        0,
        (
            (0, "We adopted a retired greyhound from the rescue, her name is Pepper."),
            (1, "A greyhound! They sleep all day, right?"),
        ),
    ),
    Episode(
        "ml-recipe",
        "ml",
        2,
        (
            (1, "What did you put in the paella on Sunday?"),
            (0, "Saffron, chorizo, prawns, and a lot of smoked paprika."),
        ),
    ),
    Episode(
        "ml-exam",
        "ml",
        4,
        (
            (0, "I failed the driving test again, the examiner said I rolled through a stop sign."),
            (1, "Third time is the charm, you will pass next time."),
        ),
    ),
    Episode(
        "jd-band",
        "jd",
        1,
        (
            (0, "The band finally has a name: we are calling ourselves Static Orchard."),
            (1, "Love it. When is the first gig?"),
            (0, "The Blue Door bar, Friday the 12th."),
        ),
    ),
    Episode(
        "jd-bike",
        "jd",
        3,
        (
            (1, "Someone stole my bike from outside the library."),
            (0, "No way, the new one? Did you report it?"),
        ),
    ),
    Episode(
        "ek-garden",
        "ek",
        0,
        (
            (0, "The tomatoes in the allotment got blight, I had to pull all of them."),
            (1, "Such a shame after all that watering."),
        ),
    ),
    Episode(
        "ek-job",
        "ek",
        2,
        (
            (1, "I start at the hospital lab on Monday, night shifts at first."),
            (0, "Congrats Kofi, night shifts will be tough though."),
        ),
    ),
    # -- paraphrase ------------------------------------------------------------------------------
    Episode(
        "sa-tourney",
        "sa",
        4,
        (
            (1, "How did the tourney go on Saturday?"),
            (0, "I made the semifinal but hurt my knee in the second bout."),
            (1, "Ouch, is it bad?"),
        ),
    ),
    Episode(
        "ml-kickbox",
        "ml",
        1,
        (
            (0, "I signed up for kickboxing classes, Tuesday and Thursday evenings."),
            (1, "Nice, that will be a good workout."),
        ),
    ),
    Episode(
        "jd-car",
        "jd",
        5,
        (
            (0, "My car broke down on the motorway, the gearbox is finished."),
            (1, "How much is the repair going to cost?"),
            (0, "More than the car is worth, honestly."),
        ),
    ),
    Episode(
        "ek-sick",
        "ek",
        4,
        (
            (1, "I have been in bed with the flu all week, fever and chills."),
            (0, "Get well soon, drink lots of tea."),
        ),
    ),
    Episode(
        "pt-money",
        "pt",
        5,
        (
            (0, "We finally paid off the mortgage on the old flat."),
            (1, "That is huge, no more monthly payments to the bank!"),
        ),
    ),
    Episode(
        "ml-baby",
        "ml",
        5,
        (
            (1, "My sister had her baby yesterday, a little girl called Inés."),
            (0, "Congratulations, you are an aunt now!"),
        ),
    ),
    # -- multi-turn ------------------------------------------------------------------------------
    Episode(
        "sa-birthday",
        "sa",
        3,
        (
            (0, "For my birthday we went out to dinner."),
            (1, "Oh nice, where?"),
            (0, "That little Ethiopian place on Fifth Street, the injera was amazing."),
        ),
    ),
    Episode(
        "jd-gift",
        "jd",
        2,
        (
            (1, "What should I get my dad for his sixtieth?"),
            (0, "He mentioned wanting to learn the banjo, maybe lessons?"),
            (1, "Good idea, I will book him a course."),
        ),
    ),
    Episode(
        "ek-book",
        "ek",
        5,
        (
            (0, "Which book should our club read next?"),
            (1, "Let us do Americanah, I have been meaning to read it."),
        ),
    ),
    Episode(
        "pt-plan",
        "pt",
        2,
        (
            (1, "Did we decide anything about the anniversary party?"),
            (0, "Yes, garden party at my parents' place, last Saturday of June."),
        ),
    ),
    # -- multi-hop -------------------------------------------------------------------------------
    Episode(
        "ml-friend1",
        "ml",
        0,
        ((0, "My friend Rosa just got a job as a pastry chef."), (1, "Where is she working?")),
    ),
    Episode(
        "ml-friend2",
        "ml",
        3,
        (
            (1, "Remember Rosa? She moved to Vienna for the bakery job."),
            (0, "Vienna, wow, she will love the cafes."),
        ),
    ),
    Episode("jd-coach1", "jd", 0, ((1, "My climbing coach is called Ivan, he is very strict."),)),
    Episode(
        "jd-coach2",
        "jd",
        4,
        (
            (0, "Ivan competed in the national bouldering final last year."),
            (1, "No wonder he is so strict with us."),
        ),
    ),
    # -- CJK -------------------------------------------------------------------------------------
    Episode(
        "mk-kyoto",
        "mk",
        2,
        (
            (0, "我们上个星期去了京都玩，看了很多寺庙。"),
            (1, "京都的红叶怎么样？"),
            (0, "非常漂亮，就是人太多了。"),
        ),
    ),
    Episode(
        "mk-job",
        "mk",
        4,
        (
            (1, "我下个月要换工作了，去一家做电动汽车的公司。"),
            (0, "恭喜你！新公司在哪里？"),
            (1, "在深圳，离家有点远。"),
        ),
    ),
    Episode("mk-sick", "mk", 1, ((0, "我感冒了，发烧三天了。"), (1, "多喝热水，好好休息。"))),
    Episode(
        "mk-cook", "mk", 5, ((1, "昨天晚上我做了红烧肉，第一次做就成功了。"), (0, "太厉害了，下次教我。"))
    ),
    Episode(
        "hy-trip",
        "hy",
        1,
        (
            (0, "来月、北海道へスキーに行くことにしたよ。"),
            (1, "いいね！誰と行くの？"),
            (0, "会社の同期三人と。"),
        ),
    ),
    Episode(
        "hy-cat",
        "hy",
        3,
        ((1, "うちの猫が病気で、毎日薬を飲ませているの。"), (0, "大変だね、早く元気になるといいね。")),
    ),
    Episode(
        "hy-exam", "hy", 5, ((0, "英語の試験に合格した！"), (1, "おめでとう！ずっと勉強していたもんね。"))
    ),
)

QUESTIONS: Final = (
    # name flood: the name is in every session of the pair (greetings); the rest decides
    Question("name_flood", "What went wrong for Priya at work last autumn?", ("pt-work",)),
    Question("name_flood", "What did Priya and Tom decide about the trip?", ("pt-trip",)),
    Question("name_flood", "What did the vet tell Priya about Biscuit?", ("pt-cat",)),
    Question("name_flood", "Where is Sam moving to?", ("sa-move",)),
    Question("name_flood", "What did Maria put in the paella?", ("ml-recipe",)),
    Question("name_flood", "Why did Maria fail her driving test?", ("ml-exam",)),
    Question("name_flood", "What is the name of Jonas's band?", ("jd-band",)),
    Question("name_flood", "What happened to Dana's bike?", ("jd-bike",)),
    Question("name_flood", "What happened to Emma's tomatoes?", ("ek-garden",)),
    Question("name_flood", "Where did Kofi get a new job?", ("ek-job",)),
    # paraphrase
    Question("paraphrase", "Did Sam get injured at the tournament?", ("sa-tourney",)),
    Question("paraphrase", "Which martial art did Maria start training?", ("ml-kickbox",)),
    Question("paraphrase", "What trouble did Jonas have with his vehicle?", ("jd-car",)),
    Question("paraphrase", "Who was ill recently?", ("ek-sick",)),
    Question("paraphrase", "Did Priya finish paying for the house loan?", ("pt-money",)),
    Question("paraphrase", "Who became an aunt?", ("ml-baby",)),
    Question("paraphrase", "Which pet did Sam's family take in from a shelter?", ("sa-dog",)),
    # multi-turn
    Question("multi_turn", "Which restaurant did Sam go to for the birthday dinner?", ("sa-birthday",)),
    Question("multi_turn", "What present did Dana get for her father?", ("jd-gift",)),
    Question("multi_turn", "What is the book club reading next?", ("ek-book",)),
    Question("multi_turn", "When and where is the anniversary party?", ("pt-plan",)),
    Question("multi_turn", "Where and when is the first gig of the band?", ("jd-band",)),
    # multi-hop: both sessions are gold
    Question(
        "multi_hop", "In which city does Maria's pastry chef friend work now?", ("ml-friend1", "ml-friend2")
    ),
    Question("multi_hop", "What did Dana's climbing coach compete in?", ("jd-coach1", "jd-coach2")),
    Question("multi_hop", "Which river city will the greyhound owner live in?", ("sa-dog", "sa-move")),
    # CJK
    Question("cjk", "美伊上周去哪里旅游了？", ("mk-kyoto",)),
    Question("cjk", "小林的新工作在哪个城市？", ("mk-job",)),
    Question("cjk", "谁生病发烧了？", ("mk-sick",)),
    Question("cjk", "谁第一次做了红烧肉？", ("mk-cook",)),
    Question("cjk", "陽菜はどこへスキーに行くの？", ("hy-trip",)),
    Question("cjk", "結衣の猫はどうしたの？", ("hy-cat",)),
    Question("cjk", "誰が試験に合格した？", ("hy-exam",)),
)
