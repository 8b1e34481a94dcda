"""Where Vertex AI is served: the regional host its catalog models name, and the global one."""

CATALOG_BASE = "https://{location}-aiplatform.googleapis.com"  # the location comes from the environment
GLOBAL_HOST = "https://aiplatform.googleapis.com"
