"""``python -m monitor.cli``: the same as the ``sheet-monitor`` console script."""

from monitor.cli.main import main

main()
