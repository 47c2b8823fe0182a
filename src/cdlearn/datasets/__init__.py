"""Datasets: the LIBSVM loader with its cache, and problem generators."""

from .libsvm import DATASETS, DatasetInfo, clear_cache, data_home, load_binary, load_libsvm

__all__ = ["DATASETS", "DatasetInfo", "clear_cache", "data_home", "load_binary", "load_libsvm"]
