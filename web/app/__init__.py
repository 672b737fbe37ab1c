"""The application layer: the one place that names every package.

The command line (:mod:`web.app.cli`) lives here; nothing below this layer imports it.
"""
