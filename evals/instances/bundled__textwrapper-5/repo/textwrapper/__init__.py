"""Text utilities: wrapping, column alignment, Markdown tables, slugs."""

from textwrapper.align import align_columns, pad
from textwrapper.slug import slugify
from textwrapper.table import render_table
from textwrapper.width import display_width
from textwrapper.wrap import fill, wrap

__version__ = "1.2.0"

__all__ = ["align_columns", "display_width", "fill", "pad", "render_table", "slugify", "wrap"]
