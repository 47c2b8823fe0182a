"""
Reproducing a paper's figure
============================

``cdlearn reproduce ID`` re-runs one table or figure of the papers and writes
CSV, PNG and a ``note.md`` comparing with the paper's numbers; the same runs
are available from Python as :func:`cdlearn.experiments.run_experiment`. Here
the small version of ``faceoff-fig1`` runs (``full=False``; the command
line's ``--full`` runs the paper's sizes) and we show its figure and note.
"""

import tempfile
from pathlib import Path

import matplotlib.image as mpimg
import matplotlib.pyplot as plt

from cdlearn.experiments import run_experiment

out = run_experiment("faceoff-fig1", Path(tempfile.mkdtemp()), full=False)
print("files written:", sorted(p.name for p in out.iterdir()))
print((out / "note.md").read_text())

for png in sorted(out.glob("*.png")):
    fig, ax = plt.subplots(figsize=(10, 6))
    ax.imshow(mpimg.imread(png))
    ax.set_axis_off()
    ax.set_title(png.name, fontsize=9)
    fig.tight_layout()
plt.show()
