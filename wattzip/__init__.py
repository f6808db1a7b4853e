"""wattzip: the energy and performance of lossless file compression, measured."""

__version__ = "0.1.0"
