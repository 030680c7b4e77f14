"""The diagnostics, one module each; every module defines ``ENTRY`` (see ``registry``)."""
