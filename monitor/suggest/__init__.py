"""Suggested checks: a profile proposed from what one read of each spreadsheet shows.

Pure: no I/O. ``workbook`` is what one read of a spreadsheet gives (its tabs' values, dates marked);
``survey`` looks at one workbook and keeps only what a proposal needs (header rows, per column its
kind, bounds, newest date, whether its values repeat), so that hundreds of spreadsheets cost memory
for their surveys, not their cells; ``propose`` turns the surveys of spreadsheets of one template
into checks, each with the sentence saying what it saw; ``render`` writes them as the config's TOML.
"""

from .checks import check_models
from .folders import FolderProposal, folders_first, for_folder
from .propose import Proposal, Suggested, propose, propose_all
from .render import render_toml
from .survey import SheetSurvey, survey, templates
from .workbook import Dated, TabValues, Workbook

__all__ = ["Dated", "FolderProposal", "Proposal", "SheetSurvey", "Suggested", "TabValues", "Workbook",
           "check_models", "folders_first", "for_folder", "propose", "propose_all", "render_toml", "survey",
           "templates"]
