"""The built-in themes (dark and light) as theme files in Pi's format."""
