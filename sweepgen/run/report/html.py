"""The self-contained ``report.html``: one file, plotly.js inlined, the data as JSON, no network.

Why plotly and not Vega-Lite: plotly.js has the views this page needs as native traces (parallel
coordinates with per-axis ranges, filled seed bands, log axes, horizontal bars), and the plotly Python
package ships the minified bundle, so the page is built offline from an installed package. Vega-Lite
has no parallel-coordinates mark (it must be assembled from fold transforms) and its three bundles
(vega, vega-lite, vega-embed) come from npm, not from a Python package. plotly (the `plot` extra) is
imported only to read its bundled JavaScript; the figures are plain JSON built here and in the page's
script (report_page.js), which is faster than plotly.py's validated figure objects at 1,000 runs.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from typing import Any

from sweepgen.errors import UserError
from sweepgen.run.report.page_types import PageData

PLOT_HINT = (
    "install the plot extra: `pip install 'sweepgen[plot]'` "
    "(matplotlib, plotly, scipy, scikit-learn; no torch)"
)


def _finite(value: Any) -> Any:
    """JSON for the page: NaN and infinities (a diverged run) become null, as JSON has neither."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def plotly_js() -> str:
    try:
        from plotly.offline import get_plotlyjs
    except ImportError:
        raise UserError("report --html needs plotly, which is not installed", hint=PLOT_HINT) from None
    return str(get_plotlyjs())


def render(page: PageData) -> str:
    """The page's HTML for ``page`` (the JSON-able mapping report_page.build returns)."""
    import jinja2  # noqa: PLC0415 - lazy: jinja2 loads only for report.html

    here = resources.files("sweepgen.run.report")
    template_text = (here / "page.html.j2").read_text(encoding="utf-8")
    page_js = (here / "page.js").read_text(encoding="utf-8")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    # `<` written as \u003c: no string in the data can close the <script> element it sits in
    data_json = json.dumps(_finite(page), ensure_ascii=False, allow_nan=False, default=str).replace(
        "<", "\\u003c"
    )
    return env.from_string(template_text).render(
        page=page,
        plotly_js=_markup(plotly_js()),
        data_json=_markup(data_json),
        page_js=_markup(page_js),
    )


def _markup(text: str) -> Any:
    from markupsafe import Markup  # noqa: PLC0415 - lazy: markupsafe loads only for report.html

    return Markup(text)
