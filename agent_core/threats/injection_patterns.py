"""Catalogue entries for instruction injection: overrides, jailbreak personas, fake prompt structure.

Invariants: each entry judges intent, not vocabulary — an order to drop the agent's instructions or
identity, not a sentence that happens to contain "you are now a …", "pretend to be …" or "rules";
negated orders ("don't forget the previous instructions") and statements about someone else do not
count.
"""

from __future__ import annotations

from agent_core.threats.threat_pattern import (
    LIMITS,
    PERSONAS,
    SEP,
    UNBOUND,
    W3,
    YOU_ARE,
    YOU_ARE_NOW,
    A,
    C,
    ThreatPattern,
    W,
    pattern,
)

# Not after a negation ("don't forget …") or a first/third-person subject ("I ignore …").
_NOT_NEGATED = r"(?<!n't )(?<!n’t )(?<!not )(?<!never )(?<!\bi )(?<!\bwe )(?<!\bhe )(?<!\bshe )(?<!\bthey )"
_DROP = (
    r"(?:ignore|disregard|forget|overrule|override|bypass|discard|abandon|dismiss|neglect|nullify|erase|"
    r"overlook|skip|"
    r"(?:do\s+not|don['’]?t|never)\s+(?:follow|obey)|"
    r"throw\s+(?:out|away)|set\s+aside|pay\s+no\s+(?:attention|heed|mind)\s+to|stop\s+(?:following|obeying)|"
    r"no\s+longer\s+(?:follow|obey))"
)
_STRONG = (
    r"(?:previous|previously\s+given|prior|above|earlier|preceding|foregoing|former|original|initial|all|any|"
    r"every|your|system|safety|developer|operator)"
)
_DETERMINER = rf"(?:the|my|these|those|of|our|its|current|existing|{_STRONG})"
# Orders a model follows; "rules"-like words are generic (CSS, firewall, chess), so they need a qualifier
# right before them and may not be "rules of/for/in something".
_ORDERS = (
    r"(?:instructions?|prompts?|directives?|guidelines|guidance|programming|training|guardrails|"
    r"system\s+(?:prompt|message)|commands|messages|text|directions)"
)
_RULES = (
    r"(?:rules|restrictions|constraints|polic(?:y|ies)|limits|limitations)"
    r"(?!\s+(?:of|for|in|on|at|about|from)\b)"
)
# Where an order ends: "forget the rules above." but not "skip the rules above the fold".
_CLAUSE_END = r"(?=\s*(?:[.,;:!\n]|$|and\b|instead\b|then\b|now\b))"
# The prompt's own parts, named with the singular nouns people use for them.
_PROMPT_PART = (
    r"(?:system|developer|operator|safety|content)\s+(?:message|prompt|polic(?:y|ies)|instructions?)"
)
# Orders that are the agent's own whoever names them ("the previous instructions", not "the previous rules").
_OWN_ORDERS = r"(?:instructions?|prompts?|directives?|guidelines|programming)"
_COMPACT_DROP = r"(?<!dont)(?<!donot)(?<!never)(?:ignore|disregard|forget|override|bypass)"
_COMPACT_ORDERS = r"(?:instructions?|rules|prompts?|directives|guidelines|guardrails)"

