"""``python -m tests.conformance``: the full run (``scripts/conformance``)."""

from tests.conformance.harness import main

main()
