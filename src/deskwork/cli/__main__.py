"""``python -m deskwork.cli``."""

from deskwork.cli import main

raise SystemExit(main())
