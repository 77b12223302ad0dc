"""stats: error statistics of schemes on one tensor (oracle/stats), and their plot."""

import json

from . import _arrays, _qscheme


class Stats(list):
    """Rows of :func:`stats` (dicts: name, scheme, elements, blocks, bytes, bits_per_element,
    max_abs_error, rmse, sqnr_db (None when infinite), saturated, zero_blocks), sorted by bits per
    element; ``text`` is the table ``qscheme stats`` prints, ``figure`` the plot when one was asked for."""

    def __init__(self, rows, text, figure=None):
        super().__init__(rows)
        self.text = text
        self.figure = figure

    def __str__(self):
        return self.text


def stats(x, schemes="q8_0;q4_0;nvfp4;mxfp8;mxfp4", *, profile="exact", calibration="minmax", plot=False,
          threads=None):
    """Error statistics of each scheme on x (the figures of ``qscheme stats``).

    schemes: a list of presets or scheme texts, or one string separated by ';'. plot: True for a
    matplotlib figure of the error distribution per scheme (``result.figure``), or a file name
    to save it to; matplotlib is imported only then.
    """
    names = _qscheme.split_schemes(schemes) if isinstance(schemes, str) else list(schemes)
    xs = _arrays.f32(x, "x")
    text_json, text, values = _qscheme.stats(xs, names, profile=profile, calibration=calibration,
                                            threads=threads)
    rows = json.loads(text_json)
    figure = None
    if plot:
        from ._plot import error_figure

        figure = error_figure(xs, rows, values)
        if isinstance(plot, (str, bytes)) or hasattr(plot, "__fspath__"):
            figure.savefig(plot)
    return Stats(rows, text, figure)
