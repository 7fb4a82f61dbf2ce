"""A deterministic recall corpus: long multi-session chats between pairs of people, and questions asked the
way people ask them, each with the conversation(s) that answer it.

Invariants: the same seed gives the same transcripts, ids and questions; every question's gold
conversations exist in the transcripts; questions never reuse a benchmark's wording — they were written
for this corpus. Kinds:
- ``name_flood``: the question names a speaker, whose partner greets them by name in every session;
- ``paraphrase``: the evidence says it in other words (tourney/tournament, hurt/injured);
- ``multi_turn``: the answer is spread over a question and its reply (no single turn matches well);
- ``multi_hop``: two facts in two sessions are both needed (both are gold);
- ``cjk``: Chinese and Japanese conversations and questions.
Speakers are authors of ``user`` turns (the import format), so windows label them by name.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from .recall_episodes import EPISODES, PAIRS, QUESTIONS, SESSIONS_PER_PAIR, Episode, Pair, Question

KINDS: Final = ("name_flood", "paraphrase", "multi_turn", "multi_hop", "cjk")


# Small talk with the partner's name ({n}) in it: the name flood.
_GREETINGS_EN: Final = (
    "Hey {n}!",
    "Thanks, {n}!",
    "Morning {n}, how are you?",
    "Haha, good one {n}.",
    "Talk later, {n}!",
    "Miss you {n}.",
    "Cheers {n}!",
    "You are the best, {n}.",
    "Night {n}!",
    "Sure thing {n}.",
)
_GREETINGS_ZH: Final = ("{n}，早上好！", "谢谢{n}！", "{n}，晚安。", "哈哈，{n}你太逗了。", "回头聊，{n}！")
_GREETINGS_JA: Final = ("{n}、おはよう！", "ありがとう、{n}！", "{n}、おやすみ。", "また後でね、{n}。")
# Chatter on shared topics: the same words as the questions, about other things (lexical distractors).
_CHATTER_EN: Final = (
    "The weather has been grey all week, I want some sun.",
    "Did you watch the chess tournament on TV? Pretty boring final.",
    "Work has been calm this week, lots of meetings though.",
    "I went to the gym, my knees are sore from the stairs machine.",
    "We should plan a trip somewhere warm next year.",
    "My neighbour's dog barked all night again.",
    "Traffic on the way to the office was terrible today.",
    "I am trying to read more books this year, maybe one a month.",
    "The new cafe downstairs makes great flat whites.",
    "Have you seen the new season of that detective show?",
    "I need a new phone, the battery dies by lunchtime.",
    "Dinner at my parents' was nice, my dad cooked lamb.",
    "I might start running again, just short distances.",
    "The kids have a school play next week.",
    "I am so tired, I slept badly.",
    "Rent went up again, it is getting ridiculous.",
    "I cleaned the whole flat today, feels great.",
    "The train was delayed for an hour this morning.",
    "My cousin's wedding is in the autumn, in the countryside.",
    "We ordered pizza and watched a film.",
    "The concert tickets sold out in minutes.",
    "I got a parking ticket outside the bank, annoying.",
    "My manager wants the report by Friday.",
    "The bakery on the corner closed down.",
    "I found a great recipe for lentil soup.",
    "My brother is visiting next weekend.",
    "Do you know a good dentist? Mine retired.",
    "I bought new running shoes, they are comfortable.",
    "It rained so hard the garden is flooded.",
    "The museum has a new photography exhibition.",
)
_CHATTER_ZH: Final = (
    "今天天气不错，我们去公园散步了。",
    "最近工作很忙，每天都加班。",
    "我昨天看了一部电影，挺好看的。",
    "周末想去爬山，你去吗？",
    "地铁今天特别挤。",
    "我买了一本新书，还没开始看。",
    "晚饭吃了饺子。",
    "我的手机坏了，要换一个新的。",
    "下个月我表姐结婚。",
    "楼下新开了一家咖啡店。",
)
_CHATTER_JA: Final = (
    "今日はいい天気だね。",
    "最近仕事が忙しくて疲れた。",
    "昨日映画を見に行ったよ。",
    "週末は何をするの？",
    "電車がすごく混んでいた。",
    "新しいカフェができたよ。",
    "晩ご飯はカレーにした。",
    "雨が続いているね。",
)


@dataclass(frozen=True, slots=True)
class RecallCorpus:
    """The transcripts (import format) and the questions with their gold conversation ids."""

    transcripts: tuple[dict[str, object], ...]
    questions: tuple[tuple[Question, tuple[str, ...]], ...]


def build_corpus(seed: int = 11, turns_per_session: int = 36) -> RecallCorpus:
    """Every pair's sessions (chatter, greetings and its episodes at seeded places) and the questions."""
    rng = random.Random(seed)
    by_session: dict[tuple[str, int], list[Episode]] = {}
    for episode in EPISODES:
        by_session.setdefault((episode.pair, episode.session), []).append(episode)
    transcripts: list[dict[str, object]] = []
    where: dict[str, str] = {}
    for pair_index, pair in enumerate(PAIRS):
        for session in range(SESSIONS_PER_PAIR):
            conversation_id = f"recall-{pair.key}-{session}"
            episodes = by_session.get((pair.key, session), [])
            for episode in episodes:
                where[episode.key] = conversation_id
            turns = list(_session_turns(rng, pair, episodes, turns_per_session))
            started = 1_700_000_000.0 + (pair_index * SESSIONS_PER_PAIR + session) * 86_400.0
            transcripts.append(
                {
                    "id": conversation_id,
                    "person": pair.a.casefold() if pair.language == "en" else f"p-{pair.key}-a",
                    "platform": "import",
                    "messages": [
                        {
                            "role": "user",
                            "author": speaker,
                            "content": text,
                            "created_at": started + index * 60.0,
                        }
                        for index, (speaker, text) in enumerate(turns)
                    ],
                }
            )
    questions = tuple((q, tuple(dict.fromkeys(where[key] for key in q.gold))) for q in QUESTIONS)
    return RecallCorpus(tuple(transcripts), questions)


def _session_turns(
    rng: random.Random, pair: Pair, episodes: Sequence[Episode], length: int
) -> Iterator[tuple[str, str]]:
    greetings, chatter = _pools(pair.language)
    speakers = (pair.a, pair.b)
    slots = sorted(rng.sample(range(2, max(3, length - 4)), len(episodes)))
    placed = dict(zip(slots, episodes, strict=True))
    turn = 0
    speaker = 0
    while turn < length:
        episode = placed.get(turn)
        if episode is not None:
            for who, text in episode.turns:
                yield speakers[who], text
            speaker = 1 - episode.turns[-1][0]
            turn += len(episode.turns)
            continue
        other = speakers[1 - speaker]
        if rng.random() < 0.35:
            yield speakers[speaker], rng.choice(greetings).format(n=other)
        else:
            yield speakers[speaker], rng.choice(chatter)
        speaker = 1 - speaker
        turn += 1


def _pools(language: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if language == "zh":
        return _GREETINGS_ZH, _CHATTER_ZH
    if language == "ja":
        return _GREETINGS_JA, _CHATTER_JA
    return _GREETINGS_EN, _CHATTER_EN
