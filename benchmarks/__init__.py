"""cdlearn benchmarks against its peers (scikit-learn, skglm, celer, liblinear, Snap ML).

Run ``python -m benchmarks.run [--quick] [--cases ...] [--repeats 5]`` or
``python -m benchmarks.run --epoch-cost``; see ``benchmarks/run.py``.
"""
