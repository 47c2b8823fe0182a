"""scikit-learn's own tests with cdlearn's estimators substituted (``make test-sklearn``)."""
