"""How plugins are found and loaded: entry points read through a cache keyed on what is installed
(``discovery``), and the layers built from them, built-in < installed < project < explicit (``plugins``).

The contract a plugin meets is the kernel's (``pi_core.hookspecs``, ``pi_core.registry``); this wing only
decides which plugins take part in a session and in which order.
"""
