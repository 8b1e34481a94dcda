"""pi-acme-tools: a company policy pack that replaces pi's ``read`` and ``bash`` with guarded versions."""

__version__ = "0.1.0"
