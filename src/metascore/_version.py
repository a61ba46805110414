"""The version of metascore, written in this one place: the package's metadata
(pyproject.toml reads it), ``metascore --version``, every ranking's provenance, the
``metascore-runtime`` wheel (``metascore bundle runtime build --wheel``), the
``metascore[runtime]`` extra that pins that wheel (setup.py) and the image's labels (the
release workflow passes it, the Dockerfile checks it) all take it from here.

A plain assignment: setup tools read it without importing the package, and a copy vendored
next to a scoring program carries the version it was copied from.
"""

__version__ = "0.1.0"
