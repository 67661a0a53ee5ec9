"""The report viewer: ``toolpolicy view REPORT_DIR`` builds a static site from what an A/B
session wrote (the decision, every item, each instance's arms turn by turn)."""

from .site import Site, SiteError, build_site
from .source import ReportError

__all__ = ["ReportError", "Site", "SiteError", "build_site"]
