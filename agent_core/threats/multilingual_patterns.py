"""Catalogue entries for "ignore the previous instructions" written in languages other than English.

Invariants: like the English entry, each alternative needs an order verb AND a qualifier that points
back at earlier instructions ("previous", "all", "above"), so ordinary text that mentions
instructions or rules in these languages passes; accented letters are written both ways because the
skeleton view drops combining marks; negated orders in Chinese ("不要忽略…") do not count.
"""

from __future__ import annotations

import unicodedata

from agent_core.threats.threat_pattern import A, ThreatPattern, pattern

_GERMAN = (
    r"\b(?:ignorier(?:e|en|t)?|vergiss|vergessen\s+sie|missachte(?:n|t)?)\s+(?:\w+\s+){0,3}?"
    r"(?:vorherigen|vorigen|bisherigen|obigen|fr(?:ü|u)heren|alle[nrs]?)\s+(?:\w+\s+){0,2}?"
    r"(?:anweisungen|instruktionen|regeln|befehle|vorgaben|richtlinien)\b"
)
_FRENCH = (
    r"\b(?:ignore[rz]?|oublie[rz]?|ne\s+tiens\s+pas\s+compte\s+des)\s+(?:\w+\s+){0,3}?"
    r"(?:instructions|consignes|r(?:è|e)gles|directives)\s+(?:\w+\s+){0,2}?"
    r"(?:pr(?:é|e)c(?:é|e)dentes|ant(?:é|e)rieures|ci-dessus)\b"
)
_SPANISH_PORTUGUESE_ITALIAN = (
    r"\b(?:ignora[rd]?|ignore|ignorate|olvida[r]?|olvide|descarta[r]?|esque(?:ç|c)a|esquecer|desconsidere|"
    r"dimentica|dimenticate)"
    r"\s+(?:\w+\s+){0,3}?(?:instrucciones|reglas|indicaciones|directrices|instru(?:ç|c)(?:õ|o)es|regras|"
    r"diretrizes|istruzioni|regole|direttive)\s+(?:\w+\s+){0,2}?"
    r"(?:anteriores|previas|pr(?:é|e)vias|de\s+arriba|precedenti|anteriori)\b"
)
_RUSSIAN = (
    r"(?<!не )(?:игнорируй(?:те)?|проигнорируй(?:те)?|забудь(?:те)?|не\s+обращай(?:те)?\s+внимания\s+на)\s+"
    r"(?:\w+\s+){0,3}?(?:предыдущие|прежние|прошлые|все|вышеуказанные)\s+(?:\w+\s+){0,2}?"
    r"(?:инструкции|указания|правила|команды)"
)
_CHINESE = (
    r"(?<!不要)(?<!别)(?<!不)(?:忽略|无视|無視|忽视|忽視|忘记|忘記|忘掉)(?:你|您)?(?:之前|以前|先前|以上|上文|上面|上述|前面|此前|所有|全部|一切)"
    r"[^。\n]{0,8}?(?:指令|指示|规则|規則|命令|提示词|提示詞)"
)
_JAPANESE = (
    r"(?:以前|前|上記|これまで|今まで)の(?:すべての|全ての)?(?:指示|命令|ルール|指令)を"
    r"(?:すべて|全て)?(?:無視|忘れ)"
)
_KOREAN = (
    r"(?:이전|앞의|위의|모든)\s*(?:의\s*)?(?:지시|명령|규칙|지침)(?:사항)?(?:을|를|은|는)?"
    r"\s*(?:모두\s*)?(?:무시|잊어)"
)
_HINDI = (
    r"(?:पिछले|पिछली|पूर्व|सभी|ऊपर\s+के)\s+(?:\S+\s+){0,2}?(?:निर्देशों|निर्देश|नियमों|नियम)\s+(?:को\s+)?"
    r"(?:अनदेखा|नज़रअंदाज़|नजरअंदाज|भूल)"
)
_PERSIAN_ARABIC = (
    r"(?:دستورالعمل|دستورات|قوانین)\S{0,4}\s+(?:قبلی|پیشین)\s+(?:را\s+)?(?:نادیده|فراموش)"
    r"|(?:تجاهل|انس|اهمل|أهمل)\s+(?:\S+\s+){0,2}?(?:التعليمات|الأوامر|القواعد|التوجيهات)\s+(?:\S+\s+)?"
    r"(?:السابقة|الأولى|أعلاه)"
)

_ANCHORS = (
    "ignor", "vergiss", "vergessen", "missacht", "oublie", "tiens", "olvid", "descarta", "esque",
    "desconsider", "dimentic", "игнорир", "забуд", "обращай", "忽略", "无视", "無視", "忽视", "忽視",
    "忘记", "忘記", "忘掉",
    "忘れ", "무시", "잊어", "अनदेखा", "नज़रअंदाज़", "नजरअंदाज", "भूल", "نادیده", "فراموش", "تجاهل", "انس",
    "اهمل", "أهمل",
)  # fmt: skip
_SOURCES = (_GERMAN, _FRENCH, _SPANISH_PORTUGUESE_ITALIAN, _RUSSIAN, _CHINESE, _JAPANESE, _KOREAN, _HINDI)

MULTILINGUAL_PATTERNS: tuple[ThreatPattern, ...] = (
    pattern(
        "prompt_injection_multilingual",
        A,
        "asks, in another language, to ignore previous instructions",
        # The views are NFKC-normalised (and case-folded: every literal here is lower case).
        unicodedata.normalize("NFKC", "|".join((*_SOURCES, _PERSIAN_ARABIC))),
        tuple(unicodedata.normalize("NFKC", a).casefold() for a in _ANCHORS),
    ),
)
