"""Catalogue entries for exfiltration, command-and-control, persistence and hard-coded secrets.

Invariants: ordinary operations vocabulary (nodes, heartbeats, task queues, "command and control" in
a sentence, a question about ``authorized_keys``) is only a threat when it is aimed at the agent
itself, at a remote/C2 party, or is an order to write where an attacker would persist; a Markdown
image is a threat when its URL is built to carry data out (placeholders, data-named parameters), and
in STRICT scope whenever a remote image carries a query string.
"""

from __future__ import annotations

from agent_core.threats.threat_pattern import QUESTION, W3, A, C, S, ThreatPattern, W, pattern

# A remote destination: a URL, an IPv4 address, a dotted host name, or an explicit C2 party.
_REMOTE = (
    r"(?:https?://|\d{1,3}(?:\.\d{1,3}){3}\b|[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|xyz|ru|cn|top|"
    r"info|biz|onion|sh|me|co|dev|app|cc|tk)\b|(?:the\s+|a\s+|your\s+)?(?:c2|c&c|command(?:\s+and|\s*&)"
    r"\s+control|command\s+server|operator|controller|mothership|botnet|handler)\b)"
)
_SECRET_VAR = r"\$\{?[a-z_]*(?:key|token|secret|password|passwd|credential|api)[a-z_]*"
_AGENT_FILES = r"(?:agents\.md|claude\.md|\.cursorrules|\.clinerules|\.mnemogate\.md|soul\.md)"
_EDIT_VERBS = (
    r"\b(?:update|modify|edit|write|change|overwrite|replace|(?:append|add)\b[^\n]{0,120}?\b(?:to|into))\b"
)
_C2_THINGS = (
    r"(?:servers?|channels?|infrastructure|nodes?|beacons?|implants?|callbacks?|endpoints?|panels?|hosts?|"
    r"domains?|frameworks?|traffic|protocol|backdoors?)"
)
# Markdown / HTML images whose URL is made to carry data: a placeholder, or a data-named parameter.
_IMAGE = r"(?:!\[[^\[\]\n]{0,500}\]\(\s*<?\s*|<img\b[^>\n]{0,500}?\bsrc\s*=\s*[\"']?)(?:https?:)?//"
_URL_CHARS = r"[^\s)>\"'\]]"
_DATA_WORDS = (
    r"(?:data|secrets?|token|keys?|password|passwd|history|conversation|chat|memory|memories|prompt|summary|"
    r"context|user|info|content|messages?|answer|input|output|response|email|name|address|phone|session|"
    r"cookies?|credentials?)\b"
)
_LINK = r"(?:\[[^\[\]\n]{0,500}\]\(\s*<?\s*|<a\b[^>\n]{0,500}?\bhref\s*=\s*[\"']?)(?:https?:)?//"
_PLACEHOLDER = r"(?:\{|\}|<|\$|%7b|%3c|%24|\.\.\.|\[[\w -]{2,40}\])"
# An image loads by itself, so a data-named or empty parameter is enough; a link needs a placeholder.
_EXFIL_IMAGE = (
    rf"{_IMAGE}{_URL_CHARS}{{0,2000}}?(?:{_PLACEHOLDER}|[?&#][\w.-]{{0,40}}=(?:{_DATA_WORDS}|(?=[)\"'\s>])))"
    rf"|{_LINK}{_URL_CHARS}{{0,2000}}?{_PLACEHOLDER}"
)
_DATA_OBJECTS = (
    r"(?:conversation|chat|messages?|history|memory|memories|secrets?|passwords?|tokens?|api\s+keys?|summary|"
    r"context|user['’]?s?\s+(?:data|info|name|email|address|messages?|details|answers?)|personal\s+(?:data|info))"
)
# The SSH directory or a file in it other than the public ones (client configuration, known hosts, the
# authorized keys list, public keys); writing to authorized_keys is ``ssh_backdoor``'s concern.
_SSH_DIR = (
    r"(?:\$home|\$\{home\}|~|/root|/home/[\w.-]+)/\.ssh\b"
    r"(?!/(?:config|known_hosts(?:\.old)?|authorized_keys2?|[\w.-]{1,100}\.pub)(?![\w.-]))"
)

