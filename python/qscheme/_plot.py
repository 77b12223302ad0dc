"""The error distribution per scheme, for qscheme.stats(plot=...): imported only when a plot is
asked for, so that matplotlib is needed only then."""

import numpy as np


def error_figure(x, rows, values):
    import matplotlib.pyplot as plt  # without a display matplotlib draws with Agg

    figure, ax = plt.subplots(figsize=(7, 4))
    x64 = x.astype(np.float64).reshape(-1)
    for row, y in zip(rows, values):
        err = np.abs(y.astype(np.float64).reshape(-1) - x64)
        nonzero = err[err > 0]
        label = f"{row['name']} ({row['bits_per_element']:.2f} bits, {row['sqnr_db'] or float('inf'):.1f} dB)"
        if nonzero.size:
            ax.hist(np.log10(nonzero), bins=100, histtype="step", label=label)
        else:
            ax.plot([], [], label=label + ": exact")
    ax.set_xlabel("log10 |dequantized - x| (elements with a non-zero error)")
    ax.set_ylabel("elements")
    ax.set_title("Quantization error per scheme")
    ax.legend(fontsize="small")
    figure.tight_layout()
    return figure

