"""The installed version of metascore (recorded in every ranking)."""

from importlib.metadata import PackageNotFoundError, version as _pkg_version

try:
    __version__ = _pkg_version("metascore")
except PackageNotFoundError:  # vendored copy next to a scoring program
    __version__ = "0.1.0+vendored"
