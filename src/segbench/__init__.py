"""segbench: the Berkeley Segmentation Benchmark, exact and fast."""

__version__ = "0.1.0"
