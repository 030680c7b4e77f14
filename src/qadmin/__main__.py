"""``python -m qadmin``, the same as the ``qadmin`` script."""

from qadmin.launch import main

main()
