"""Usage and cost as operators and people read them: the calendar their periods are counted in, and the
report as a table or JSON. The numbers come from the storage port's ``UsageReads``; prices from
``agent_core.llm.prices``."""

from gateway.usage.calendar import UsageCalendar, UsagePeriodError, usage_zone
from gateway.usage.report import report_json, report_table

__all__ = ["UsageCalendar", "UsagePeriodError", "report_json", "report_table", "usage_zone"]
