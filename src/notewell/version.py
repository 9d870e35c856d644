"""The version of notewell (one place; the package and every interface read it here)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
