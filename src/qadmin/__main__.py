"""``python -m qadmin``, the same as the ``qadmin`` script."""

from qadmin.cli import main

main()
