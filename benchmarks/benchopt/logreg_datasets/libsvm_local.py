"""LIBSVM binary datasets from local files (``$CDLEARN_DATA``), for benchmark_logreg_l1/l2.

The benchmarks' own datasets download (libsvmdata, OpenML); offline, this one
reads ``a9a`` (``a9a.xz``, 32,561 × 123, sparse) or ``leu`` (``leu.bz2``,
38 × 7,129, densified) with labels in {-1, 1}, as both objectives require.
"""

import os

from benchopt import BaseDataset, safe_import_context

with safe_import_context() as import_ctx:
    import bz2
    import lzma

    import numpy as np
    from sklearn.datasets import load_svmlight_file


class Dataset(BaseDataset):
    name = "libsvm-local"
    requirements = ["scikit-learn"]
    parameters = {"dataset": ["a9a", "leu"]}

    def get_data(self):
        root = os.environ.get("CDLEARN_DATA", "/work/shared/data")
        name, opener, d = {"a9a": ("a9a.xz", lzma.open, 123),
                           "leu": ("leu.bz2", bz2.open, 7129)}[self.dataset]
        with opener(os.path.join(root, name)) as f:
            X, y = load_svmlight_file(f, n_features=d)
        X = X.toarray() if self.dataset == "leu" else X.tocsr()
        return dict(X=X, y=np.where(y > 0, 1.0, -1.0))
