"""leukemia from the local LIBSVM files (``$CDLEARN_DATA/leu.bz2`` + ``leu.t.bz2``).

benchopt's own ``leukemia`` dataset downloads the 72-sample OpenML version
(train + test); offline, this one reads the same 72 patients from the LIBSVM
copies (38 + 34 rows × 7,129 genes, LIBSVM's normalised values, not OpenML's
raw ones), with OpenML's target: 1 for AML (LIBSVM label -1), 0 for ALL.
"""

import os

from benchopt import BaseDataset, safe_import_context

with safe_import_context() as import_ctx:
    import numpy as np
    from sklearn.datasets import load_svmlight_files


class Dataset(BaseDataset):
    name = "leukemia-local"
    requirements = ["scikit-learn"]

    def get_data(self):
        root = os.environ.get("CDLEARN_DATA", "/work/shared/data")
        X1, y1, X2, y2 = load_svmlight_files(
            [os.path.join(root, "leu.bz2"), os.path.join(root, "leu.t.bz2")], n_features=7129)
        X = np.vstack([X1.toarray(), X2.toarray()])
        y = (np.r_[y1, y2] < 0).astype(X.dtype)
        return dict(X=X, y=y)
