"""Dataset layouts and the synthetic dataset that serves as the embedded default."""

from .synthetic import SyntheticItem, make_synthetic_dataset, write_synthetic_dataset

__all__ = ["SyntheticItem", "make_synthetic_dataset", "write_synthetic_dataset"]
