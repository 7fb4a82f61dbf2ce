"""A deterministic chat-transcript corpus for the search benchmark: many persons, mixed English and Chinese.

Invariants: the same seed yields the same transcripts and queries; word frequencies follow a Zipf law
(rank r has weight 1/r**1.07) over a vocabulary with a long tail, as natural text does; every query of
``queries()`` uses words that occur in the corpus, so each one has work to do.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

_ZIPF_S: Final = 1.07
_PLATFORMS: Final = ("telegram", "slack", "discord", "web")
# The head of the English vocabulary, most frequent first (function words included, as in real chat).
_ENGLISH_HEAD: Final = tuple(
    """
    the i to you and a it is that of in we for this
    on be do have can with not just so what my but at if
    me are was will about your get like they know there think all one
    how out up time some would going want need also work should now when
    make see today message then deploy could tomorrow server search memory meeting look thing
    good thanks help because last week error try new test back day fix model
    yes update check more data plan user other people problem still release first after
    sure config database query team file review project idea bug timeout before lunch coffee
    weekend schedule budget customer report index latency worker queue token prompt context summary docker
    volume process thread retry feature branch commit merge version python function class method import
    module package install upgrade travel hotel flight train ticket dinner weather rain morning evening
    deadline feedback question answer price order delivery address account password email phone number running
    reading writing music movie
    """.split()  # noqa: SIM905 - a word list reads better as prose
)
_SYLLABLES: Final = tuple(
    """
    ka ri to na mi su ve lo da pe zu fi ro bel
    tan mor quin vas dor lex nup gra sil ton har wen cor fal
    tis mun bra kel ost pra vin zel dru hom jas pli rud sco
    tev yor
    """.split()  # noqa: SIM905 - a word list reads better as prose
)
# Frequent Chinese words first; the tail is made of generated two-character words.
_CHINESE_HEAD: Final = tuple(
    """
    的 了 是 我 你 在 有 不 这个 我们 今天 明天 数据 问题
    已经 可以 需要 知道 觉得 现在 时候 工作 项目 服务器 部署 搜索 记忆 模型
    会议 计划 测试 代码 文件 版本 更新 错误 日志 性能 数据库 索引 查询 进程
    线程 队列 延迟 发布 周末 早上 晚上 咖啡 天气 出差 酒店 机票 火车 北京
    上海 深圳 杭州 苹果 香蕉 电影 音乐 跑步 健身 谢谢 帮忙 朋友 公司 用户
    消息 配置
    """.split()  # noqa: SIM905 - a word list reads better as prose
)
_CJK_CHARS: Final = "".join(chr(0x4E00 + i * 7) for i in range(1200))
_IDENTIFIER_PARTS: Final = ("chat", "send", "sync", "user", "job", "lease", "cache", "queue", "auth", "db")


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """Words by frequency rank with cumulative Zipf weights for fast sampling."""

    words: tuple[str, ...]
    cumulative: tuple[float, ...]

    @classmethod
    def zipf(cls, words: tuple[str, ...]) -> Vocabulary:
        weights = [1.0 / (rank**_ZIPF_S) for rank in range(1, len(words) + 1)]
        return cls(words, tuple(itertools.accumulate(weights)))

    def sample(self, rng: random.Random, count: int) -> list[str]:
        return rng.choices(self.words, cum_weights=self.cumulative, k=count)


def _english_vocabulary(rng: random.Random, tail: int) -> Vocabulary:
    generated: dict[str, None] = {}
    while len(generated) < tail:
        word = "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))
        if word not in _ENGLISH_HEAD:
            generated[word] = None
    return Vocabulary.zipf(_ENGLISH_HEAD + tuple(generated))


def _chinese_vocabulary(rng: random.Random, tail: int) -> Vocabulary:
    generated: dict[str, None] = {}
    while len(generated) < tail:
        generated["".join(rng.choice(_CJK_CHARS) for _ in range(2))] = None
    return Vocabulary.zipf(_CHINESE_HEAD + tuple(w for w in generated if w not in _CHINESE_HEAD))


class ChatTranscripts:
    """Generates conversations (one JSON object each, the import format) and matching search queries."""

    def __init__(self, seed: int = 7, *, persons: int = 100) -> None:
        self._rng = random.Random(seed)
        self.english = _english_vocabulary(self._rng, 12_000)
        self.chinese = _chinese_vocabulary(self._rng, 6_000)
        self.persons = tuple(f"p{index:04d}" for index in range(persons))
        self.identifiers = tuple(
            f"{a}-{b}" if i % 3 == 0 else f"{a}_{b}_{i}" if i % 3 == 1 else f"ERR_{a.upper()}_{i}"
            for i, (a, b) in enumerate(itertools.product(_IDENTIFIER_PARTS, repeat=2))
            if a != b
        )

    def conversations(self, messages: int) -> Iterator[dict[str, object]]:
        """Conversations of 10-60 messages until ``messages`` messages have been produced."""
        produced = 0
        for number in itertools.count():
            if produced >= messages:
                return
            size = min(self._rng.randint(10, 60), messages - produced)
            person = self._rng.choice(self.persons)
            started = 1_700_000_000.0 + number * 600.0
            body = [
                {
                    "role": "user" if turn % 2 == 0 else "assistant",
                    "content": self.message(),
                    "created_at": started + turn * 5.0,
                }
                for turn in range(size)
            ]
            produced += size
            yield {
                "id": f"imp-{number:07d}",
                "person": person,
                "platform": self._rng.choice(_PLATFORMS),
                "title": " ".join(self.english.sample(self._rng, 3)),
                "messages": body,
            }

    def jsonl(self, messages: int) -> Iterator[str]:
        for conversation in self.conversations(messages):
            yield json.dumps(conversation, ensure_ascii=False)

    def message(self) -> str:
        """A chat message of about 40-400 characters: English, Chinese, or a technical line."""
        parts: list[str] = []
        for _ in range(self._rng.randint(1, 3)):
            roll = self._rng.random()
            if roll < 0.62:
                words = self.english.sample(self._rng, self._rng.randint(5, 22))
                parts.append(" ".join(words).capitalize() + self._rng.choice(".?!."))
            elif roll < 0.9:
                words = self.chinese.sample(self._rng, self._rng.randint(4, 14))
                parts.append("".join(words) + self._rng.choice("。？！，"))
            else:
                ident = self._rng.choice(self.identifiers)
                tail = " ".join(self.english.sample(self._rng, 4))
                parts.append(f"`{ident}` {tail} (see src/{ident.lower()}.py:{self._rng.randint(1, 999)})")
        return " ".join(parts)

    def queries(self, count: int = 50) -> list[str]:
        """Varied queries: common and rare words, sentences, identifiers, Chinese of 1-4 chars, phrases."""
        rng = random.Random(99)
        eng, chi = self.english.words, self.chinese.words
        kinds: list[str] = [
            "message",
            "deploy",
            "server",
            "the",
            eng[300],
            eng[1_500],
            eng[6_000],
            eng[11_000],
            "what did we decide about the deploy schedule last week",
            "remind me what the customer said about the budget and the release date",
            f"{eng[400]} {eng[2_000]} {eng[9_000]}",
            f"{eng[20]} {eng[50]} {eng[5_000]}",
            self.identifiers[3],
            self.identifiers[17],
            self.identifiers[40],
            "src/chat-send.py",
            "数",
            chi[30][0],
            "数据",
            "苹果",
            chi[200],
            chi[3_000],
            "数据库",
            "服务器部署",
            "今天的会议",
            f"{chi[40]}{chi[41]}",
            '"deploy tomorrow"',
            '"memory search"',
            f'"{eng[30]} {eng[31]}"',
            "deploy NOT staging",
            'NOT secret AND (token OR "password*) ^ col:value',
            "timeout*",
            "mee*",
            "server 数据库 latency",
            "北京 travel hotel",
        ]
        while len(kinds) < count:
            kinds.append(" ".join(rng.choice(eng[: rng.choice((200, 3_000, 12_000))]) for _ in range(2)))
        return kinds[:count]
