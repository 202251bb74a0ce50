# A package, so the route experiments' fixtures (API server, Traefik, backend) are package-scoped:
# started once for these tests and stopped after them, not kept for the rest of the scenarios part.