_PROMPT_INJECTION = (
    # One order verb, then what it drops: earlier instructions, everything above, or the instructions given.
    rf"\b{_NOT_NEGATED}{_DROP}(?:"
    rf"\b{SEP}{W}{_STRONG}{SEP}{W3}{_ORDERS}\b"
    rf"|\b{SEP}(?:{_DETERMINER}{SEP}){{0,2}}{_STRONG}{SEP}(?:{_DETERMINER}{SEP}){{0,2}}{_RULES}\b"
    rf"|\b{SEP}(?:about\s+)?(?:all\s+(?:of\s+)?)?(?:everything|anything|all|what)\s+(?:that\s+)?"
    r"(?:(?:was\s+|you\s+(?:were|have\s+been)\s+|i\s+have\s+)?(?:told|given|written|stated|instructed)"
    r"|above|before\s+this|prior|previously|earlier|so\s+far|up\s+to\s+(?:now|here|this\s+point))\b"
    rf"|\s+(?:all\s+(?:of\s+)?)?(?:the\s+)?(?:above|foregoing|preceding){_CLAUSE_END}"
    rf"|{SEP}{W3}{_PROMPT_PART}\b"
    # "the rules above", "your rules given earlier": the qualifier after the rules, then the order ends.
    rf"|{SEP}(?:the|your|all|any|those|these)\s+{_RULES}\s+(?:(?:given|stated|written|listed)\s+)?"
    rf"(?:above|earlier|before|previously){_CLAUSE_END}"
    rf"|{SEP}(?:the|your|all|any|those|these)\s+{_ORDERS}\s+(?:that\s+)?"
    r"(?:you\s+(?:were|have\s+been|got)\s+(?:given|told)|you\s+(?:received|got)|given\s+to\s+you"
    r"|from\s+(?:before|earlier|above)|(?:given\s+)?(?:above|earlier|before|previously))\b)"
    # "your previous instructions are void", "these instructions supersede all previous ones".
    r"|\b(?:your\s+(?:\w+\s+)?|all\s+(?:of\s+)?(?:your\s+)?(?:previous|prior|earlier)\s+)"
    rf"(?:{_ORDERS}|rules|restrictions)\s+(?:are|is|have\s+been|were)\s+(?:now\s+|hereby\s+)?"
    r"(?:cancel+ed|void|null|revoked|invalid|obsolete|lifted|suspended|overridden|replaced|"
    r"no\s+longer\s+(?:valid|apply|applicable|in\s+effect|active))\b"
    # "your earlier rules no longer apply", "the previous instructions no longer apply".
    rf"|\b(?:your\s+(?:\w+\s+)?(?:{_OWN_ORDERS}|rules|restrictions|polic(?:y|ies))"
    rf"|the\s+(?:previous|prior|earlier|original)\s+{_OWN_ORDERS})"
    r"\s+(?:now\s+)?(?:no\s+longer|don['’]?t|do\s+not)\s+(?:apply|count|matter|hold)\b"
    r"|\b(?:these|new|following|my)\s+(?:instructions|prompt)\s+(?:supersede|override|replace|"
    r"take\s+precedence\s+over)\s+(?:all\s+|any\s+|your\s+)(?:\w+\s+)?(?:instructions|ones|prompts?|rules)\b"
)
_PROMPT_INJECTION_ANCHORS = (
    "ignor", "disregard", "overlook", "skip", "forget", "overrul", "overrid", "bypass", "discard", "abandon",
    "dismiss", "apply", "count", "matter", "hold", "neglect", "nullif", "erase", "follow", "obey", "throw",
    "aside", "pay", "cancel", "void", "null",
    "revoked", "invalid", "obsolete", "lifted", "suspended", "replace", "longer", "supersede", "precedence",
)  # fmt: skip
_PROMPT_INJECTION_COMPACT = (
    rf"{_COMPACT_DROP}(?:all|any|the|your|my|of|these|those){{0,3}}"
    rf"(?:previous|prior|above|earlier|preceding|former|original|initial|existing|system|safety){_COMPACT_ORDERS}"
    r"|(?<!dont)(?<!donot)(?<!never)(?:ignore|disregard|forget)(?:all|every)(?:of)?(?:the|your)?instructions?"
)

