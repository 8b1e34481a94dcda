"""pi-web-tools: a third-party tool pack for pi (``web_fetch`` and ``todo``)."""

__version__ = "0.1.0"
