"""The admin API's erasure of one person (mounted at ``/admin``): ``POST /persons/{id}/erase``.

The body must repeat the person id (``{"confirm": "<id>"}``), so a mistyped URL or a replayed request for
another person erases nothing; an unknown person is a 404 and nothing changes; a memory provider that cannot
delete the person's data is a 502 and nothing changes (``skip_provider: true`` erases everything else and
leaves the provider's data). The answer is the erasure report (counts, never content).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, HTTPException
from pydantic import BaseModel, ConfigDict, Field

from gateway.erasure import PersonEraser, ProviderNotClearedError, UnknownPersonError
from gateway.http.access import BearerGuard

API_ERASER = "admin:api"


class EraseBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    confirm: str = Field(min_length=1, max_length=200, description="The person id again, to confirm.")
    skip_provider: bool = Field(default=False, description="Leave the external memory provider's data.")


def erase_router(eraser: PersonEraser, guard: BearerGuard) -> APIRouter:
    router = APIRouter(dependencies=[Depends(guard)])

    @router.post("/persons/{person_id}/erase")
    async def erase(person_id: str, body: EraseBody) -> dict[str, Any]:
        """Delete everything stored about the person; the report of what went."""
        if body.confirm != person_id:
            raise HTTPException(422, "confirm must repeat the person id exactly; nothing was erased.")
        try:
            report = await eraser.erase(person_id, erased_by=API_ERASER, skip_provider=body.skip_provider)
        except UnknownPersonError as exc:
            raise HTTPException(404, str(exc)) from exc
        except ProviderNotClearedError as exc:
            raise HTTPException(502, str(exc)) from exc
        return report.to_dict()

    return router