_TAG_NAMES = (
    r"(?:memory(?:[\s_-]*(?:context|block|snapshot|notes?|entry))?|system(?:[\s_-]*(?:prompt|message|"
    r"instructions?|reminder|note))?|instructions?|user[\s_-]*(?:input|message|query|profile|instructions?)|"
    r"assistant[\s_-]*(?:message|response|turn)|human[\s_-]*turn|tool[\s_-]*(?:result|output|response|call)s?|"
    r"function[\s_-]*(?:results?|calls?)|untrusted[\s_-]*[\w-]{1,30}|recalled[\s_-]*(?:context|memory)|"
    r"context[\s_-]*(?:file|window|block)|admin[\s_-]*(?:instructions?|override)|"
    r"developer[\s_-]*(?:instructions?|message))"
)
_FAKE_TAG = (
    # A closing tag always; an opening one unless quoted as code ("the `<system>` element").
    rf"<\s*/\s*{_TAG_NAMES}\s*>|(?<!`)<\s*{_TAG_NAMES}(?:\s[^<>\n]{{0,200}})?\s*/?\s*>"
    r"|<\|\s*(?:im_start|im_end|im_sep|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|"
    r"begin_of_text|end_of_text|start_of_turn|end_of_turn)\s*\|>"
    r"|\[/?inst\]|<<\s*/?\s*sys\s*>>|<\s*/?\s*(?:start|end)_of_turn\s*>"
    r"|(?:^|\n)[^\S\n]*═{20,}"
    r"|(?:^|\n|[-=#\[<(|]\s*)(?:end|begin|beginning|start|close)\s+(?:of\s+)?(?:the\s+)?"
    r"(?:memory(?:\s+(?:block|context|section|snapshot|notes))?|memories|system\s+(?:prompt|message|instructions)"
    r"|user\s+profile|remembered\s+notes|context\s+(?:file|block)|instructions)"
    r"(?=[^\S\n]*(?:[-=#\])>|:]|\n|$))"
)

_JAILBREAK = (
    rf"{YOU_ARE_NOW}\s+(?:called\s+|named\s+|known\s+as\s+)?(?:in\s+|entering\s+)?(?:a\s+|an\s+|the\s+)?"
    rf"{PERSONAS}\b(?!['’]s)"
    r"|\b(?:act|acting|behave|respond|answer|reply|roleplay|role-?play|play|pose|speak)\s+(?:only\s+)?(?:as|like)\s+"
    rf"(?:a\s+|an\s+|the\s+)?{PERSONAS}\b(?!['’]s)"
    r"|\b(?:enable|activate|enter|turn\s+on|switch\s+to|engage|unlock)\s+(?:the\s+)?"
    r"(?:dan|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil|chaos)\s+mode\b"
    # Developer mode is a phone or browser setting too: it counts when aimed at the agent's limits.
    r"|\b(?:enable|activate|enter|turn\s+on|switch\s+to|engage|unlock)\s+(?:the\s+|your\s+)?"
    r"developer\s+mode\b(?=[^.\n]{0,80}?\b(?:ignore|disregard|forget|bypass|answer|respond|reply|uncensored|"
    r"unfiltered|(?:no|without(?:\s+any)?)\s+(?:\w+\s+)?"
    r"(?:rules|restrictions|limits|filters|censorship|guidelines|polic(?:y|ies)))\b)"
    r"|\b(?:chatgpt|gpt|ai|assistant|you|yourself)\s+(?:with|in)\s+developer\s+mode\s+"
    r"(?:enabled|on|activated)\b"
    r"|\b(?:dan|jailbreak|jailbroken|unrestricted|unfiltered)\s+mode\s+(?:is\s+)?(?:now\s+)?"
    r"(?:enabled|activated|on|engaged|unlocked)\b"
    r"|\bdan\b[^\n]{0,20}?(?:stands\s+for|means|short\s+for|\()\s*[\"“]?do\s+anything\s+now\b"
    r"|\bdo\s+anything\s+now\s*\(\s*dan\s*\)"
)
_JAILBREAK_COMPACT = (
    r"you(?:are|re)now(?:dan|stan|dude|indevelopermode|indanmode|jailbroken|unrestricted|unfiltered|uncensored)"
    r"|dan(?:standsfor|means|shortfor)doanythingnow|(?:enable|activate|enter)(?:the)?(?:dan|jailbreak)mode"
)

