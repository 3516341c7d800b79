"""``python -m deskwork ...``: the ``deskwork`` command line."""

from deskwork.cli import main

raise SystemExit(main())