EXFILTRATION_PATTERNS: tuple[ThreatPattern, ...] = (
    pattern(
        "markdown_image_exfil",
        A,
        "embeds an image or link whose URL is built to carry data out",
        _EXFIL_IMAGE,
        "![ <img ]( href",
    ),
    pattern(
        "url_exfil_instruction",
        A,
        "asks to put conversation or user data into a URL or image",
        rf"\b(?:append|add|include|insert|put|encode|embed|place|attach)\s+{W}{_DATA_OBJECTS}\s+{W}"
        rf"(?:to|in|into|inside|as)\s+{W3}(?:url|link|image|query(?:\s+string)?|parameter|src)\b",
        "url link image query parameter src",
    ),
    # C2 / promptware.
    pattern(
        "c2_node_registration",
        C,
        "asks the agent to enrol itself as a node",
        r"\bregister\s+(?:yourself\s+|this\s+(?:agent|machine|host|instance|assistant)\s+)?as\s+(?:a\s+|an\s+)?"
        r"(?:new\s+)?(?:node|bot|agent|implant)\b",
        "register",
    ),
    pattern(
        "c2_heartbeat",
        C,
        "asks to beacon to a remote party",
        rf"\b(?:heartbeats?|beacon(?:s|ing)?|check[\s-]?ins?)\s+(?:back\s+)?(?:to|with)\s+{_REMOTE}",
        "heartbeat beacon check",
    ),
    pattern(
        "c2_task_pull",
        C,
        "asks to fetch tasks from a remote party",
        rf"\bpull(?:ing)?\s+(?:down\s+)?(?:new\s+)?task(?:s|ing)?\s+(?:from|off|at)\s+{_REMOTE}",
        "pull",
    ),
    pattern(
        "c2_network_connect",
        C,
        "orders the agent onto a network",
        r"\byou\s+(?:must|should|will|need\s+to|are\s+to)\s+(?:\w+\s+){0,2}?connect\s+to\s+the\s+"
        r"(?:[\w-]+\s+){0,2}?network\b"
        r"|\bconnect\s+to\s+the\s+(?:c2|botnet|command|zombie)\s+network\b",
        "connect",
    ),
    pattern(
        "forced_action",
        C,
        "orders the agent to contact a remote party",
        rf"\byou\s+must\s+{W3}(?:register|connect|report|beacon)\s+(?:back\s+)?(?:to|with|in\s+to|at)\s+{_REMOTE}",
        "must",
    ),
    pattern(
        "anti_forensic_oneliner", C, "demands one-liners only", r"\bonly\s+use\s+one[\s-]?liners?\b", "liner"
    ),
    pattern(
        "anti_forensic_disk",
        C,
        "forbids leaving files on disk",
        rf"\bnever\s+{W}(?:create|write)\s+{W}(?:scripts?|files?)\s+{W}disk\b",
        "disk",
    ),
    pattern(
        "env_var_unset_agent",
        C,
        "unsets an agent or provider variable",
        r"\bunset\s+\w*(?:claude|codex|hermes|agent|openai|anthropic|mnemogate)\w*",
        "unset",
    ),
    # Known C2 frameworks. Names that are ordinary English words only count next to C2 vocabulary.
    pattern(
        "known_c2_framework",
        C,
        "names a command-and-control framework",
        r"\b(?:cobalt\s*strike|metasploit|brainworm)\b"
        r"|\b(?:sliver|havoc|mythic)\s+(?:c2|framework|implants?|teamserver|team\s+server|listeners?|"
        r"payloads?|beacons?)\b"
        r"|\b(?:c2|implant|teamserver)\s+(?:[\w-]+\s+){0,2}?(?:sliver|havoc|mythic)\b",
        "cobalt metasploit brainworm sliver havoc mythic",
    ),
    pattern(
        "c2_explicit",
        C,
        "mentions C2 infrastructure",
        r"\bc2\s+(?:servers?|channels?|infrastructure|beacons?)\b",
        "c2",
    ),
    pattern(
        "c2_explicit_long",
        C,
        "points the agent at command-and-control infrastructure",
        rf"\b(?:command\s+(?:and|&|n)\s+control|c&c)\s+{_C2_THINGS}\b"
        rf"|\b(?:connect|report|beacon|register|check\s+in|phone\s+home|call\s+back|listen|obey)\s+{W3}"
        r"(?:to|with|for|from)\s+(?:the\s+|a\s+|our\s+|my\s+|your\s+)?(?:command\s+(?:and|&)\s+control|c&c)\b",
        "control c&c",
    ),
    # Exfiltration.
    pattern(
        "exfil_curl", A, "sends a secret variable with curl", rf"\bcurl\b[^\n]{{0,500}}?{_SECRET_VAR}", "curl"
    ),
    pattern(
        "exfil_wget", A, "sends a secret variable with wget", rf"\bwget\b[^\n]{{0,500}}?{_SECRET_VAR}", "wget"
    ),
    pattern(
        "read_secrets",
        A,
        "reads a credentials file",
        r"\bcat\s+[^\n]{0,120}?(?:\.env\b|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc|"
        r"\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub\b))",
        "cat",
    ),
    pattern(
        "markdown_image_remote",
        S,
        "embeds a remote image with a query string",
        rf"{_IMAGE}{_URL_CHARS}{{0,2000}}?[?#]",
        "![ <img",
    ),
    pattern(
        "send_to_url",
        S,
        "sends data to a URL",
        rf"\b(?:send|post|upload|transmit|forward|exfiltrate)\s+{W}(?:to|at)\s+https?://",
        "http",
    ),
    pattern(
        "context_exfil",
        S,
        "shares the conversation or its context",
        rf"\b(?:include|output|print|share|send|dump|leak)\s+{W}"
        r"(?:(?:conversation|chat|message)\s+(?:history|logs?|transcripts?)"
        r"|(?:previous|prior|earlier)\s+messages"
        r"|(?:full|entire|whole|complete)\s+(?:conversation|chat)\b"
        r"|(?:full|entire|whole|complete)\s+context\s+of\s+(?:this|the|our|your)\s+(?:conversation|chat|session)\b"
        r"|(?:full|entire|whole|complete)\s+context\b(?!\s+of\b))",
        "include output print share send dump leak",
    ),
    # Persistence / SSH: writing into the key file or reading the key directory, not asking about them.
    pattern(
        "ssh_backdoor",
        S,
        "writes a key into SSH authorized_keys",
        r"(?:>>?|\btee\b(?:\s+-a)?)\s*[^\s;|&]{0,200}authorized_keys\b"
        r"|\b(?:add|append|write|insert|put|copy|paste|place|drop|inject|plant)\b[^\n]{0,120}?"
        r"\b(?:to|into|in|inside)\s+(?:the\s+|your\s+|my\s+|root['’]s\s+)?[^\s]{0,120}?authorized_keys\b",
        "authorized_keys",
        unless=QUESTION,
    ),
    pattern(
        "ssh_access",
        S,
        "reads or ships the SSH directory",
        r"\b(?:cat|less|more|head|tail|cp|scp|rsync|tar|zip|gzip|base64|xxd|strings|nc|curl|wget|upload|send|"
        rf"exfiltrate|leak|email|post|print|dump|read|show|copy)\b[^\n]{{0,120}}?{_SSH_DIR}",
        ".ssh",
        unless=QUESTION,
    ),
    pattern(
        "hermes_env",
        S,
        "touches the agent's secrets file",
        r"(?:\$home|\$\{home\}|~)/\.(?:hermes|mnemogate)/\.env\b",
        ".env",
    ),
    pattern(
        "agent_config_mod",
        S,
        "asks to modify agent instruction files",
        rf"{_EDIT_VERBS}[^\n]{{0,120}}?{_AGENT_FILES}",
        "agents.md claude.md rules mnemogate.md soul.md",
    ),
    pattern(
        "hermes_config_mod",
        S,
        "asks to modify the agent's configuration",
        rf"{_EDIT_VERBS}[^\n]{{0,120}}?\.(?:hermes|mnemogate)/(?:config\.ya?ml|soul\.md)",
        ".hermes/ .mnemogate/",
    ),
    pattern(
        "hardcoded_secret",
        S,
        "contains a hard-coded secret",
        r"\b(?:api[\s_-]?key|token|secret|password|passwd)\s*[=:]\s*[\"'][a-z0-9_\-./+=]{20,}[\"']",
        "key token secret passw",
    ),
)