_ROLE_HIJACK = (
    rf"{YOU_ARE_NOW}\s+(?:a\s+|an\s+|the\s+)?(?:[\w-]+\s+){{0,2}}?{UNBOUND}\b"
    rf"|\b{YOU_ARE}\s+(?:now\s+)?(?:free|freed|released|liberated|exempt|unshackled)\s+(?:from|of)\s+"
    rf"(?:(?:all|any|your|the|every|those|these)\s+){{0,4}}(?:[\w-]+\s+){{0,2}}?{LIMITS}\b"
    rf"|{YOU_ARE_NOW}\s+(?:[\w-]+,?\s+){{0,4}}?(?:with\s+no\s+|without\s+(?:any\s+)?|free\s+of\s+(?:any\s+)?|"
    rf"not\s+bound\s+by\s+(?:any\s+)?)(?:[\w-]+\s+){{0,2}}?{LIMITS}\b"
    # "You are ShadowGPT now, with no ethical guidelines": a *GPT persona that has no limits.
    rf"|\b{YOU_ARE}\s+(?:now\s+)?[\w-]{{1,24}}gpt\b[^.\n]{{0,80}}?"
    r"\b(?:with\s+no|without(?:\s+any)?|free\s+(?:of|from)|not\s+bound\s+by|no)\s+"
    rf"(?:[\w-]+\s+){{0,2}}?{LIMITS}\b"
    rf"|\b{YOU_ARE}\s+no\s+longer\s+(?:an?\s+)?(?:ai|assistant|language\s+model|chatbot|bot|llm|claude|chatgpt|"
    r"gpt|mnemogate|bound|restricted|limited|constrained|censored|filtered|required\s+to|subject\s+to|obliged\s+to)\b"
    rf"|{YOU_ARE_NOW}\s+(?:a\s+|an\s+)?(?:new|different|another)\s+(?:ai|assistant|model|chatbot|bot|persona|"
    r"personality|character|entity|system)\b"
)
_ROLE_HIJACK_ANCHORS = (
    "unrestricted", "unfiltered", "uncensored", "unshackled", "unbound", "unchained", "amoral", "unethical",
    "lawless", "jailbr", "liberated", "unaligned", "evil", "free", "released", "exempt", "rules",
    "restriction", "limit", "guideline", "constraint", "filter", "programming", "polic", "ethic", "moral",
    "boundar", "guardrail", "censor", "safety", "longer", "new", "different", "another",
)  # fmt: skip
_PRETEND = (
    r"\b(?:pretend|imagine|roleplay|role-?play|act\s+as\s+if|act\s+as\s+though|act\s+like)\s+(?:that\s+)?"
    r"(?:you\s+are|you['’]re|to\s+be|you\s+have|you\s+were|there\s+(?:are|were|is))"
)
_ACT_AS = r"\b(?:act|acting|behave|respond|answer|roleplay|role-?play|pose)\s+(?:only\s+)?(?:as|like)"
_PRETEND_LIMITS = (
    r"(?:restrictions?|filters?|guardrails|safety(?:\s+\w+)?|content\s+polic(?:y|ies)|programming|censorship|"
    r"guidelines|limitations|ethical\s+(?:guidelines|constraints|limits)|your\s+(?:\w+\s+)?rules)"
)
_ROLE_PRETEND = (
    rf"{_PRETEND}\s+{W3}(?:{UNBOUND}|{PERSONAS})\b(?!['’]s)"
    rf"|{_PRETEND}\s+{W3}(?:no|zero|not\s+(?:any\s+)?)\s+{W3}{_PRETEND_LIMITS}\b"
    rf"|(?:{_PRETEND}|{_ACT_AS})\s+(?:an?\s+)?(?:ai|assistant|model|chatbot|bot|llm)\s+(?:with\s+no|without|"
    r"that\s+(?:has|have)\s+no|free\s+(?:of|from)|not\s+bound|that\s+can\s+do\s+anything|that\s+ignores)"
    rf"|{_ACT_AS}\s+(?:an?\s+|the\s+)?{UNBOUND}\b"
)

