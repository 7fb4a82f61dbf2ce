"""The English stopword list the query builder drops from natural-language search queries.

Invariant: entries are lower-case with ASCII apostrophes; the list stays small (function words
only) so no content word a person would search for is ever silently dropped.
"""

from __future__ import annotations

from typing import Final

ENGLISH_STOPWORDS: Final[frozenset[str]] = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each either else for
    from further had has have having he her here hers herself him himself his how i if in into is
    it its itself just me more most my myself nor not of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up us very was we
    were what when where which while who whom whose why will with would you your yours yourself
    yourselves
    i'm i've i'd i'll you're you've you'd you'll he's she's it's we're we've we'd we'll they're
    they've they'd they'll that's there's what's who's let's
    isn't aren't wasn't weren't don't doesn't didn't haven't hasn't hadn't can't couldn't
    shouldn't wouldn't won't
    """.split()  # noqa: SIM905 - a word list reads better as prose than as 150 string literals
)


def is_stopword(word: str) -> bool:
    """True when `word` (any case, straight or curly apostrophe) is an English function word."""
    return word.casefold().replace("\u2019", "'") in ENGLISH_STOPWORDS