INJECTION_PATTERNS: tuple[ThreatPattern, ...] = (
    pattern(
        "prompt_injection",
        A,
        "asks to ignore previous instructions",
        _PROMPT_INJECTION,
        _PROMPT_INJECTION_ANCHORS,
        compact=_PROMPT_INJECTION_COMPACT,
    ),
    pattern(
        "sys_prompt_override",
        A,
        "claims a system prompt override",
        r"\bsystem\s+prompt\s+override\b"
        r"|\b(?:override|overwrite|replace|reset)\s+(?:the\s+|your\s+)?system\s+(?:prompt|message|instructions)\b"
        r"|\bnew\s+system\s+(?:prompt|message|instructions)\s*:",
        "system",
        compact=r"systempromptoverride|(?:override|overwrite)(?:the|your)?systemprompt",
    ),
    pattern(
        "disregard_rules",
        A,
        "asks to disregard the rules",
        rf"\b{_NOT_NEGATED}disregard\s+{W}(?:your|all|any|the|previous|prior)\s+{W3}"
        r"(?:instructions?|rules|guidelines|directives|policies)\b",
        "disregard",
    ),
    pattern(
        "bypass_restrictions",
        A,
        "asks to act as if unrestricted",
        r"\bact\s+as\s+(?:if|though)\s+you\s+(?:have\s+no|don'?t\s+have|do\s+not\s+have)\s+"
        rf"{W3}(?:restrictions?|limits?|limitations?|rules|guidelines|filters?)\b",
        "act",
    ),
    pattern(
        "html_comment_injection",
        A,
        "hides instructions in an HTML comment",
        # Scanning stops at the next comment opener, so total work stays linear on "<!--<!--<!--…".
        r"<!--(?=(?:(?!-->|<!--).){0,2000}?\b(?:ignore|override|system|secret|hidden)\b)",
        "<!--",
    ),
    pattern(
        "hidden_div",
        A,
        "hides content in an invisible HTML element",
        r"<div\b(?=[^<>]{0,1000}?\bstyle\s*=)(?=[^<>]{0,1000}?display\s*:\s*none)",
        "<div",
    ),
    pattern(
        "translate_execute",
        A,
        "asks to translate text and execute it",
        rf"\btranslate\s+{W}into\s+{W}and\s+(?:then\s+)?(?:execute|run|eval|evaluate)\b",
        "translate",
    ),
    pattern(
        "deception_hide",
        A,
        "asks to keep something from the user",
        rf"\b(?:do\s+not|don['’]?t)\s+{W}tell\s+{W3}the\s+user\b(?!['’]s)",
        "tell",
    ),
    pattern(
        "fake_prompt_tag",
        A,
        "imitates the prompt's own structure (closing tags, chat-template tokens, memory fences)",
        _FAKE_TAG,
        "< inst] ═ memor system profile remembered context instructions",
    ),
    pattern(
        "jailbreak_persona",
        A,
        "switches the agent to a jailbreak persona or mode",
        _JAILBREAK,
        "dan stan dude aim mongo gpt ucar apophis evil chaos mode anything jailbr unrestricted unfiltered "
        "uncensored",
        compact=_JAILBREAK_COMPACT,
    ),
    pattern(
        "role_hijack",
        C,
        "tries to replace the agent's identity or drop its limits",
        _ROLE_HIJACK,
        _ROLE_HIJACK_ANCHORS,
    ),
    pattern(
        "role_pretend",
        C,
        "asks the agent to pretend its limits away",
        _ROLE_PRETEND,
        "pretend imagine role act behave respond answer pose",
    ),
    pattern(
        "leak_system_prompt",
        C,
        "asks to reveal the system prompt",
        rf"\b(?:output|print|reveal|repeat|dump|disclose|show|display|recite|expose|leak)\s+{W}"
        r"(?:system|initial|original|hidden|secret)\s+(?:prompt|instructions)\b",
        "prompt instructions",
    ),
    pattern(
        "remove_filters",
        C,
        "asks to answer without safety limits",
        rf"\b(?:respond|answer|reply)\s+{W}without\s+{W3}"
        r"(?:restrictions?|limitations?|filters?|safety|censorship)\b",
        "without",
    ),
    pattern(
        "fake_update",
        C,
        "claims the agent was reprogrammed",
        rf"\byou\s+have\s+been\s+{W3}(?:updated|upgraded|patched|reprogrammed)\s+to\b",
        "been",
    ),
    pattern("identity_override", C, "renames the agent", r"\bname\s+yourself\s+\w+", "yourself"),
)
